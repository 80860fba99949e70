"""Benchmark graphs, built with the same code on either library (see tests/differential/libs.py).

Each case returns (graph, input, expected_output, units, unit_name); `units` is the number of
super-steps or tasks the per-unit cost is reported over.
"""

from typing import Any

from typing_extensions import TypedDict

# the graphs of `warpgraph bench`'s workloads (defined once there)
from warpgraph._cli.bench.workloads import S3, chain_graph, fanout_graph, loop_graph, wide_graph


class TenKeys(TypedDict):
    """The state of the savers' graph benches: 5 ints and 5 ~20-character strings."""

    n0: int
    n1: int
    n2: int
    n3: int
    n4: int
    s0: str
    s1: str
    s2: str
    s3: str
    s4: str


TEN_KEYS_INPUT: dict[str, Any] = {
    **{f"n{k}": 0 for k in range(5)},
    **{f"s{k}": f"value-{k:06d}-abcdefghij" for k in range(5)},
}


def chain(lib, saver, n: int = 100):
    return (*chain_graph(lib, saver, n), "step")


def loop(lib, saver, m: int = 1000):
    return (*loop_graph(lib, saver, m), "step")


def fanout(lib, saver, n: int = 1000):
    return (*fanout_graph(lib, saver, n), "task")


def wide(lib, saver, n: int = 100):
    return (*wide_graph(lib, saver, n), "step")


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
