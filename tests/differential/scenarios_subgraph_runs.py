"""Scenarios: one thread holding several runs of a subgraph (their namespaces differ only
by random task ids, which the checkpoint rows must not be ordered by)."""

from typing import TypedDict

from .harness import scenario
from .scenarios_core import CP, Acc, thread
from .scenarios_features import _subgraph_parent


@scenario(subgraphs=True, durabilities=CP)
def subgraph_two_runs_one_thread(lib):
    """Two invocations on one thread: two subgraph namespaces, sub:<task id 1>, sub:<2>."""
    return _subgraph_parent(lib, lib.InMemorySaver()), [{"n": 1}, {"n": 2}, {"n": 3}], thread()


def _looping_parent(lib):
    class Sub(TypedDict, total=False):
        n: int
        items: list

    child = lib.StateGraph(Sub)
    child.add_node("triple", lambda s: {"n": s["n"] * 3, "items": [f"t{s['n']}"]})
    child.add_edge(lib.START, "triple")
    child.add_edge("triple", lib.END)

    g = lib.StateGraph(Acc)
    g.add_node("pre", lambda s: {"n": s["n"] + 1})
    g.add_node("sub", child.compile())
    g.add_node("post", lambda s: {"items": ["post"]})
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "sub")
    g.add_conditional_edges("sub", lambda s: "sub" if s["n"] < 20 else "post", ["sub", "post"])
    g.add_edge("post", lib.END)
    return g.compile(checkpointer=lib.InMemorySaver())


@scenario(subgraphs=True, durabilities=CP)
def subgraph_loop_runs_it_three_times(lib):
    """One run enters the subgraph node three times (three namespaces), then a second run
    on the same thread does it again."""
    return _looping_parent(lib), [{"n": 1}, {"n": 0}], thread()
