"""LangGraph's public checkpointer conformance suite against warpgraph's SQLite savers."""

from __future__ import annotations

import itertools
import sqlite3

import pytest

conformance = pytest.importorskip("langgraph.checkpoint.conformance")
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from ._conformance import assert_full_pass

_n = itertools.count()


async def test_async_sqlite_saver_file_passes_conformance(tmp_path) -> None:
    @conformance.checkpointer_test(name="warpgraph.AsyncSqliteSaver")
    async def factory():
        path = str(tmp_path / f"a{next(_n)}.db")
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            yield saver

    assert_full_pass(await conformance.validate(factory, progress=ProgressCallbacks.quiet()))


async def test_async_sqlite_saver_on_aiosqlite_connection_passes_conformance() -> None:
    aiosqlite = pytest.importorskip("aiosqlite")

    @conformance.checkpointer_test(name="warpgraph.AsyncSqliteSaver[aiosqlite]")
    async def factory():
        async with aiosqlite.connect(":memory:") as conn:
            saver = AsyncSqliteSaver(conn)
            await saver.setup()
            yield saver

    assert_full_pass(await conformance.validate(factory, progress=ProgressCallbacks.quiet()))


async def test_sync_sqlite_saver_passes_conformance(tmp_path) -> None:
    # The suite drives the a-methods; SqliteSaver's run its sync methods in a thread.
    @conformance.checkpointer_test(name="warpgraph.SqliteSaver")
    async def factory():
        conn = sqlite3.connect(str(tmp_path / f"s{next(_n)}.db"), check_same_thread=False)
        try:
            saver = SqliteSaver(conn)
            saver.setup()
            yield saver
        finally:
            conn.close()

    assert_full_pass(await conformance.validate(factory, progress=ProgressCallbacks.quiet()))
