"""The seed example, asserted on each library, plus its differential comparison.

Expected values were observed on the reference (langgraph 1.2.24) and follow from first
principles: START->a->b->END with a: n+1, b: n*10 on input n=1.
"""

from .harness import REGISTRY, compare_sync
from .scenarios_core import _seed_graph, thread


def test_seed_values(lib):
    saver = lib.InMemorySaver()
    graph = _seed_graph(lib).compile(checkpointer=saver)
    cfg = thread("t1")
    assert list(graph.stream({"n": 1}, cfg, stream_mode="updates")) == [
        {"a": {"n": 2}},
        {"b": {"n": 20}},
    ]
    tuples = list(saver.list(cfg))[::-1]  # oldest first
    assert [t.metadata["step"] for t in tuples] == [-1, 0, 1, 2]
    assert [t.metadata["source"] for t in tuples] == ["input", "loop", "loop", "loop"]
    history = list(graph.get_state_history(cfg))[::-1]
    assert [s.next for s in history] == [("__start__",), ("a",), ("b",), ()]
    assert graph.get_state(cfg).values == {"n": 20}
    # a second invoke continues the thread from the saved state
    assert graph.invoke({"n": 1}, cfg) == {"n": 20}
    steps = [t.metadata["step"] for t in saver.list(cfg)][::-1]
    assert steps == [-1, 0, 1, 2, 3, 4, 5, 6]
    assert tuples[0].checkpoint["channel_values"] == {"__start__": {"n": 1}}
    assert tuples[-1].checkpoint["updated_channels"] == ["n"]


def test_seed_differential():
    ref = compare_sync(REGISTRY["seed"], "updates", None)
    assert ref["calls"][0]["chunks"] == [{"a": {"n": 2}}, {"b": {"n": 20}}]


def _join_checkpoints(lib, durability):
    import operator
    from typing import Annotated, TypedDict

    class S(TypedDict):
        log: Annotated[list, operator.add]

    g = lib.StateGraph(S)
    for name in ("a", "b1", "b2", "c"):
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b1")
    g.add_edge("b1", "b2")
    g.add_edge(["a", "b2"], "c")
    g.add_edge("c", lib.END)
    saver = lib.InMemorySaver()
    cfg = {"configurable": {"thread_id": "t"}}
    g.compile(checkpointer=saver).invoke({"log": []}, cfg, durability=durability)
    return {
        c.metadata["step"]: c.checkpoint["channel_values"].get("join:a+b2:c")
        for c in saver.list(cfg)
    }


def test_join_barrier_is_snapshotted_at_the_step_boundary():
    """Only 'a' has arrived after step 1, whatever the durability.

    The reference agrees under durability="sync"; under its default "async" durability it
    serialises the barrier's live set from a background thread, after step 2 has added 'b2'
    (a race in the reference, which the differential scenario avoids by pinning "sync").
    """
    from .libs import get_lib

    wg = get_lib("warpgraph")
    ref = get_lib("langgraph")
    for durability in ("sync", "async"):
        assert _join_checkpoints(wg, durability)[1] == {"a"}
    assert _join_checkpoints(ref, "sync")[1] == {"a"}
