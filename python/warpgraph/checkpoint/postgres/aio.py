"""`AsyncPostgresSaver`: the async twin of `PostgresSaver` (same jobs and API; only the
executor differs).

Runs on a psycopg `AsyncConnection` (autocommit) or an `AsyncConnectionPool`; no saver-wide
lock, so concurrent tasks on a pool-backed saver run concurrently. The sync methods may be
called from other threads while the saver's event loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from typing import Any

from warpgraph.checkpoint.postgres import _saver, _sql
from warpgraph.checkpoint.postgres._saver import PostgresBase, psycopg

__all__ = ["AsyncPostgresSaver"]

_NO_TRANSACTION = nullcontext()


async def _configure(conn: Any) -> None:
    await conn.execute(_saver.SESSION_SETUP)


async def _execute(cur: Any, query: _sql.Query) -> Any:
    await cur.execute(query.sql, query.params)
    if query.fetch == "one":
        return await cur.fetchone()
    if query.fetch == "all":
        return await cur.fetchall()
    return None


async def _execute_write(conn: Any, cur: Any, query: _sql.Query) -> None:
    """The async twin of `execute_write` (see the sync saver)."""
    if query.fetch != "pipeline":
        await cur.execute(query.sql, query.params)
        return
    async with conn.pipeline():
        for q in query.params:
            if q is not None:
                await cur.execute(q.sql, q.params)


class AsyncPostgresSaver(PostgresBase):
    """Async checkpoint saver on an `AsyncConnection` or an `AsyncConnectionPool`."""

    _conn_type = psycopg.AsyncConnection
    _pool_type = "AsyncConnectionPool"

    _lock_type = asyncio.Lock
    _raw_cursor = psycopg.AsyncRawCursor

    def _init_runtime(self) -> None:  # sync calls are submitted to the creating loop
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def _open(
        cls, conn_string: str, pipeline: bool, serde: Any, pool_size: int | None, deltas: bool
    ) -> AsyncIterator[AsyncPostgresSaver]:
        kwargs = _saver.connect_kwargs(pipeline, pool_size)
        if pool_size is not None:
            from psycopg_pool import AsyncConnectionPool

            async with AsyncConnectionPool(
                conn_string, **_saver.pool_kwargs(pool_size, kwargs, _configure, open=False)
            ) as pool:
                yield cls(pool, serde=serde, append_deltas=deltas)
            return
        async with await psycopg.AsyncConnection.connect(conn_string, **kwargs) as conn:
            await _configure(conn)
            if pipeline:
                async with conn.pipeline() as pipe:
                    yield cls(conn, pipe, serde=serde, append_deltas=deltas)
            else:
                yield cls(conn, serde=serde, append_deltas=deltas)

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent; safe to call from several processes)."""
        await self._aexec(_sql.setup_op())

    # --- execution: the async executor; the sync one submits it to the saver's loop
    async def _aexec(self, op: _sql.Op) -> Any:
        query, value = self._first(op)
        if query is None:
            return value
        try:
            async with self._connection() as conn:
                try:
                    if query.raw:  # a write: one statement, nothing to fetch
                        await _execute_write(conn, self._write_cursor(conn), query)
                        value = self._wrote(op, value)
                    else:
                        value = await self._run_reads(conn, op, query)
                    if self.pipe is not None:
                        await self.pipe.sync()
                except psycopg.Error:
                    if self.pipe is not None and (sync := _saver.recover_pipeline(self.pipe)):
                        try:
                            await sync
                        except psycopg.Error:  # the failed operation's results
                            pass
                    raise
                return value
        except BaseException as exc:
            self._failed(query, exc)
            raise

    @staticmethod
    async def _run_reads(conn: Any, op: _sql.Op, query: _sql.Query) -> Any:
        async with (
            conn.cursor(binary=True, row_factory=_saver.tuple_row) as cur,
            conn.transaction() if query.transaction else _NO_TRANSACTION,
        ):
            while query is not None:
                query, value = _sql.resume(op, await _execute(cur, query))
        return value

    async def _aexec_batch(self, job: Any) -> Any:
        if type(job) is not list:
            return await self._aexec(job)
        out: list[Any] = []
        for make in job:  # each op is encoded and run on its own
            try:
                out.append(await self._aexec(make()))
            except Exception as exc:  # noqa: BLE001 - returned to the caller
                out.append(exc)
        return out

    def _exec(self, op: _sql.Op) -> Any:
        return self._sync(self._aexec(op))

    def _exec_batch(self, job: Any) -> Any:
        return self._sync(self._aexec_batch(job))

    def _sync(self, coro: Any) -> Any:
        """Run `coro` on the saver's loop from another thread and wait for it."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is self.loop:
            coro.close()
            raise asyncio.InvalidStateError(
                "Synchronous calls to AsyncPostgresSaver are only allowed from a different "
                "thread. From the main thread, use the async interface, e.g. "
                "`await checkpointer.aget_tuple(...)`."
            )
        if self.loop is None:
            coro.close()
            raise asyncio.InvalidStateError(
                "AsyncPostgresSaver was created outside an event loop; use its async methods"
            )
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()
