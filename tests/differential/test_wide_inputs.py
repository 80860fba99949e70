"""Node inputs of wide states (the engine keeps an input dict per read list between steps
and hands each task a copy): compared with the reference step by step.

What must hold: every task gets its own dict (a node mutating its input changes nothing
else), values are the current ones, and keys appear in the state's order exactly when the
channel has a value (keys set later, ephemeral keys that come and go, channels that are
not plain values)."""

from __future__ import annotations

import operator
from itertools import pairwise
from typing import Annotated, Any, TypedDict

from .libs import get_lib

KEYS = [f"k{i}" for i in range(10)]


class Wide(TypedDict, total=False):
    k0: int
    k1: int
    k2: int
    k3: int
    k4: int
    k5: int
    k6: int
    k7: int
    k8: int
    k9: int
    seen: Annotated[list, operator.add]


def _run(name: str, saver: bool) -> Any:
    lib = get_lib(name)

    def node(i: int):
        def run(state: dict) -> dict:
            snapshot = [(k, state[k]) for k in state if k != "seen"]
            state["k0"] = -1  # mutating the input must not leak anywhere
            state.pop("k1", None)
            state["junk"] = 1
            out: dict = {"seen": [snapshot]}
            if i % 3 == 0:
                out[f"k{(i * 7) % 10}"] = i  # keys set for the first time, out of order
            if i == 5:
                out["k0"] = 50
            return out

        return run

    g = lib.StateGraph(Wide)
    names = [f"n{i}" for i in range(8)]
    for i, n in enumerate(names):
        g.add_node(n, node(i))
    g.add_edge(lib.START, names[0])
    for a, b in pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], lib.END)
    graph = g.compile(checkpointer=lib.InMemorySaver() if saver else None)
    cfg = {"configurable": {"thread_id": "w"}} if saver else None
    first = graph.invoke({"k2": 2, "k5": 5, "seen": []}, cfg)
    second = graph.invoke({"k1": 1}, cfg) if saver else None
    return first, second


def test_wide_inputs_match_reference() -> None:
    for saver in (False, True):
        assert _run("warpgraph", saver) == _run("langgraph", saver)


def _fan(name: str) -> Any:
    """Parallel tasks reading the same wide state each get their own dict."""
    lib = get_lib(name)

    def reader(i: int):
        def run(state: dict) -> dict:
            state.clear()
            return {"seen": [(i, len(state))]}

        return run

    def check(state: dict) -> dict:
        return {"seen": [sorted(k for k in state if k != "seen")]}

    g = lib.StateGraph(Wide)
    g.add_node("src", lambda s: {k: 1 for k in KEYS})
    for i in range(4):
        g.add_node(f"r{i}", reader(i))
        g.add_edge("src", f"r{i}")
    g.add_node("check", check)
    g.add_edge([f"r{i}" for i in range(4)], "check")
    g.add_edge(lib.START, "src")
    g.add_edge("check", lib.END)
    return g.compile().invoke({"seen": []})


def test_parallel_tasks_get_their_own_input() -> None:
    out = _fan("warpgraph")
    assert out == _fan("langgraph")
    assert out["seen"][-1] == KEYS
