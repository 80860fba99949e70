"""The state API on langgraph and warpgraph: every script of state_scripts.py, sync and async,
on the in-memory and the SQLite saver; results, snapshots, errors and the saver's
checkpoints (ids and timestamps normalised) must be identical."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from .harness import _checkpoint_rows, assert_same, target_lib
from .libs import get_lib
from .normalize import Normalizer
from .state_scripts import SCRIPTS, Call

SAVERS = ("memory", "sqlite")


def _saver_module(lib: Any, sub: str) -> Any:
    return lib.module(f"checkpoint.{sub}")


@contextlib.contextmanager
def sync_saver(lib: Any, kind: str):
    if kind == "memory":
        yield lib.InMemorySaver()
        return
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        yield _saver_module(lib, "sqlite").SqliteSaver(conn)
    finally:
        conn.close()


@contextlib.asynccontextmanager
async def async_saver(lib: Any, kind: str):
    if kind == "memory":
        yield lib.InMemorySaver()
        return
    async with _saver_module(lib, "sqlite.aio").AsyncSqliteSaver.from_conn_string(":memory:") as s:
        yield s


def _rows(tuples: list) -> list[dict]:
    """The saver's checkpoints (the key order of a stored checkpoint dict is the saver's
    business: warpgraph's SQLite record decodes id before ts, and channels in its order)."""
    rows = _checkpoint_rows(tuples)
    for r in rows:
        cp = r["checkpoint"] = dict(sorted(r["checkpoint"].items()))
        cp["channel_values"] = dict(sorted(cp["channel_values"].items()))
    return rows


def _head(config: dict) -> dict:
    conf = config["configurable"]
    return {"configurable": {k: v for k, v in conf.items() if k != "checkpoint_id"}}


def _task_order(out: Any, snapshot: Any) -> Any:
    """Interrupts of parallel tasks in an invoke result in the order of the thread's tasks:
    LangGraph lists them as the tasks finished (any order), warpgraph in task order."""
    if not isinstance(out, dict) or len(out.get("__interrupt__") or ()) < 2:
        return out
    rank = {i.id: n for n, i in enumerate(i for t in snapshot.tasks for i in t.interrupts)}
    ordered = sorted(out["__interrupt__"], key=lambda i: rank.get(i.id, len(rank)))
    return {**out, "__interrupt__": ordered}


def _sync_call(call: Call) -> Any:
    app, m = call.target, call.method
    if m == "invoke":
        out = app.invoke(*call.args, **call.kwargs)
        if isinstance(out, dict) and "__interrupt__" in out:
            out = _task_order(out, app.get_state(_head(call.args[1])))
        return out
    if m == "checkpoints":
        return _rows(list(app.checkpointer.list(*call.args)))
    if m == "stream":
        return list(app.stream(*call.args, **call.kwargs))
    if m == "get_state_history":
        return list(app.get_state_history(*call.args, **call.kwargs))
    return getattr(app, m)(*call.args, **call.kwargs)


async def _async_call(call: Call) -> Any:
    app, m = call.target, call.method
    if m == "invoke":
        out = await app.ainvoke(*call.args, **call.kwargs)
        if isinstance(out, dict) and "__interrupt__" in out:
            out = _task_order(out, await app.aget_state(_head(call.args[1])))
        return out
    if m == "checkpoints":
        return _rows([t async for t in app.checkpointer.alist(*call.args)])
    if m == "stream":
        return [c async for c in app.astream(*call.args, **call.kwargs)]
    if m == "get_state_history":
        return [s async for s in app.aget_state_history(*call.args, **call.kwargs)]
    return await getattr(app, "a" + m)(*call.args, **call.kwargs)


def _step(gen: Any, value: Any) -> Call | None:
    try:
        return gen.send(value)
    except StopIteration:
        return None


def run_sync(name: str | Callable, lib: Any, kind: str) -> list:
    """The trace of a script (by name, or the script itself) on `lib` with a `kind` saver."""
    trace: list = []
    with sync_saver(lib, kind) as saver:
        gen = (SCRIPTS[name] if isinstance(name, str) else name)(lib, saver)
        value: Any = None
        while (call := _step(gen, value)) is not None:
            try:
                value = _sync_call(call)
            except Exception as exc:  # noqa: BLE001 - errors are part of the trace
                value = exc
            trace.append((call.method, value))
    return trace


async def run_async(name: str, lib: Any, kind: str) -> list:
    trace: list = []
    async with async_saver(lib, kind) as saver:
        gen = SCRIPTS[name](lib, saver)
        value: Any = None
        while (call := _step(gen, value)) is not None:
            try:
                value = await _async_call(call)
            except Exception as exc:  # noqa: BLE001 - errors are part of the trace
                value = exc
            trace.append((call.method, value))
    return trace


def _compare(name: str, traces: list[list], label: str) -> None:
    ref, got = (Normalizer()(t) for t in traces)
    assert_same(ref, got, f"{name}[{label}]")
    # a script whose every call failed would compare equal and test nothing
    assert any(not isinstance(v, Exception) for _, v in traces[0]), "every call failed"


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_state_api_sync(name: str, kind: str) -> None:
    target = target_lib()
    traces = [run_sync(name, lib, kind) for lib in (get_lib("langgraph"), target)]
    _compare(name, traces, f"sync, {kind}")


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_state_api_async(name: str, kind: str) -> None:
    target = target_lib()
    traces = [await run_async(name, lib, kind) for lib in (get_lib("langgraph"), target)]
    _compare(name, traces, f"async, {kind}")


@pytest.mark.parametrize("name", list(SCRIPTS))
async def test_state_api_async_twin(name: str) -> None:
    """warpgraph's async API leaves the same trace as its sync API."""
    target = target_lib()
    _compare(
        name,
        [run_sync(name, target, "memory"), await run_async(name, target, "memory")],
        "sync vs async",
    )
