"""Snapshots read straight from a checkpoint (`pregel/_checkpoint._plain_snapshot`): the
same tasks and values as restoring the checkpoint in an Engine, on every checkpoint of
threads of several graph shapes; graphs or checkpoints it cannot read go to the Engine,
and with the fast paths off every snapshot does."""

from __future__ import annotations

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel import _checkpoint
from warpgraph.types import Command, Send, interrupt


class S(TypedDict, total=False):
    n: int
    total: Annotated[int, operator.add]
    items: Annotated[list, operator.add]
    note: str


def _loop():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s.get("n", 0) + 1, "total": 1})
    g.add_node("b", lambda s: {"items": [s["n"]]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s["n"] % 2 else "a", ["a", "b"])
    g.add_conditional_edges("b", lambda s: "a" if s["n"] < 6 else END, ["a", END])
    return g


def _asking():
    g = StateGraph(S)
    g.add_node("prep", lambda s: {"n": 1})
    g.add_node("ask", lambda s: {"note": interrupt("which?")})
    g.add_node("done", lambda s: {"total": 5})
    g.add_edge(START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", "done")
    g.add_edge("done", END)
    return g


def _fanout():  # Sends and a join: the Engine's job
    g = StateGraph(S)
    g.add_node("split", lambda s: {"n": 0})
    g.add_node("work", lambda s: {"items": [s.get("n", 0)]})
    g.add_node("other", lambda s: {"total": 2})
    g.add_node("join", lambda s: {"note": "joined"})
    g.add_edge(START, "split")
    g.add_conditional_edges("split", lambda s: [Send("work", {"n": i}) for i in range(3)])
    g.add_edge("split", "other")
    g.add_edge(["work", "other"], "join")
    g.add_edge("join", END)
    return g


def _compare(graph, saver, config, monkeypatch) -> int:
    """Every checkpoint of the thread read both ways; returns how many the plain read did."""
    plan = _checkpoint._snapshot_plan(graph)
    plain = 0
    for tup in saver.list(config):
        cp = tup.checkpoint
        step = tup.metadata.get("step", -1) + 1
        tasks, engine = graph._engine_snapshot(cp, "", step, tup.pending_writes, {}, False)
        values = _checkpoint.read_channels(engine, graph.stream_channels_asis)
        found = None if plan is None else _checkpoint._plain_snapshot(plan, cp, "", step)
        if found is not None:
            plain += 1
            got_tasks, got_values = found
            assert [(t.id, t.name, t.path, t.triggers) for t in got_tasks.values()] == [
                (t.id, t.name, t.path, t.triggers) for t in tasks.values()
            ]
            assert got_values == values
        for live in (False, True):  # the public snapshots: the same with the fast paths off
            fast = graph._prepare_snapshot(tup.config, tup, live=live)
            with monkeypatch.context() as m:
                m.setattr(_checkpoint, "FAST_PATHS", False)
                assert graph._prepare_snapshot(tup.config, tup, live=live) == fast
    return plain


def test_plain_reads_agree_with_the_engine_on_every_checkpoint(monkeypatch):
    saver = InMemorySaver()
    graph = _loop().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "loop"}}
    graph.invoke({"n": 0}, config)
    graph.update_state(config, {"note": "x"}, as_node="b")
    assert _compare(graph, saver, config, monkeypatch) > 10

    asking = _asking().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "ask"}}
    asking.invoke({"n": 0}, config)
    assert asking.get_state(config).next == ("ask",)
    asking.invoke(Command(resume="this"), config)
    assert _compare(asking, saver, config, monkeypatch) > 3


def test_sends_and_barriers_go_to_the_engine():
    saver = InMemorySaver()
    graph = _fanout().compile(checkpointer=saver)
    assert _checkpoint._snapshot_plan(graph) is None  # (a join's barrier triggers a node)
    config = {"configurable": {"thread_id": "f"}}
    graph.invoke({"n": 0}, config)
    assert graph.get_state(config).values["note"] == "joined"


def test_a_reducer_channel_without_a_stored_value_reads_its_initial_value():
    graph = _loop().compile(checkpointer=InMemorySaver())
    plan = _checkpoint._snapshot_plan(graph)
    assert plan is not None and {"total", "items"} <= set(plan[2])
    cp = {
        "v": 4,
        "id": "1f0c0000-0000-6000-8000-000000000000",
        "ts": "",
        "channel_values": {"n": 1},
        "channel_versions": {"n": 1},
        "versions_seen": {},
    }
    _, values = _checkpoint._plain_snapshot(plan, cp, "", 0)
    assert values == {"n": 1, "total": 0, "items": []}
    again = _checkpoint._plain_snapshot(plan, cp, "", 0)[1]
    assert again["items"] is not values["items"]  # (a fresh initial value each time)
    assert cp["channel_values"] == {"n": 1}  # (the checkpoint is left as it was)


def _no_engine(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an Engine was restored")

    monkeypatch.setattr(_checkpoint._engine, "Engine", refuse)


@pytest.mark.fast_paths
def test_get_state_and_history_restore_no_engine(monkeypatch):
    saver = InMemorySaver()
    graph = _loop().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    _no_engine(monkeypatch)
    snap = graph.get_state(config)
    assert snap.values["n"] == 7 and snap.next == ()
    history = list(graph.get_state_history(config, limit=5))
    assert [h.metadata["step"] for h in history] == [11, 10, 9, 8, 7]


def test_with_fast_paths_off_every_snapshot_restores_an_engine(monkeypatch):
    saver = InMemorySaver()
    graph = _loop().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    monkeypatch.setattr(_checkpoint, "FAST_PATHS", False)
    _no_engine(monkeypatch)
    with pytest.raises(AssertionError, match="an Engine was restored"):
        graph.get_state(config)


def test_the_plan_follows_the_output_keys():
    graph = _loop().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    graph.invoke({"n": 0}, config)
    assert set(graph.get_state(config).values) == {"n", "total", "items"}
    graph.stream_channels = ["n", "total"]
    assert graph.get_state(config).values == {"n": 7, "total": 7}
