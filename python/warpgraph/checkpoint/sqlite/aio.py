"""`AsyncSqliteSaver`: the SQLite saver for asyncio code.

Each operation (all its statements, inside one transaction for writes) runs as ONE call
on the connection's single worker thread, using the same `SqliteCore` as `SqliteSaver`.
That is one thread hop per operation, where driving aiosqlite statement by statement
costs one hop per statement; so no aiosqlite dependency is needed. An
`aiosqlite.Connection` is still accepted (LangGraph's constructor signature): the
operations then run on aiosqlite's own thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from warpgraph.checkpoint._sql import CheckpointConflictError
from warpgraph.checkpoint.base import SerializerProtocol
from warpgraph.checkpoint.sqlite import _schema
from warpgraph.checkpoint.sqlite._saver import Job, SqliteBase, connect

__all__ = ("AsyncSqliteSaver", "CheckpointConflictError")


def _is_aiosqlite(conn: Any) -> bool:
    return type(conn).__module__.startswith("aiosqlite") and hasattr(conn, "_execute")


class _ThreadRunner:
    """Runs `fn(conn)` on one dedicated worker thread (safe from any thread)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warpgraph-sqlite")

    async def run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, self.conn)

    def run_sync(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        return self.pool.submit(fn, self.conn).result()

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class _AiosqliteRunner:
    """Runs `fn(conn)` on an aiosqlite connection's thread."""

    def __init__(self, conn: Any) -> None:
        self.aconn = conn
        self.started = False
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    async def run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        aconn = self.aconn
        if not self.started:
            await self._start()
        return await aconn._execute(lambda: fn(aconn._conn))

    async def _start(self) -> None:
        """Open a connection handed over before it was awaited (`aiosqlite.connect(...)`
        without `await`), as LangGraph's saver does; a closed one fails in `_execute`."""
        aconn = self.aconn
        thread = getattr(aconn, "_thread", None)
        if (
            getattr(aconn, "_connection", None) is None
            and getattr(aconn, "_running", False)
            and thread is not None
            and not thread.is_alive()
        ):
            await aconn
        self.started = True

    def run_sync(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if self.loop is None or running is self.loop:
            raise asyncio.InvalidStateError(
                "Synchronous calls to AsyncSqliteSaver on an aiosqlite connection are only "
                "allowed from a different thread than the event loop's; use the async methods."
            )
        return asyncio.run_coroutine_threadsafe(self.run(fn), self.loop).result()

    def close(self) -> None:
        pass


class AsyncSqliteSaver(SqliteBase):
    """Async SQLite checkpoint saver (same storage, SQL and extensions as `SqliteSaver`)."""

    is_setup: bool

    def __init__(
        self,
        conn: Any,
        *,
        serde: SerializerProtocol | None = None,
        busy_timeout_ms: int = _schema.DEFAULT_BUSY_TIMEOUT_MS,
        append_deltas: bool = True,
    ) -> None:
        super().__init__(serde=serde, append_deltas=append_deltas)
        self.conn = conn
        self._busy_timeout_ms = busy_timeout_ms
        if _is_aiosqlite(conn):
            self._runner: Any = _AiosqliteRunner(conn)
        elif isinstance(conn, sqlite3.Connection):
            _schema.configure(conn, busy_timeout_ms=busy_timeout_ms)
            self._runner = _ThreadRunner(conn)
        else:
            raise TypeError(
                "AsyncSqliteSaver needs a sqlite3.Connection (check_same_thread=False) or an "
                f"aiosqlite.Connection, not {type(conn).__name__}"
            )
        self._setup_lock = threading.Lock()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, synchronous: str = "NORMAL", **kwargs: Any
    ) -> AsyncIterator[AsyncSqliteSaver]:
        """Open `conn_string` for the duration (see `SqliteSaver.from_conn_string`)."""
        conn = connect(conn_string, synchronous)
        saver = None
        try:
            saver = cls(conn, **kwargs)
            await saver.setup()
            yield saver
        finally:
            try:
                if saver is not None:
                    # off the event loop: the writer's last commits may need it (aiosqlite)
                    await asyncio.to_thread(saver.close_writer)
                    saver._runner.close()
            finally:
                conn.close()

    async def setup(self) -> None:
        """Create or migrate the schema (idempotent; safe across processes) and enable WAL."""
        await self._runner.run(self._setup_on)

    # --- execution: on the connection's worker thread (sync calls wait for it)
    def _setup_on(self, conn: sqlite3.Connection) -> None:
        with self._setup_lock:
            if not self.is_setup:
                if _is_aiosqlite(self.conn):
                    _schema.configure(conn, busy_timeout_ms=self._busy_timeout_ms)
                _schema.setup(conn)
                self.is_setup = True

    async def _aexec(self, job: Job) -> Any:
        return await self._runner.run(partial(self._apply, job))

    def _exec(self, job: Job) -> Any:
        return self._runner.run_sync(partial(self._apply, job))
