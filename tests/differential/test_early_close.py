"""A consumer that stops a stream in the middle of a step with parallel tasks, on the
reference and on the target: the first chunk must come as soon as its task finishes (not
when the whole step does), stopping the async stream cancels the tasks still running,
and what the finished tasks wrote is kept (their pending writes, and with
`durability="exit"` the checkpoint that holds them), so `get_state` and the saver's list
equal LangGraph's.

Deterministic without sleeps: the slow node waits on an event that is never set (async:
it is cancelled) or that the test sets once the first chunk is in (sync: a thread cannot
be cancelled; LangGraph waits for it and keeps its writes too).
"""

from __future__ import annotations

import asyncio
import operator
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import aclosing, closing, contextmanager, nullcontext
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from .harness import target_lib
from .libs import get_lib
from .normalize import Normalizer

DURABILITIES = ("sync", "async", "exit")
# how long a stuck async stream may take before the test gives up (its slow node never
# ends); how long the sync slow node waits at most (LangGraph's sync stream, under
# durability="async", hands the first chunk on only when the step is done)
GIVE_UP = 20.0
SYNC_WAIT = 2.0


class State(TypedDict):
    value: Annotated[int, operator.add]


def _graph(lib: Any, aio: bool, flags: dict, gate: threading.Event, saver: Any) -> Any:
    if aio:

        async def slow(state: State) -> dict:
            flags["started"] = True
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                flags["cancelled"] = True
                raise
            return {"value": 10}

        async def fast(state: State) -> dict:
            return {"value": 2}

        async def after(state: State) -> dict:
            flags["after"] = True
            return {"value": 100}
    else:

        def slow(state: State) -> dict:
            flags["started"] = True
            gate.wait(SYNC_WAIT)
            return {"value": 10}

        def fast(state: State) -> dict:
            return {"value": 2}

        def after(state: State) -> dict:
            flags["after"] = True
            return {"value": 100}

    g = lib.StateGraph(State)
    g.add_node("slow", slow)
    g.add_node("fast", fast)
    g.add_node("after", after)
    g.add_edge(lib.START, "slow")
    g.add_edge(lib.START, "fast")
    g.add_edge("fast", "after")
    return g.compile(checkpointer=saver)


def _sqlite_saver(lib_name: str, path: str, aio: bool) -> Any:
    if lib_name == "langgraph":
        if aio:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            return AsyncSqliteSaver.from_conn_string(path)
        from langgraph.checkpoint.sqlite import SqliteSaver

        return _closing_conn(SqliteSaver(sqlite3.connect(path, check_same_thread=False)))
    if aio:
        from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as WgAsync

        return WgAsync.from_conn_string(path)
    from warpgraph.checkpoint.sqlite import SqliteSaver as WgSqlite

    return WgSqlite.from_conn_string(path)


@contextmanager
def _closing_conn(saver: Any) -> Iterator[Any]:
    try:
        yield saver
    finally:
        saver.conn.close()


def _observed(snapshot: Any, tuples: list, first: Any, flags: dict) -> Any:
    return Normalizer()(
        {
            "first": first,
            "flags": flags,
            "values": snapshot.values,
            "next": snapshot.next,
            "metadata": snapshot.metadata,
            "tasks": [(t.name, t.error, t.interrupts) for t in snapshot.tasks],
            "checkpoints": [
                (t.metadata, sorted((w[1], w[2]) for w in t.pending_writes or [])) for t in tuples
            ],
        }
    )


def _run_sync(lib: Any, durability: str, saver_cm: Any) -> Any:
    flags: dict = {}
    gate = threading.Event()
    with saver_cm as saver:
        graph = _graph(lib, False, flags, gate, saver)
        config = {"configurable": {"thread_id": "t"}}
        with closing(graph.stream({"value": 1}, config, durability=durability)) as chunks:
            first = next(chunks)
            gate.set()  # (the slow node may finish now; the consumer has stopped already)
        return _observed(graph.get_state(config), list(saver.list(config)), first, flags)


async def _run_async(lib: Any, durability: str, saver_cm: Any) -> Any:
    flags: dict = {}
    async with saver_cm as saver:
        graph = _graph(lib, True, flags, threading.Event(), saver)
        config = {"configurable": {"thread_id": "t"}}

        async def first_chunk() -> Any:
            async with aclosing(graph.astream({"value": 1}, config, durability=durability)) as s:
                async for chunk in s:
                    return chunk
            return None

        first = await asyncio.wait_for(first_chunk(), GIVE_UP)
        tuples = [t async for t in saver.alist(config)]
        return _observed(await graph.aget_state(config), tuples, first, flags)


def _saver_cm(lib: Any, kind: str, tmp_path: Any, aio: bool) -> Any:
    if kind == "memory":
        return nullcontext(lib.InMemorySaver())  # (sync and async context manager)
    return _sqlite_saver(lib.name, str(tmp_path / f"{lib.name}.db"), aio)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("durability", DURABILITIES)
def test_sync_stream_closed_mid_step(durability: str, kind: str, tmp_path: Any) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = _run_sync(ref, durability, _saver_cm(ref, kind, tmp_path, False))
    got = _run_sync(target, durability, _saver_cm(target, kind, tmp_path, False))
    assert got == want


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("durability", DURABILITIES)
async def test_async_stream_closed_mid_step(durability: str, kind: str, tmp_path: Any) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = await _run_async(ref, durability, _saver_cm(ref, kind, tmp_path, True))
    assert want["flags"] == {"started": True, "cancelled": True}  # (what the test relies on)
    got = await _run_async(target, durability, _saver_cm(target, kind, tmp_path, True))
    assert got == want
