"""`AsyncPostgresSaver`: the async twin of `PostgresSaver` (same SQL and row logic).

Runs on a psycopg `AsyncConnection` (autocommit) or an `AsyncConnectionPool`; no saver-wide
lock, so concurrent tasks on a pool-backed saver run concurrently. The sync methods may be
called from other threads while the saver's event loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

try:
    import psycopg
    from psycopg.rows import tuple_row
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "warpgraph.checkpoint.postgres needs psycopg 3 and psycopg_pool: "
        "install them with `pip install 'warpgraph[postgres]'`"
    ) from exc

from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp
from warpgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
)
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.postgres import SESSION_SETUP, _put, _sql, check_autocommit

__all__ = ["AsyncPostgresSaver"]


def _pool_classes() -> tuple[type, ...]:
    try:
        from psycopg_pool import AsyncConnectionPool
    except ImportError:  # pragma: no cover
        return ()
    return (AsyncConnectionPool,)


async def _configure(conn: Any) -> None:
    await conn.execute(SESSION_SETUP)


async def _execute(cur: Any, query: _sql.Query) -> Any:
    await cur.execute(query.sql, query.params)
    if query.fetch == "one":
        return await cur.fetchone()
    if query.fetch == "all":
        return await cur.fetchall()
    return None


class AsyncPostgresSaver(BaseCheckpointSaver[str]):
    """Async checkpoint saver on an `AsyncConnection` or an `AsyncConnectionPool`."""

    def __init__(
        self,
        conn: Any,
        pipe: psycopg.AsyncPipeline | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.is_pool = isinstance(conn, _pool_classes())
        if self.is_pool and pipe is not None:
            raise ValueError("pipe is only supported with a single AsyncConnection, not a pool")
        if not self.is_pool:
            if not isinstance(conn, psycopg.AsyncConnection):
                raise TypeError(
                    "conn must be a psycopg AsyncConnection or AsyncConnectionPool, "
                    f"got {type(conn)!r}"
                )
            check_autocommit(conn)
        self.conn = conn
        self.pipe = pipe
        # A pipeline must not interleave operations: only pipeline mode serialises them.
        self._pipe_lock = asyncio.Lock() if pipe is not None else None
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        pool_size: int | None = None,
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """A saver on a new connection (or a pool of `pool_size` connections), closed on exit."""
        kwargs = {"autocommit": True, "prepare_threshold": 0}
        if pool_size is not None:
            if pipeline:
                raise ValueError("pipeline=True cannot be combined with pool_size")
            from psycopg_pool import AsyncConnectionPool

            async with AsyncConnectionPool(
                conn_string,
                min_size=1,
                max_size=pool_size,
                kwargs=kwargs,
                open=False,
                configure=_configure,
            ) as pool:
                yield cls(pool, serde=serde)
            return
        async with await psycopg.AsyncConnection.connect(conn_string, **kwargs) as conn:
            await _configure(conn)
            if pipeline:
                async with conn.pipeline() as pipe:
                    yield cls(conn, pipe, serde=serde)
            else:
                yield cls(conn, serde=serde)

    # --- execution (the only part that differs from the sync saver)
    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        if self.is_pool:
            async with self.conn.connection() as conn:
                yield conn
        elif self._pipe_lock is not None:
            async with self._pipe_lock:
                yield self.conn
        else:
            yield self.conn

    async def _run(self, op: _sql.Op) -> Any:
        query, value = _sql.start(op)  # encoding and validation: before taking a connection
        if query is None:
            return value
        try:
            async with (
                self._connection() as conn,
                conn.cursor(binary=True, row_factory=tuple_row) as cur,
            ):
                if query.transaction:
                    async with conn.transaction():
                        value = await self._loop(cur, op, query)
                else:
                    value = await self._loop(cur, op, query)
                if self.pipe is not None:
                    await self.pipe.sync()
                return value
        except psycopg.Error as exc:
            conflict = _put.conflict_from(exc)
            if conflict is None:
                raise
            raise conflict from None

    @staticmethod
    async def _loop(cur: Any, op: _sql.Op, query: _sql.Query | None) -> Any:
        value = None
        while query is not None:
            query, value = _sql.resume(op, await _execute(cur, query))
        return value

    async def aput_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        """Like `PostgresSaver.put_batch`: one round trip, all or nothing."""
        gens = [_put.batch_op(self.serde, op) for op in ops]
        if return_exceptions:
            out: list[Any] = []
            for gen in gens:
                try:
                    out.append(await self._run(gen))
                except Exception as exc:  # noqa: BLE001 - returned to the caller
                    out.append(exc)
            return out
        started = [_sql.start(gen) for gen in gens]
        if all(query is None for query, _ in started):
            return [value for _, value in started]
        merged = _put.merged_query(ops, started)
        if merged is not None:  # the usual case: ONE statement
            row = await self._run(_put.single(merged))
            return [_sql.finish_batch_item(g, item, row) for g, item in zip(gens, started)]
        try:
            async with self._connection() as conn:
                cursors = []
                # one Sync when the block exits: one round trip, one implicit transaction
                async with conn.pipeline():
                    for query, _ in started:
                        cur = None
                        if query is not None:
                            cur = conn.cursor(binary=True, row_factory=tuple_row)
                            await cur.execute(query.sql, query.params)
                        cursors.append(cur)
                rows = []
                for cur, (query, _) in zip(cursors, started):
                    rows.append(
                        await cur.fetchone() if cur is not None and query.fetch == "one" else None
                    )
                    if cur is not None:
                        await cur.close()
            return [
                _sql.finish_batch_item(gen, item, row)
                for gen, item, row in zip(gens, started, rows)
            ]
        except psycopg.Error as exc:
            conflict = _put.conflict_from(exc)
            if conflict is None:
                raise
            raise conflict from None

    def put_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        return self._sync(self.aput_batch(ops, return_exceptions=return_exceptions))

    # --- async API
    async def setup(self) -> None:
        """Create or migrate the tables (idempotent; safe to call from several processes)."""
        await self._run(_sql.setup_op())

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint selected by `config` (latest of the thread/ns if no id), or None."""
        rows = await self._run(_sql.get_tuple_op(config))
        return next(_sql.rows_to_tuples(self.serde, rows), None)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Matching checkpoints, newest first; `filter` matches metadata with `@>`."""
        rows = await self._run(_sql.list_op(config, filter, before, limit))
        for tup in _sql.rows_to_tuples(self.serde, rows):
            yield tup

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> RunnableConfig:
        """Store a checkpoint (blobs only for `new_versions`); fenced like `PostgresSaver.put`."""
        op = _put.put_op(self.serde, config, checkpoint, metadata, new_versions, expected_head)
        return await self._run(op)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes against the checkpoint in `config`."""
        await self._run(_put.put_writes_op(self.serde, config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of `thread_id`."""
        await self._run(_sql.delete_threads_op([thread_id]))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata `run_id` is in `run_ids`, with their writes."""
        await self._run(_sql.delete_for_runs_op(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""
        await self._run(_sql.copy_thread_op(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Like `PostgresSaver.prune`."""
        await self._run(_sql.prune_op(thread_ids, strategy))

    get_next_version = InMemorySaver.get_next_version

    # --- sync API: run the coroutine on the saver's loop from another thread
    def _sync(self, coro: Any) -> Any:
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

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        rows = self._sync(self._run(_sql.list_op(config, filter, before, limit)))
        yield from _sql.rows_to_tuples(self.serde, rows)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> RunnableConfig:
        return self._sync(
            self.aput(config, checkpoint, metadata, new_versions, expected_head=expected_head)
        )

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._sync(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync(self.aprune(thread_ids, strategy=strategy))
