"""`AsyncSqliteStore`: the SQLite store for asyncio, on an `aiosqlite` connection.

The same plan as `SqliteStore` (`warpgraph.store._sql.plan`): its embeddings are awaited
on the event loop, then its statements run as ONE job on aiosqlite's connection thread
(one thread hop per batch, not one per statement). Concurrent calls are merged into one
batch (`AsyncBatchedBaseStore`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any

from warpgraph.store._sql.plan import Plan, run_batch, sweep
from warpgraph.store._sql.store import AsyncSweeping, aprelude, drive
from warpgraph.store.base import Op, Result, TTLConfig
from warpgraph.store.base.batch import AsyncBatchedBaseStore
from warpgraph.store.sqlite import _direct
from warpgraph.store.sqlite.base import (
    SqliteIndexConfig,
    SqliteStoreBase,
    _Session,
)

__all__ = ("AsyncSqliteStore",)


class AsyncSqliteStore(SqliteStoreBase, AsyncSweeping, AsyncBatchedBaseStore):
    """A store in a SQLite database for asyncio code (needs `aiosqlite`); constructed
    like `SqliteStore`, on an aiosqlite connection, inside a running event loop."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: SqliteIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> AsyncIterator[AsyncSqliteStore]:
        """A store on a new aiosqlite connection to `conn_string`, closed at the end."""
        import aiosqlite

        async with aiosqlite.connect(
            conn_string, isolation_level=None, uri=conn_string.startswith("file:")
        ) as conn:
            yield cls(conn, index=index, ttl=ttl)

    async def _on_db_thread(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run `fn(sqlite3_connection, *args)` on aiosqlite's thread."""
        run = getattr(self.conn, "_execute", None)
        raw = getattr(self.conn, "_conn", None)
        if run is None or raw is None:  # not aiosqlite: a plain thread then
            return await asyncio.to_thread(fn, self.conn, *args)
        return await run(fn, raw, *args)

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent); runs on first use if not called."""
        async with self.lock:
            if not self.is_setup:
                await self._on_db_thread(self._setup_on)
                self.is_setup = True

    async def _run(self, plan: Plan) -> Any:
        first, result = await aprelude(plan, self.embeddings)
        if first is None:
            return result
        if not self.is_setup:
            await self.setup()
        async with self.lock:
            return await self._on_db_thread(_finish, plan, first)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        if type(ops) is list and len(ops) == 1 and _direct.op_fast(self, ops[0]):
            if not self.is_setup:
                await self.setup()
            async with self.lock:
                return [await self._on_db_thread(_direct.run_fast_on, self, ops[0])]
        return await self._run(run_batch(self, ops))

    async def sweep_ttl(self) -> int:
        """Delete the expired items now; returns how many."""
        return (await self._run(sweep(self)))[0]


def _finish(conn: Any, plan: Plan, first: tuple) -> Any:
    """The rest of a plan (statements only), on the connection's own thread."""
    return drive(plan, None, lambda: _Session(conn), first)
