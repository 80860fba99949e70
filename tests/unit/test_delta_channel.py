"""DeltaChannel: the channel contract, the savers' histories, cadence and the loop's use."""

import sqlite3
import uuid
from typing import Annotated, Any, TypedDict

import pytest
from warpgraph._internal._typing import MISSING
from warpgraph.channels import DeltaChannel
from warpgraph.checkpoint.base import BaseCheckpointSaver
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.serde.types import _DeltaSnapshot
from warpgraph.errors import EmptyChannelError, InvalidUpdateError
from warpgraph.graph import START, StateGraph
from warpgraph.graph.state import _get_channel
from warpgraph.pregel import _checkpoint
from warpgraph.pregel._checkpoint import delta_channels_to_snapshot, exit_delta_task_id
from warpgraph.types import Overwrite


def extend(current: list, writes: list) -> list:
    out = list(current)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


# ------------------------------------------------------------------ the channel
def test_channel_folds_batches_and_overwrites() -> None:
    ch = DeltaChannel(extend).from_checkpoint(MISSING)
    assert ch.get() == []
    assert ch.update([[1], 2]) is True
    assert ch.update([]) is False
    assert ch.get() == [1, 2]
    ch.update([Overwrite([9])])
    assert ch.get() == [9]
    with pytest.raises(InvalidUpdateError, match="only one Overwrite"):
        ch.update([Overwrite([1]), Overwrite([2])])
    assert ch.checkpoint() is MISSING


def test_channel_restores_and_replays() -> None:
    spec = DeltaChannel(extend)
    with pytest.raises(EmptyChannelError):
        spec.get()
    assert spec.from_checkpoint(_DeltaSnapshot([1])).get() == [1]
    assert spec.from_checkpoint([7]).get() == [7]  # a pre-delta value
    ch = spec.from_checkpoint(_DeltaSnapshot([1]))
    ch.replay_writes([("t", "k", [2]), ("t", "k", Overwrite([3])), ("t", "k", [4])])
    assert ch.get() == [3, 4]
    with pytest.raises(ValueError, match="positive int"):
        DeltaChannel(extend, snapshot_frequency=0)


def test_channel_type_from_annotation() -> None:
    ch = _get_channel("files", Annotated[dict[str, int], DeltaChannel(extend)])
    assert ch.typ is dict
    assert ch.key == "files"
    assert ch.from_checkpoint(MISSING).get() == {}
    assert ch == DeltaChannel(extend)
    assert ch != DeltaChannel(extend, snapshot_frequency=3)


def test_cadence_predicate_and_exit_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    ch = DeltaChannel(extend, snapshot_frequency=3).from_checkpoint(None)
    assert delta_channels_to_snapshot({"x": ch}, {"x": (3, 0)}) == {"x"}
    assert delta_channels_to_snapshot({"x": ch}, {"x": (2, 0)}) == set()
    assert delta_channels_to_snapshot({"x": ch}, {"x": (3, 0)}, {}) == set()  # no version
    monkeypatch.setattr(_checkpoint, "DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", 4)
    assert delta_channels_to_snapshot({"x": ch}, {"x": (0, 4)}) == {"x"}
    tid = str(uuid.uuid4())
    ids = [exit_delta_task_id(step, tid) for step in (0, 1, 12)]
    assert ids == sorted(ids)
    assert all(str(uuid.UUID(i)) == i for i in ids)
    assert ids[1].startswith("00000001-")
    assert exit_delta_task_id(0, "00000000-0000-0000-0000-000000000000") != (
        "00000000-0000-0000-0000-000000000000"
    )


# ------------------------------------------------------------------ graphs on savers
def _graph(saver: Any, freq: int = 2) -> Any:
    class S(TypedDict):
        items: Annotated[list, DeltaChannel(extend, snapshot_frequency=freq)]

    g = StateGraph(S)
    g.add_node("a", lambda s: {"items": [f"a{len(s['items'])}"]})
    g.add_node("b", lambda s: {"items": [f"b{len(s['items'])}"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g.compile(checkpointer=saver)


def _sqlite() -> Any:
    from warpgraph.checkpoint.sqlite import SqliteSaver

    return SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))


class _BaseWalk(InMemorySaver):
    """The base class's history walk (get_tuple up the parents), not the override."""

    get_delta_channel_history = BaseCheckpointSaver.get_delta_channel_history


@pytest.mark.parametrize("make", [InMemorySaver, _sqlite, _BaseWalk])
def test_states_read_back_on_each_saver(make: Any) -> None:
    saver = make()
    app = _graph(saver)
    c = {"configurable": {"thread_id": "t"}}
    app.invoke({"items": ["x"]}, c)
    app.invoke({"items": ["y"]}, c)
    expected = ["x", "a1", "b2", "y", "a4", "b5"]
    assert app.get_state(c).values == {"items": expected}
    # every checkpoint's state, rebuilt from its own history, is a prefix of the last
    for snap in app.get_state_history(c):
        got = snap.values.get("items", [])
        assert got == expected[: len(got)]
    head = saver.get_tuple(c)
    stored = [
        t
        for t in saver.list(c)
        if isinstance(t.checkpoint["channel_values"].get("items"), _DeltaSnapshot)
    ]
    assert stored, "the cadence stores snapshots"
    assert "counters_since_delta_snapshot" in head.metadata or stored[0].config == head.config


def test_history_of_a_new_thread_is_empty() -> None:
    saver = InMemorySaver()
    c = {"configurable": {"thread_id": "none", "checkpoint_ns": ""}}
    assert saver.get_delta_channel_history(config=c, channels=["x"]) == {"x": {"writes": []}}
    assert saver.get_delta_channel_history(config=c, channels=[]) == {}


def test_exit_durability_first_run_stores_writes_on_a_stub() -> None:
    saver = InMemorySaver()
    app = _graph(saver, freq=100)
    c = {"configurable": {"thread_id": "x"}}
    app.invoke({"items": ["in"]}, c, durability="exit")
    listed = list(saver.list(c))
    assert [t.metadata["step"] for t in listed] == [2, -2]  # the final one, on the stub
    assert {w[1] for w in listed[1].pending_writes} == {"items"}
    assert app.get_state(c).values == {"items": ["in", "a1", "b2"]}


def test_messages_get_stable_ids() -> None:
    from langchain_core.messages import HumanMessage
    from warpgraph.graph.message import _messages_delta_reducer

    class S(TypedDict):
        messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]

    g = StateGraph(S)
    g.add_node("a", lambda s: {})
    g.add_edge(START, "a")
    app = g.compile(checkpointer=InMemorySaver())
    c = {"configurable": {"thread_id": "m"}}
    app.invoke({"messages": [HumanMessage("hi"), {"role": "user", "content": "there"}]}, c)
    first = [m.id for m in app.get_state(c).values["messages"]]
    assert all(first) and first == [m.id for m in app.get_state(c).values["messages"]]


def test_graphs_without_delta_channels_keep_no_delta_state() -> None:
    from warpgraph.pregel._loop import PregelLoop

    class S(TypedDict):
        n: int

    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    app = g.compile()
    assert app._delta_channels == {}
    loop = PregelLoop(
        app,
        {"n": 0},
        config={"configurable": {}, "recursion_limit": 5},
        checkpointer=None,
        store=None,
        stream=None,
        output_keys=["n"],
        stream_keys=["n"],
        interrupt_before=(),
        interrupt_after=(),
        durability="async",
    )
    assert loop._delta is None
