"""Scenarios: control flow (chains, fan-out/in, loops, Send, Command, defer, joins, channels)."""

import itertools
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel

from ._build import linear
from .harness import scenario

CP = (None, "sync", "exit")  # durabilities for checkpointed scenarios


def thread(tid: str = "t1", **extra: Any) -> dict:
    return {"configurable": {"thread_id": tid}, **extra}


class N(TypedDict):
    n: int


class Acc(TypedDict, total=False):
    n: int
    acc: Annotated[int, operator.add]
    items: Annotated[list, operator.add]


def abc_chain(lib, saver, **compile_kw):
    """START -> a -> b -> c -> END over Acc (a adds 1, b doubles), compiled with `saver`
    (the graph of the breakpoint scenarios)."""
    g = linear(
        lib,
        Acc,
        ("a", lambda s: {"n": s["n"] + 1, "items": ["a"]}),
        ("b", lambda s: {"n": s["n"] * 2, "items": ["b"]}),
        ("c", lambda s: {"items": ["c"]}),
        end=True,
    )
    return g.compile(checkpointer=saver, **compile_kw)


def _seed_graph(lib):
    g = linear(
        lib, N, ("a", lambda s: {"n": s["n"] + 1}), ("b", lambda s: {"n": s["n"] * 10}), end=True
    )
    return g


@scenario(durabilities=CP)
def seed(lib):
    g = _seed_graph(lib).compile(checkpointer=lib.InMemorySaver())
    return g, [{"n": 1}, {"n": 1}], thread("t1")


@scenario()
def seed_no_checkpointer(lib):
    return _seed_graph(lib).compile(), [{"n": 1}, {"n": 5}], None


def _chain(lib, k: int):
    g = lib.StateGraph(Acc)
    names = [f"n{i}" for i in range(k)]
    for i, name in enumerate(names):
        g.add_node(name, lambda s, i=i: {"n": s.get("n", 0) + i, "items": [i]})
    g.add_edge(lib.START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], lib.END)
    return g


@scenario(durabilities=CP)
def chain5_saver(lib):
    return _chain(lib, 5).compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()


@scenario()
def chain12_sequence(lib):
    g = lib.StateGraph(Acc)
    fns = []
    for i in range(12):

        def step(s, i=i):
            return {"n": s.get("n", 0) * 2 + i, "items": [f"s{i}"]}

        step.__name__ = f"s{i}"
        fns.append(step)
    g.add_sequence(fns)
    g.add_edge(lib.START, "s0")
    return g.compile(), [{"n": 1, "items": ["in"]}], None


def _fanout(lib, width: int):
    g = lib.StateGraph(Acc)
    g.add_node("src", lambda s: {"n": s["n"] + 1})
    for i in range(width):
        g.add_node(f"p{i}", lambda s, i=i: {"acc": s["n"] * i, "items": [f"p{i}"]})
        g.add_edge("src", f"p{i}")
        g.add_edge(f"p{i}", "join")
    g.add_node("join", lambda s: {"items": [("sum", s["acc"])]})
    g.add_edge(lib.START, "src")
    g.add_edge("join", lib.END)
    return g


@scenario(parallel=True)
def fanout_reducers(lib):
    return _fanout(lib, 4).compile(), [{"n": 1, "acc": 10}], None


@scenario(parallel=True, durabilities=CP)
def fanout_reducers_saver(lib):
    return _fanout(lib, 3).compile(checkpointer=lib.InMemorySaver()), [{"n": 2}, {"n": 3}], thread()


def _loop(lib, with_map: bool):
    g = lib.StateGraph(Acc)
    g.add_node("inc", lambda s: {"n": s["n"] + 1, "items": [s["n"]]})
    g.add_node("post", lambda s: {"items": ["post"]})
    if with_map:
        g.add_conditional_edges(
            "inc", lambda s: "again" if s["n"] < 4 else "done", {"again": "inc", "done": "post"}
        )
    else:
        g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 4 else ["post"])
    g.add_edge(lib.START, "inc")
    g.add_edge("post", lib.END)
    return g


@scenario(durabilities=CP)
def loop_path_map(lib):
    return _loop(lib, True).compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()


@scenario()
def loop_no_path_map(lib):
    return _loop(lib, False).compile(), [{"n": 0}, {"n": 3}], None


@scenario()
def conditional_entry_and_end(lib):
    g = lib.StateGraph(Acc)
    g.add_node("big", lambda s: {"items": ["big"]})
    g.add_node("small", lambda s: {"items": ["small"]})
    g.add_conditional_edges(lib.START, lambda s: "big" if s["n"] > 5 else "small")
    g.add_conditional_edges("small", lambda s: lib.END if s["n"] < 0 else "big")
    return g.compile(), [{"n": 9}, {"n": 1}, {"n": -1}], None


def _map_reduce(lib):
    g = lib.StateGraph(Acc)
    g.add_node("plan", lambda s: {"n": s["n"]})
    g.add_node("work", lambda arg: {"items": [arg["x"] * 2], "acc": arg["x"]})
    g.add_node("reduce", lambda s: {"items": [("total", s["acc"])]})
    g.add_edge(lib.START, "plan")
    g.add_conditional_edges(
        "plan", lambda s: [lib.Send("work", {"x": i}) for i in range(s["n"])], ["work"]
    )
    g.add_edge("work", "reduce")
    g.add_edge("reduce", lib.END)
    return g


@scenario(parallel=True, durabilities=CP)
def map_reduce_send(lib):
    return _map_reduce(lib).compile(checkpointer=lib.InMemorySaver()), [{"n": 4}], thread()


@scenario(parallel=True)
def map_reduce_send_no_checkpointer(lib):
    return _map_reduce(lib).compile(), [{"n": 3}, {"n": 0}], None


@scenario(parallel=True, durabilities=CP)
def command_goto_update(lib):
    Command = lib.Command

    def router(s):
        if s["n"] > 2:
            return Command(goto="high", update={"items": ["router"]})
        return Command(goto=["low", "high"], update={"n": s["n"] + 10})

    g = lib.StateGraph(Acc)
    g.add_node("router", router, destinations=("high", "low"))
    g.add_node("high", lambda s: {"items": ["high"]})
    g.add_node("low", lambda s: Command(update={"items": ["low"]}, goto=lib.Send("high", s)))
    g.add_edge(lib.START, "router")
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 1}, {"n": 5}], thread()


def _defer(lib):
    g = lib.StateGraph(Acc)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b1", lambda s: {"items": ["b1"]})
    g.add_node("b2", lambda s: {"items": ["b2"]})
    g.add_node("b3", lambda s: {"items": ["b3"]})
    g.add_node("final", lambda s: {"items": ["final"], "n": len(s["items"])}, defer=True)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b1")
    g.add_edge("a", "b2")
    g.add_edge("b2", "b3")
    g.add_edge("b1", "final")
    g.add_edge("b3", "final")
    g.add_edge("final", lib.END)
    return g


@scenario(parallel=True, durabilities=CP)
def defer_join(lib):
    return _defer(lib).compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()


@scenario(parallel=True)
def defer_join_no_checkpointer(lib):
    return _defer(lib).compile(), [{"n": 0}], None


def _waiting(lib):
    g = lib.StateGraph(Acc)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_node("b2", lambda s: {"items": ["b2"]})
    g.add_node("c", lambda s: {"items": ["c"], "n": len(s["items"])})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge("b", "b2")
    g.add_edge(["a", "b2"], "c")
    g.add_edge("c", lib.END)
    return g


@scenario(parallel=True, durabilities=CP)
def waiting_edges(lib):
    # Pinned to durability="sync": under the reference's default ("async") durability its
    # background put serialises NamedBarrierValue's *live* set after the next step has added
    # to it, so the step-1 checkpoint nondeterministically shows names that arrived at step 2
    # (see test_reference_join_checkpoint_race). warpgraph snapshots the set at the boundary.
    graph = _waiting(lib).compile(checkpointer=lib.InMemorySaver())
    return graph, [{"n": 0}, {"n": 1}], thread(), {"durability": "sync"}


@scenario(parallel=True)
def waiting_edges_no_checkpointer(lib):
    return _waiting(lib).compile(), [{"n": 0}], None


def _channels_graph(lib):
    class S(TypedDict, total=False):
        n: int
        flash: Annotated[int, lib.EphemeralValue(int)]
        log: Annotated[list, lib.Topic(str, accumulate=True)]
        last: Annotated[list, lib.Topic(str)]

    g = linear(
        lib,
        S,
        ("a", lambda s: {"flash": s["n"], "log": ["a1", "a2"], "last": "a"}),
        ("b", lambda s: {"n": s["n"] + s.get("flash", 100), "log": "b", "last": ["b"]}),
        ("c", lambda s: {"n": s["n"] + s.get("flash", 100)}),
        end=True,
    )
    return g


# Not under the reference's default ("async") durability: LangGraph serialises the
# checkpoint in the background, after the next step may have extended the accumulating
# Topic's live list (LangGraph against itself differs then).
@scenario(durabilities=("sync", "exit"))
def ephemeral_and_topic(lib):
    return _channels_graph(lib).compile(checkpointer=lib.InMemorySaver()), [{"n": 1}], thread()


@scenario()
def ephemeral_and_topic_no_checkpointer(lib):
    return _channels_graph(lib).compile(), [{"n": 1, "log": ["in"]}], None


@dataclass
class DC:
    n: int = 0
    items: Annotated[list, operator.add] = field(default_factory=list)
    note: str = "none"


class PM(BaseModel):
    n: int = 0
    items: Annotated[list, operator.add] = []
    note: str = "none"


def _schema_graph(lib, schema):
    g = linear(
        lib,
        schema,
        ("a", lambda s: {"n": s.n + 1, "items": ["a"]}),
        ("b", lambda s: {"note": f"n={s.n} items={len(s.items)}"}),
        end=True,
    )
    return g


@scenario(durabilities=CP)
def dataclass_state(lib):
    g = _schema_graph(lib, DC).compile(checkpointer=lib.InMemorySaver())
    return g, [{"n": 1}, DC(n=5, items=["x"])], thread()


@scenario(durabilities=CP)
def pydantic_state(lib):
    g = _schema_graph(lib, PM).compile(checkpointer=lib.InMemorySaver())
    return g, [{"n": 1}, PM(n=5, items=["x"])], thread()
