"""Hypothesis strategy for random StateGraphs, and the builder running a spec on either lib.

A spec is plain data (so hypothesis can shrink it): nodes and what each does, static
edges, conditional edges (deterministic path functions of the state), waiting edges,
Send fan-outs, the entry nodes, whether a checkpointer is used and a small recursion limit
so every graph terminates (loops end in GraphRecursionError, which both engines must raise
identically). Node kinds:

* "plain": sets its keys (LastValue, list / int / max / dict-merge reducers);
* "command": returns `Command(update=..., goto=...)`;
* "ask": `interrupt()`s (with a checkpointer: the runs that follow resume it);
* "sub": a compiled two-node subgraph on the same state;
* "flaky": fails its first attempt per input, with a RetryPolicy that retries it.

(A node that keeps failing is left to the scenarios: when it fails, LangGraph cancels the
step's other tasks, and which of them had finished by then is up to timing.)

`RANDOM_SEED` is the run's seed: random per run, printed in pytest's header, pinned with
WARPGRAPH_RANDOM_SEED=<n> to reproduce a failure.
"""

from __future__ import annotations

import operator
import os
import random
from dataclasses import dataclass
from typing import Annotated, TypedDict

from hypothesis import strategies as st

END_ = "END"

RANDOM_SEED = int(os.environ.get("WARPGRAPH_RANDOM_SEED") or random.SystemRandom().randrange(2**32))


class FlakyError(Exception):
    """What a "flaky" node raises once (retried by RetryPolicy's default `retry_on`, which
    leaves ValueError and other programming errors alone)."""


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


def _top(a: int, b: int) -> int:
    return max(a, b)


class RS(TypedDict, total=False):
    log: Annotated[list, operator.add]
    nums: Annotated[list, operator.add]
    x: int
    y: int
    total: Annotated[int, operator.add]
    top: Annotated[int, _top]
    tags: Annotated[dict, _merge]


KEYS = ("x", "y", "nums", "total", "top", "tags")
KINDS = ("plain", "command", "ask", "sub", "flaky")


@dataclass(frozen=True)
class Spec:
    nodes: tuple[str, ...]
    kinds: tuple[str, ...]  # per node, one of KINDS
    sets: tuple[tuple[str, ...], ...]  # per node: keys it writes besides "log"
    gotos: tuple[tuple[str, ...], ...]  # per node: Command targets ("command" nodes)
    entry: tuple[str, ...]
    static: tuple[tuple[str, str], ...]  # (src, dst); dst may be END_
    conditional: tuple[tuple[str, tuple[str, ...], bool], ...]  # (src, targets, use_path_map)
    waiting: tuple[tuple[tuple[str, ...], str], ...]  # (sources, dst)
    sends: tuple[tuple[str, str, int], ...]  # (src, dst, how many Sends)
    checkpointer: bool
    recursion_limit: int


@st.composite
def specs(draw) -> Spec:
    k = draw(st.integers(2, 8))
    nodes = tuple(f"n{i}" for i in range(k))
    # mostly plain nodes; each other kind in about one graph of three
    kinds = tuple(
        draw(st.sampled_from(KINDS)) if draw(st.integers(0, 3)) == 0 else "plain" for _ in nodes
    )
    sets = tuple(
        tuple(draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True))) for _ in nodes
    )
    targets = st.sampled_from(nodes + (END_,))
    gotos = tuple(
        tuple(draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True)))
        if kind == "command"
        else ()
        for kind in kinds
    )
    entry = tuple(draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True)))
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
    send_srcs = draw(st.lists(st.sampled_from(nodes), max_size=2, unique=True))
    sends = tuple((src, draw(st.sampled_from(nodes)), draw(st.integers(1, 3))) for src in send_srcs)
    return Spec(
        nodes=nodes,
        kinds=kinds,
        sets=sets,
        gotos=gotos,
        entry=entry,
        static=static,
        conditional=conditional,
        waiting=waiting,
        sends=sends,
        checkpointer=draw(st.booleans()),
        # (small: Sends in a cycle multiply a step's tasks)
        recursion_limit=draw(st.integers(3, 8)),
    )


def _updates(name: str, index: int, keys: tuple[str, ...], state: dict) -> dict:
    size = len(state.get("log", []))
    out: dict = {"log": [name]}
    for key in keys:
        if key in ("x", "y"):
            out[key] = size * 10 + index
        elif key == "nums":
            out[key] = [size, index]
        elif key == "top":
            out[key] = (size * 7 + index) % 11
        elif key == "tags":
            out[key] = {name: size}
        else:
            out[key] = index + 1
    return out


def _node_fn(lib, spec: Spec, index: int):
    name, kind, keys = spec.nodes[index], spec.kinds[index], spec.sets[index]
    if kind == "command":
        goto = list(spec.gotos[index])

        def command(state):
            return lib.Command(update=_updates(name, index, keys, state), goto=goto)

        return command
    if kind == "ask":

        def ask(state):
            answer = lib.interrupt({"node": name, "seen": len(state.get("log", []))})
            return {**_updates(name, index, keys, state), "log": [f"{name}:{answer}"]}

        return ask
    if kind == "sub":
        child = lib.StateGraph(RS)
        child.add_node("inner1", lambda s: _updates(f"{name}.inner1", index, keys, s))
        child.add_node("inner2", lambda s: {"log": [f"{name}.inner2"], "nums": [index]})
        child.add_edge(lib.START, "inner1")
        child.add_edge("inner1", "inner2")
        child.add_edge("inner2", lib.END)
        return child.compile()
    if kind == "flaky":
        attempts: dict = {}

        def flaky(state):
            key = repr(sorted(state.items(), key=repr))
            attempts[key] = attempts.get(key, 0) + 1
            if attempts[key] == 1:  # (parallel twins share the count: one of them fails)
                raise FlakyError(f"{name} failed")
            return _updates(name, index, keys, state)

        return flaky

    def plain(state):
        return _updates(name, index, keys, state)

    return plain


def _path_fn(targets: tuple[str, ...], end):
    names = [end if t == END_ else t for t in targets]

    def path(state):
        return names[(len(state.get("log", [])) + state.get("x", 0)) % len(names)]

    return path


# no more Sends once the log is this long (a graph whose Sends feed Sends grows its tasks
# geometrically; LangGraph's snapshots of such steps take seconds each)
SEND_LOG_LIMIT = 48


def _send_fn(lib, src: str, dst: str, count: int):
    def fan_out(state):
        size = len(state.get("log", []))
        if size > SEND_LOG_LIMIT:  # Sends in a cycle multiply a step's tasks: stop them
            return []
        return [lib.Send(dst, {"log": [f"{src}>{dst}#{i}"], "x": size + i}) for i in range(count)]

    return fan_out


def build_random(lib, spec: Spec) -> tuple:
    """Build the spec's graph on `lib` -> (graph, inputs, configs) for the harness."""
    g = lib.StateGraph(RS)
    retry = lib.RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)
    for i, (name, kind) in enumerate(zip(spec.nodes, spec.kinds)):
        fn = _node_fn(lib, spec, i)
        if kind == "flaky":
            g.add_node(name, fn, retry_policy=retry)
        else:
            g.add_node(name, fn)
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
    for src, dst, count in spec.sends:
        g.add_conditional_edges(src, _send_fn(lib, src, dst, count))
    graph = g.compile(checkpointer=lib.InMemorySaver() if spec.checkpointer else None)
    config = {"recursion_limit": spec.recursion_limit}
    if spec.checkpointer:
        config["configurable"] = {"thread_id": "r1"}
    inputs: list = [{"log": ["input"], "x": 1}]
    if spec.checkpointer:
        if "ask" in spec.kinds:  # resume what the first run interrupted (if it did)
            inputs.append(lib.Command(resume="yes"))
        # another run on the same thread restores channels from the saver
        inputs.append({"x": 2})
    return graph, inputs, config
