"""Hypothesis strategy for random StateGraphs, and the builder running a spec on either lib.

A spec is plain data (so hypothesis can shrink it): nodes, the keys each node sets, static
edges, conditional edges (deterministic path functions of the state), waiting edges, the entry
nodes, whether a checkpointer is used and a small recursion limit so every graph terminates
(loops end in GraphRecursionError, which both engines must raise identically).
"""

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

from hypothesis import strategies as st

END_ = "END"


class RS(TypedDict, total=False):
    log: Annotated[list, operator.add]
    nums: Annotated[list, operator.add]
    x: int
    y: int
    total: Annotated[int, operator.add]


@dataclass(frozen=True)
class Spec:
    nodes: tuple[str, ...]
    sets: tuple[tuple[str, ...], ...]  # per node: keys it writes besides "log"
    entry: tuple[str, ...]
    static: tuple[tuple[str, str], ...]  # (src, dst); dst may be END_
    conditional: tuple[tuple[str, tuple[str, ...], bool], ...]  # (src, targets, use_path_map)
    waiting: tuple[tuple[tuple[str, ...], str], ...]  # (sources, dst)
    checkpointer: bool
    recursion_limit: int


@st.composite
def specs(draw) -> Spec:
    k = draw(st.integers(3, 8))
    nodes = tuple(f"n{i}" for i in range(k))
    keys = st.sampled_from(["x", "y", "nums", "total"])
    sets = tuple(tuple(draw(st.lists(keys, max_size=2, unique=True))) for _ in nodes)
    entry = tuple(draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True)))
    targets = st.sampled_from(nodes + (END_,))
    static = tuple(draw(st.lists(st.tuples(st.sampled_from(nodes), targets), max_size=k + 2)))
    cond_srcs = draw(st.lists(st.sampled_from(nodes), max_size=3, unique=True))
    conditional = tuple(
        (
            src,
            tuple(draw(st.lists(targets, min_size=1, max_size=3, unique=True))),
            draw(st.booleans()),
        )
        for src in cond_srcs
    )
    waiting = tuple(
        (
            tuple(draw(st.lists(st.sampled_from(nodes), min_size=2, max_size=3, unique=True))),
            draw(st.sampled_from(nodes)),
        )
        for _ in range(draw(st.integers(0, 2)))
    )
    return Spec(
        nodes=nodes,
        sets=sets,
        entry=entry,
        static=static,
        conditional=conditional,
        waiting=waiting,
        checkpointer=draw(st.booleans()),
        recursion_limit=draw(st.integers(3, 12)),
    )


def _node_fn(name: str, index: int, keys: tuple[str, ...]):
    def fn(state):
        size = len(state.get("log", []))
        out: dict = {"log": [name]}
        for key in keys:
            if key in ("x", "y"):
                out[key] = size * 10 + index
            elif key == "nums":
                out[key] = [size, index]
            else:
                out[key] = index + 1
        return out

    return fn


def _path_fn(targets: tuple[str, ...], end):
    names = [end if t == END_ else t for t in targets]

    def path(state):
        return names[(len(state.get("log", [])) + state.get("x", 0)) % len(names)]

    return path


def build_random(lib, spec: Spec) -> tuple:
    """Build the spec's graph on `lib` -> (graph, inputs, configs) for the harness."""
    g = lib.StateGraph(RS)
    for i, (name, keys) in enumerate(zip(spec.nodes, spec.sets)):
        g.add_node(name, _node_fn(name, i, keys))
    for name in spec.entry:
        g.add_edge(lib.START, name)
    for src, dst in spec.static:
        g.add_edge(src, lib.END if dst == END_ else dst)
    for src, targets, use_map in spec.conditional:
        path = _path_fn(targets, lib.END)
        if use_map:
            mapping = {t: (lib.END if t == END_ else t) for t in targets}
            keyed = [lib.END if t == END_ else t for t in targets]
            g.add_conditional_edges(
                src, lambda s, p=path, k=keyed, t=targets: t[k.index(p(s))], mapping
            )
        else:
            g.add_conditional_edges(src, path)
    for sources, dst in spec.waiting:
        g.add_edge(list(sources), dst)
    graph = g.compile(checkpointer=lib.InMemorySaver() if spec.checkpointer else None)
    config = {"recursion_limit": spec.recursion_limit}
    if spec.checkpointer:
        config["configurable"] = {"thread_id": "r1"}
    inputs: list = [{"log": ["input"], "x": 1}]
    if spec.checkpointer:  # a second run on the same thread restores channels from the saver
        inputs.append({"x": 2})
    return graph, inputs, config
