"""Scenarios: seeded programs that draw from Python's global `random` in their nodes.

A node's draw depends on every draw made before it: the other nodes' and the engine's own
(LangGraph's checkpoint ids take 48 bits from the global `random` per checkpoint its loop
creates, saved or not; InMemorySaver's channel versions take a `random()` per step). So
these graphs compute LangGraph's values only if warpgraph makes the same draws and starts
a step's tasks in LangGraph's order: parallel nodes, Send fan-outs, subgraphs (as a node,
beside a sibling, and invoked inside a node), loops, interrupts and resumes, a step
timeout (every task on a worker thread), with and without a saver, sync and async.

Each scenario seeds `random` when it is built, right before its calls run. The values drawn are
compared exactly; the order in which a step's parallel tasks *finish* (the order of their
stream chunks) is not LangGraph's own from run to run (with a saver its executor also runs
the checkpoint puts), so the scenarios are marked `parallel`. Parallel tasks start in
submission order, but a thread switch forced in the middle of a node could let a later
task draw first on either library; `test_order.py` runs these scenarios with a long switch
interval, so that only a node that blocks lets another thread run.
"""

from __future__ import annotations

import asyncio
import operator
import random
from typing import Annotated, TypedDict

from ._build import linear
from .harness import Scenario
from .scenarios_core import CP, thread

ORDER: dict[str, Scenario] = {}
"""The scenarios of this module (not in `harness.REGISTRY`: `test_order.py` runs them)."""

SEED = 20261202


def order_scenario(**opts):
    def deco(fn):
        if fn.__name__ in ORDER:
            raise ValueError(f"duplicate scenario name {fn.__name__!r}")
        ORDER[fn.__name__] = Scenario(fn.__name__, fn, **opts)
        return fn

    return deco


class Log(TypedDict, total=False):
    log: Annotated[list, operator.add]
    n: int


def _draw(name: str):
    """A node that logs its name and one draw from the global `random`."""

    def node(state):
        return {"log": [(name, random.random())]}

    node.__name__ = name
    return node


def _seeded(built):
    random.seed(SEED)
    return built


def _fan(lib, k: int, join: bool = True):
    g = lib.StateGraph(Log)
    names = [f"p{i}" for i in range(k)]
    for name in names:
        g.add_node(name, _draw(name))
        g.add_edge(lib.START, name)
    if join:
        g.add_node("join", _draw("join"))
        g.add_edge(names, "join")
        g.add_edge("join", lib.END)
    return g


@order_scenario(parallel=True)
def order_parallel(lib):
    """Four parallel nodes, a join: each draws; no saver (ids still drawn per step)."""
    return _seeded((_fan(lib, 4).compile(), [{"log": []}, {"log": []}], None))


@order_scenario(durabilities=CP, parallel=True)
def order_parallel_saver(lib):
    """The same with InMemorySaver (its versions draw too), two runs on one thread."""
    g = _fan(lib, 4).compile(checkpointer=lib.InMemorySaver())
    return _seeded((g, [{"log": []}, {"log": []}], thread()))


@order_scenario(durabilities=CP, parallel=True)
def order_send_fanout(lib):
    """Send tasks (a step's PUSH tasks come before its PULL tasks) beside a plain node."""
    g = lib.StateGraph(Log)

    def work(arg):
        return {"log": [("work", arg["i"], random.random())]}

    g.add_node("work", work)
    g.add_node("plain", _draw("plain"))
    g.add_node("after", _draw("after"))
    g.add_conditional_edges(
        lib.START, lambda s: [lib.Send("work", {"i": i}) for i in range(5)] + ["plain"]
    )
    g.add_edge("work", "after")
    g.add_edge("plain", "after")
    g.add_edge("after", lib.END)
    return _seeded((g.compile(checkpointer=lib.InMemorySaver()), [{"log": []}], thread()))


def _sub(lib, draw: bool = True):
    sub = linear(
        lib,
        Log,
        ("s1", _draw("s1") if draw else lambda s: {"log": ["s1"]}),
        ("s2", _draw("s2") if draw else lambda s: {"log": ["s2"]}),
        end=True,
    )
    return sub.compile()


@order_scenario(aio=(False,), subgraphs=True, parallel=True)
def order_subgraph_sibling(lib):
    """A subgraph node beside a plain sibling (its loop draws ids for its own checkpoints).
    Sync only: under the async API a sync node runs on a worker thread while the event
    loop goes on with the other tasks, and which of them draws first depends, on LangGraph,
    on whether its loop's default executor had to start a thread for it."""
    g = lib.StateGraph(Log)
    g.add_node("sub", _sub(lib))
    g.add_node("side", _draw("side"))
    g.add_node("next", _draw("next"))
    g.add_edge(lib.START, "sub")
    g.add_edge(lib.START, "side")
    g.add_edge("side", "next")
    g.add_edge(["sub", "next"], lib.END)
    return _seeded((g.compile(), [{"log": []}], None))


@order_scenario(subgraphs=True, parallel=True)
def order_subgraph_fanout(lib):
    """Send fan-out to a subgraph (LangGraph's fanout_to_subgraph shape), then a drawing
    node: it sees every draw of the subgraph runs' loops. (The subgraph's nodes do not
    draw: the runs interleave on worker threads, on LangGraph too, in no fixed order.)"""
    g = lib.StateGraph(Log)
    g.add_node("sub", _sub(lib, draw=False))
    g.add_node("last", _draw("last"))
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("sub", {"log": []})] * 3)
    g.add_edge("sub", "last")
    return _seeded((g.compile(), [{"log": []}], None))


@order_scenario(aio=(True,), subgraphs=True, parallel=True)
def order_subgraph_async(lib):
    """Async: a subgraph of async drawing nodes, alone in its step, then parallel async
    nodes. (A subgraph beside a sibling that awaits is not here: LangGraph's async
    subgraph loop hands control back to the event loop between its steps, at points of
    its own machinery, and a sibling's draws interleave with it there.)"""

    def adraw(name):
        async def node(state):
            return {"log": [(name, random.random())]}

        return node

    sub = linear(lib, Log, ("s1", adraw("s1")), ("s2", adraw("s2")))
    g = lib.StateGraph(Log)
    g.add_node("sub", sub.compile())
    g.add_node("a", adraw("a"))
    g.add_node("b", adraw("b"))
    g.add_edge(lib.START, "sub")
    g.add_edge("sub", "a")
    g.add_edge("sub", "b")
    return _seeded((g.compile(), [{"log": []}], None))


@order_scenario(aio=(False,), parallel=True)
def order_subgraph_invoked(lib):
    """A node that invokes a compiled graph itself, then draws."""
    sub = _sub(lib)

    def caller(state):
        inner = sub.invoke({"log": []})
        return {"log": [*inner["log"], ("caller", random.random())]}

    g = lib.StateGraph(Log)
    g.add_node("caller", caller)
    g.add_node("other", _draw("other"))
    g.add_edge(lib.START, "caller")
    g.add_edge(lib.START, "other")
    return _seeded((g.compile(), [{"log": []}], None))


@order_scenario(aio=(True,), parallel=True)
def order_async_nodes(lib):
    """Async nodes, one awaiting before it draws, then a sync join. (No sync node in the
    parallel step: see `order_subgraph_sibling`.)"""
    g = lib.StateGraph(Log)

    async def early(state):
        return {"log": [("early", random.random())]}

    async def late(state):
        await asyncio.sleep(0)
        return {"log": [("late", random.random())]}

    async def later(state):
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return {"log": [("later", random.random())]}

    g.add_node("early", early)
    g.add_node("late", late)
    g.add_node("later", later)
    g.add_node("join", _draw("join"))
    for name in ("later", "late", "early"):
        g.add_edge(lib.START, name)
    g.add_edge(["early", "late", "later"], "join")
    return _seeded((g.compile(), [{"log": []}], None))


@order_scenario(durabilities=CP)
def order_loop(lib):
    """A cycle of one drawing node, twelve steps (one id and one version per step)."""
    g = lib.StateGraph(Log)

    def step(state):
        return {"log": [random.random()], "n": state.get("n", 0) + 1}

    g.add_node("step", step)
    g.add_edge(lib.START, "step")
    g.add_conditional_edges("step", lambda s: lib.END if s["n"] >= 12 else "step")
    return _seeded((g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()))


@order_scenario(durabilities=CP, parallel=True)
def order_interrupt_resume(lib):
    """A node interrupts beside a drawing sibling; the resume draws again."""
    g = lib.StateGraph(Log)

    def ask(state):
        answer = lib.interrupt("more?")
        return {"log": [("ask", answer, random.random())]}

    g.add_node("first", _draw("first"))
    g.add_node("ask", ask)
    g.add_node("side", _draw("side"))
    g.add_node("end", _draw("end"))
    g.add_edge(lib.START, "first")
    g.add_edge("first", "ask")
    g.add_edge("first", "side")
    g.add_edge(["ask", "side"], "end")
    g.add_edge("end", lib.END)
    inputs = [{"log": []}, lib.Command(resume="yes")]
    return _seeded((g.compile(checkpointer=lib.InMemorySaver()), inputs, thread()))


@order_scenario(parallel=True)
def order_step_timeout(lib):
    """A step timeout: every task goes to a worker, a lone one too."""
    g = _fan(lib, 3).compile()
    g.step_timeout = 30.0
    return _seeded((g, [{"log": []}], None))


@order_scenario(durabilities=CP, parallel=True)
def order_max_concurrency(lib):
    """max_concurrency=2 with five parallel nodes."""
    g = _fan(lib, 5).compile(checkpointer=lib.InMemorySaver())
    return _seeded((g, [{"log": []}], thread(max_concurrency=2)))


@order_scenario(durabilities=CP)
def order_delta_channel(lib):
    """A DeltaChannel log in a drawing loop, two runs on one thread (with durability
    "exit" LangGraph's exit can make a stub checkpoint, whose id draws too)."""
    DeltaChannel = lib.module("channels.delta").DeltaChannel

    def reducer(current, writes):
        return [*(current or []), *(x for w in writes for x in w)]

    # (functional form: the annotations of a class body here would be strings)
    D = TypedDict(
        "D",
        {"log": Annotated[list, DeltaChannel(reducer, snapshot_frequency=2)], "n": int},
        total=False,
    )

    g = lib.StateGraph(D)

    def step(state):
        return {"log": [random.random()], "n": state.get("n", 0) + 1}

    g.add_node("step", step)
    g.add_edge(lib.START, "step")
    g.add_conditional_edges("step", lambda s: lib.END if s["n"] % 4 == 0 else "step")
    inputs = [{"n": 0}, {"n": 0}]
    return _seeded((g.compile(checkpointer=lib.InMemorySaver()), inputs, thread()))
