"""Benchmark graphs, built with the same code on either library (see tests/differential/libs.py).

Each case returns (graph, input, expected_output, units, unit_name); `units` is the number of
super-steps or tasks the per-unit cost is reported over.
"""

from typing import TypedDict

# the state shapes of `warpgraph bench`'s workloads (defined once there)
from warpgraph._cli.bench.workloads import S3, Fan


def chain(lib, saver, n: int = 100):
    g = lib.StateGraph(S3)
    for i in range(n):
        g.add_node(f"n{i}", lambda s: {"a": s["a"] + 1})
    g.add_edge(lib.START, "n0")
    for i in range(n - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    g.add_edge(f"n{n - 1}", lib.END)
    expected = {"a": n, "b": 0, "c": 0}
    return g.compile(checkpointer=saver), {"a": 0, "b": 0, "c": 0}, expected, n + 1, "step"


def loop(lib, saver, m: int = 1000):
    g = lib.StateGraph(S3)
    g.add_node("tick", lambda s: {"a": s["a"] + 1})
    g.add_edge(lib.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["a"] < m else lib.END)
    expected = {"a": m, "b": 0, "c": 0}
    return g.compile(checkpointer=saver), {"a": 0, "b": 0, "c": 0}, expected, m + 1, "step"


def fanout(lib, saver, n: int = 1000):
    g = lib.StateGraph(Fan)
    g.add_node("src", lambda s: {"a": s["a"] + 1})
    g.add_node("join", lambda s: {"a": s["acc"]})
    for i in range(n):
        g.add_node(f"p{i}", lambda s: {"acc": 1})
        g.add_edge("src", f"p{i}")
    g.add_edge([f"p{i}" for i in range(n)], "join")
    g.add_edge(lib.START, "src")
    g.add_edge("join", lib.END)
    return g.compile(checkpointer=saver), {"a": 0, "acc": 0}, {"a": n, "acc": n}, n + 3, "task"


def wide(lib, saver, n: int = 100):
    W = TypedDict("W", {f"k{i}": int for i in range(n)})
    g = lib.StateGraph(W)
    for i in range(n):
        g.add_node(f"n{i}", lambda s, i=i: {f"k{i}": s[f"k{i}"] + i})
    g.add_edge(lib.START, "n0")
    for i in range(n - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    g.add_edge(f"n{n - 1}", lib.END)
    inp = {f"k{i}": 1 for i in range(n)}
    return g.compile(checkpointer=saver), inp, {f"k{i}": 1 + i for i in range(n)}, n + 1, "step"


def small3(lib, saver):
    g = lib.StateGraph(S3)
    g.add_node("x", lambda s: {"a": s["a"] + 1})
    g.add_node("y", lambda s: {"b": s["a"] * 2})
    g.add_node("z", lambda s: {"c": s["a"] + s["b"]})
    g.add_edge(lib.START, "x")
    g.add_edge("x", "y")
    g.add_edge("y", "z")
    g.add_edge("z", lib.END)
    return (
        g.compile(checkpointer=saver),
        {"a": 1, "b": 0, "c": 0},
        {"a": 2, "b": 4, "c": 6},
        1,
        "invoke",
    )


CASES = {
    "chain100": chain,
    "loop1000": loop,
    "fanout1000": fanout,
    "wide100": wide,
    "small3": small3,
}
# speedup targets (reference median / warpgraph median) the README reports against
TARGETS = {
    ("chain100", "none"): 30,
    ("loop1000", "none"): 30,
    ("wide100", "none"): 30,
    ("fanout1000", "none"): 20,
    **{(c, "memory"): 10 for c in CASES},
}
