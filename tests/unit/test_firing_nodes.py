"""`GraphSpec.firing_nodes` (the triggering rule over a stored checkpoint, no Engine) against
an Engine restored from the same checkpoint: the same PULL tasks' nodes, in the same order,
on every checkpoint of threads of several graph shapes (chains, conditional loops, joins,
parallel branches), int and str versions, and edited versions_seen."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated

import pytest
from typing_extensions import TypedDict
from warpgraph._core import Engine
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.constants import END, START
from warpgraph.graph import StateGraph


class S(TypedDict):
    n: Annotated[int, operator.add]
    log: Annotated[list, operator.add]


def _node(name: str):
    def run(s: S) -> dict:
        return {"n": 1, "log": [name]}

    return run


def chain() -> StateGraph:
    g = StateGraph(S)
    for x in "abc":
        g.add_node(x, _node(x))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g


def loop() -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", _node("a"))
    g.add_node("b", _node("b"))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s["n"] < 6 else END, ["b", END])
    g.add_edge("b", "a")
    return g


def join() -> StateGraph:
    g = StateGraph(S)
    for x in ("a", "b", "c", "d", "e"):
        g.add_node(x, _node(x))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge("c", "d")
    g.add_edge(["b", "d"], "e")
    g.add_edge("e", END)
    return g


def _engine_nodes(spec, cp) -> list[str]:
    engine = Engine(spec, cp)
    engine.set_updated_channels([])  # (a snapshot scans every node, as firing_nodes does)
    return [
        name
        for _, name, path, _, _ in engine.prepare_next_tasks(cp["id"], "", 0)
        if path[0] != "__pregel_push"
    ]


def _available(spec, cp) -> set[str]:
    """The channels holding a value (a join's barrier holds one only once every source
    arrived: the caller decides availability; firing_nodes applies the rule)."""
    engine = Engine(spec, cp)
    return {c for c in cp["channel_values"] if engine.is_available(c)}


def _checkpoints(builder: StateGraph) -> tuple:
    app = builder.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": str(uuid.uuid4())}}
    app.invoke({"n": 0, "log": []}, cfg)
    return app, [s.config for s in app.get_state_history(cfg)]


@pytest.mark.parametrize("shape", [chain, loop, join])
def test_firing_nodes_match_the_engine_on_every_checkpoint(shape) -> None:
    app, configs = _checkpoints(shape())
    spec, names = app._graph_spec, list(app.nodes)
    assert len(configs) > 3
    fired_any = False
    for cfg in configs:
        cp = app.checkpointer.get_tuple(cfg).checkpoint
        got = [
            names[i]
            for i in spec.firing_nodes(
                cp["channel_versions"], cp["versions_seen"], _available(spec, cp)
            )
        ]
        assert got == _engine_nodes(spec, cp), cfg
        fired_any |= bool(got)
    assert fired_any


def test_edited_seen_versions_and_int_versions() -> None:
    app, configs = _checkpoints(join())
    spec, names = app._graph_spec, list(app.nodes)
    cp = app.checkpointer.get_tuple(configs[-2]).checkpoint  # (after the input step)
    values = _available(spec, cp)
    base = [
        names[i] for i in spec.firing_nodes(cp["channel_versions"], cp["versions_seen"], values)
    ]
    assert base == _engine_nodes(spec, cp)
    # forget what a triggered node saw: it fires again wherever its trigger holds a value
    for node in list(cp["versions_seen"]):
        edited = {
            **cp,
            "versions_seen": {k: v for k, v in cp["versions_seen"].items() if k != node},
        }
        got = [
            names[i]
            for i in spec.firing_nodes(edited["channel_versions"], edited["versions_seen"], values)
        ]
        assert got == _engine_nodes(spec, edited)
    # int versions compare as ints
    as_int = {k: i + 1 for i, k in enumerate(cp["channel_versions"])}
    seen = {n: dict.fromkeys(s, 1) for n, s in cp["versions_seen"].items()}
    edited = {**cp, "channel_versions": as_int, "versions_seen": seen}
    got = [names[i] for i in spec.firing_nodes(as_int, seen, values)]
    assert got == _engine_nodes(spec, edited)


def test_no_versions_fire_nothing_and_mixed_types_raise() -> None:
    app, _ = _checkpoints(chain())
    spec = app._graph_spec
    assert spec.firing_nodes({}, {}, set()) == []
    with pytest.raises(TypeError):
        spec.firing_nodes({"branch:to:a": 2}, {"a": {"branch:to:a": "x"}}, {"branch:to:a"})


def test_a_node_whose_single_read_channel_is_empty_gets_no_task() -> None:
    from warpgraph.channels import LastValue
    from warpgraph.pregel import Pregel
    from warpgraph.pregel._read import PregelNode
    from warpgraph.pregel._write import ChannelWrite, ChannelWriteEntry

    reads_b = PregelNode(
        channels="b", triggers=["a"], writers=[ChannelWrite([ChannelWriteEntry("c")])]
    )
    reads_a = PregelNode(
        channels="a", triggers=["a"], writers=[ChannelWrite([ChannelWriteEntry("b")])]
    )
    app = Pregel(
        nodes={"reads_b": reads_b, "reads_a": reads_a},
        channels={"a": LastValue(int), "b": LastValue(int), "c": LastValue(int)},
        input_channels="a",
        output_channels="c",
    )
    spec, names = app._graph_spec, list(app.nodes)
    versions = {"a": "00000000000000000000000000000001.0.5"}
    got = [names[i] for i in spec.firing_nodes(versions, {}, {"a"})]
    cp = {
        "v": 4,
        "id": "1ef4f797-8335-6428-8001-8a1503f9b875",
        "ts": "",
        "channel_values": {"a": 1},
        "channel_versions": versions,
        "versions_seen": {},
    }
    assert got == _engine_nodes(spec, cp) == ["reads_a"]  # (reads_b: "b" holds nothing)
    both = [names[i] for i in spec.firing_nodes(versions, {}, {"a", "b"})]
    assert both == ["reads_b", "reads_a"]
