"""Lone steps under the async driver (`_lone.alone_steps`): taken where the sync driver's
are, and nothing observable differs from the general async path (outputs, checkpoints,
saver calls, errors, interrupts, where node code runs, contextvars)."""

from __future__ import annotations

import asyncio
import contextvars
import operator
import threading
from typing import Annotated

import pytest
import warpgraph.pregel._loop as loop_mod
from typing_extensions import TypedDict
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel import _lone
from warpgraph.types import Command, interrupt

pytestmark = pytest.mark.fast_paths

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("lone_async_var", default="unset")


class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def _where(tag: str, s: S) -> list:
    """What a node observes of where it runs: its thread (the event loop's or another),
    the context variable as it finds it, which it then sets."""
    seen = VAR.get()
    VAR.set(tag)
    on_loop = threading.current_thread() is threading.main_thread()
    return [(tag, s["n"], on_loop, seen)]


def _build(saver, kind: str):
    g = StateGraph(S)
    if kind == "sync":
        g.add_node("a", lambda s: {"n": s["n"] + 1, "log": _where("a", s)})
        g.add_node("b", lambda s: {"n": s["n"] * 2, "log": _where("b", s)})
    else:

        async def a(s):
            return {"n": s["n"] + 1, "log": _where("a", s)}

        async def b(s):
            return {"n": s["n"] * 2, "log": _where("b", s)}

        g.add_node("a", a)
        g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "b" if s["n"] < 20 else END)
    g.add_edge("b", "a")
    return g.compile(checkpointer=saver)


def _history(saver: InMemorySaver, thread: str) -> list:
    cfg = {"configurable": {"thread_id": thread}}
    return [  # (task ids hash the checkpoint ids, which differ between runs)
        (
            t.metadata["step"],
            t.metadata["source"],
            t.checkpoint["channel_values"],
            [(c, v) for _, c, v in t.pending_writes],
        )
        for t in saver.list(cfg)
    ]


def _run(monkeypatch, lone: bool, kind: str, with_saver: bool) -> tuple:
    _lone_or_general(monkeypatch, lone)
    taken = []
    real_alone = _lone.alone_steps

    def counting(loop):
        taken.append(1)
        return real_alone(loop)

    monkeypatch.setattr(loop_mod, "alone_steps", counting)
    saver = InMemorySaver() if with_saver else None
    graph = _build(saver, kind)
    cfg = {"configurable": {"thread_id": "t"}}

    async def go():
        VAR.set("caller")
        out = await graph.ainvoke({"n": 1, "log": []}, cfg)
        return out, VAR.get()

    out, after = asyncio.run(go())
    hist = _history(saver, "t") if saver is not None else None
    return (out, after, hist), bool(taken)


@pytest.mark.skipif(not FAST_PATHS, reason="fast paths off")
@pytest.mark.parametrize("with_saver", [False, True], ids=["no-saver", "memory"])
@pytest.mark.parametrize("kind", ["sync", "async"])
def test_async_lone_steps_match_the_general_path(monkeypatch, kind, with_saver) -> None:
    general, took_general = _run(monkeypatch, False, kind, with_saver)
    lone, took_lone = _run(monkeypatch, True, kind, with_saver)
    assert not took_general and took_lone
    assert lone == general
    out, after, _ = lone
    assert out["n"] == 23
    # a sync node runs on a worker thread, a coroutine on the event loop
    assert {on_loop for _, _, on_loop, _ in out["log"]} == {kind == "async"}
    if kind == "sync":  # each in a copy of the caller's context: nothing it sets leaks
        assert after == "caller"
        assert {seen for *_, seen in out["log"]} == {"caller"}


def _after_a(saver, name: str, node):
    """START -> a -> `name` (`node`), with `saver`."""
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s["n"] + 1})
    g.add_node(name, node)
    g.add_edge(START, "a")
    g.add_edge("a", name)
    return g.compile(checkpointer=saver)


def _lone_or_general(monkeypatch, lone: bool) -> None:
    real_ok = _lone.lone_steps_ok
    monkeypatch.setattr(loop_mod, "lone_steps_ok", real_ok if lone else lambda loop: False)


def _boom(s):
    raise KeyError("nope")


@pytest.mark.skipif(not FAST_PATHS, reason="fast paths off")
@pytest.mark.parametrize("lone", [False, True], ids=["general", "lone"])
def test_async_lone_step_failure_is_saved_and_raised(monkeypatch, lone) -> None:
    _lone_or_general(monkeypatch, lone)
    saver = InMemorySaver()
    graph = _after_a(saver, "boom", _boom)
    with pytest.raises(KeyError, match="nope"):
        asyncio.run(graph.ainvoke({"n": 1, "log": []}, {"configurable": {"thread_id": "t"}}))
    hist = _history(saver, "t")
    assert hist[0][0] == 1 and [w[0] for w in hist[0][3]] == ["__error__"]


@pytest.mark.skipif(not FAST_PATHS, reason="fast paths off")
def test_async_lone_interrupt_and_resume_match_the_general_path(monkeypatch) -> None:
    def ask(s):
        return {"n": s["n"] + interrupt("how many?")}

    def run(lone: bool) -> tuple:
        _lone_or_general(monkeypatch, lone)
        saver = InMemorySaver()
        graph = _after_a(saver, "ask", ask)
        cfg = {"configurable": {"thread_id": "t"}}

        async def go():
            first = await graph.ainvoke({"n": 1, "log": []}, cfg)
            second = await graph.ainvoke(Command(resume=5), cfg)
            return first, second

        first, second = asyncio.run(go())
        hist = [(step, source, values) for step, source, values, _ in _history(saver, "t")]
        interrupts = [(i.value, len(i.id)) for i in first["__interrupt__"]]
        return {k: v for k, v in first.items() if k != "__interrupt__"}, interrupts, second, hist

    assert run(True) == run(False)


@pytest.mark.skipif(not FAST_PATHS, reason="fast paths off")
def test_async_lone_steps_cancelled_like_the_general_path(monkeypatch) -> None:
    """A cancelled ainvoke stops in the running node's step in either path, saving what
    the general path saves."""

    def run(lone: bool) -> list:
        _lone_or_general(monkeypatch, lone)
        saver = InMemorySaver()
        started = asyncio.Event()

        async def slow(s):
            started.set()
            await asyncio.sleep(10)
            return {"n": 0}

        graph = _after_a(saver, "slow", slow)

        async def go():
            run = asyncio.ensure_future(
                graph.ainvoke({"n": 1, "log": []}, {"configurable": {"thread_id": "t"}})
            )
            await started.wait()
            run.cancel()
            with pytest.raises(asyncio.CancelledError):
                await run

        asyncio.run(go())
        return [(step, source, values) for step, source, values, _ in _history(saver, "t")]

    assert run(True) == run(False)
