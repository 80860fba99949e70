"""`PostgresSaver`: checkpoints in PostgreSQL via psycopg 3 (`pip install warpgraph[postgres]`).

Storage: one envelope row per checkpoint (serialized without channel values, metadata as
JSONB), one BYTEA blob per (thread, ns, channel, version) written only for the new versions,
and the pending writes; see `_schema.py`. Every operation is a single SQL statement (one
round trip, atomic on an autocommit connection). There is no saver-wide lock: with a
`ConnectionPool`, concurrent threads run concurrently, each on its own connection.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

try:
    import psycopg
    from psycopg.rows import tuple_row
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "warpgraph.checkpoint.postgres needs psycopg 3 and psycopg_pool: "
        "install them with `pip install 'warpgraph[postgres]'`"
    ) from exc

from warpgraph.checkpoint._sql import (
    CONFIG_KEY_EXPECTED_HEAD,
    NO_EXPECTATION,
    CheckpointConflictError,
    PutOp,
    WritesOp,
)
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
from warpgraph.checkpoint.postgres import _put, _sql

__all__ = [
    "CONFIG_KEY_EXPECTED_HEAD",
    "CheckpointConflictError",
    "PostgresSaver",
    "PutOp",
    "WritesOp",
]


def _pool_classes() -> tuple[type, ...]:
    try:
        from psycopg_pool import ConnectionPool
    except ImportError:  # pragma: no cover
        return ()
    return (ConnectionPool,)


def check_autocommit(conn: Any) -> None:
    """Raise ValueError if a plain connection is not in autocommit mode."""
    if getattr(conn, "autocommit", True) is False:
        raise ValueError(
            "the Postgres saver needs an autocommit connection: "
            "psycopg.connect(conn_string, autocommit=True)"
        )


# The savers' statements are prepared (prepare_threshold=0) and keyed by primary keys, so a
# generic plan is always right; PostgreSQL would otherwise re-plan each execution of the
# read query (a custom plan costs more to make than to run). Set on connections that
# `from_conn_string` creates, never on a caller's connection.
SESSION_SETUP = "SET plan_cache_mode = force_generic_plan"


def configure_connection(conn: Any) -> None:
    """Session setup for a connection the saver created (see SESSION_SETUP)."""
    conn.execute(SESSION_SETUP)


def execute_query(cur: Any, query: _sql.Query) -> Any:
    """Run one query on a sync cursor and fetch what it asks for."""
    cur.execute(query.sql, query.params)
    if query.fetch == "one":
        return cur.fetchone()
    if query.fetch == "all":
        return cur.fetchall()
    return None


class PostgresSaver(BaseCheckpointSaver[str]):
    """Checkpoint saver on a psycopg `Connection` (autocommit) or a `ConnectionPool`.

    `pipe`: an optional `psycopg.Pipeline` of `conn`, synced after each operation (pipeline
    mode serialises the saver's operations: a pipeline is not thread-safe).
    The async methods run the sync ones in a worker thread.
    """

    def __init__(
        self,
        conn: Any,
        pipe: psycopg.Pipeline | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.is_pool = isinstance(conn, _pool_classes())
        if self.is_pool and pipe is not None:
            raise ValueError("pipe is only supported with a single Connection, not a pool")
        if not self.is_pool:
            if not isinstance(conn, psycopg.Connection):
                raise TypeError(
                    f"conn must be a psycopg Connection or ConnectionPool, got {type(conn)!r}"
                )
            check_autocommit(conn)
        self.conn = conn
        self.pipe = pipe
        # A pipeline is not thread-safe: only pipeline mode serialises operations.
        self._pipe_lock = threading.Lock() if pipe is not None else None

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        pool_size: int | None = None,
    ) -> Iterator[PostgresSaver]:
        """A saver on a new connection (or a pool of `pool_size` connections), closed on exit."""
        kwargs = {"autocommit": True, "prepare_threshold": 0}
        if pool_size is not None:
            if pipeline:
                raise ValueError("pipeline=True cannot be combined with pool_size")
            from psycopg_pool import ConnectionPool

            with ConnectionPool(
                conn_string,
                min_size=1,
                max_size=pool_size,
                kwargs=kwargs,
                open=True,
                configure=configure_connection,
            ) as pool:
                yield cls(pool, serde=serde)
            return
        with psycopg.connect(conn_string, **kwargs) as conn:
            configure_connection(conn)
            if pipeline:
                with conn.pipeline() as pipe:
                    yield cls(conn, pipe, serde=serde)
            else:
                yield cls(conn, serde=serde)

    # --- execution (the only part that differs from the async saver)
    @contextmanager
    def _connection(self) -> Iterator[Any]:
        if self.is_pool:
            with self.conn.connection() as conn:
                yield conn
        elif self._pipe_lock is not None:
            with self._pipe_lock:
                yield self.conn
        else:
            yield self.conn

    def _run(self, op: _sql.Op) -> Any:
        query, value = _sql.start(op)  # encoding and validation: before taking a connection
        if query is None:
            return value
        try:
            with self._connection() as conn, conn.cursor(binary=True, row_factory=tuple_row) as cur:
                if query.transaction:
                    with conn.transaction():
                        value = self._loop(cur, op, query)
                else:
                    value = self._loop(cur, op, query)
                if self.pipe is not None:
                    self.pipe.sync()
                return value
        except psycopg.Error as exc:
            conflict = _put.conflict_from(exc)
            if conflict is None:
                raise
            raise conflict from None

    @staticmethod
    def _loop(cur: Any, op: _sql.Op, query: _sql.Query | None) -> Any:
        value = None
        while query is not None:
            query, value = _sql.resume(op, execute_query(cur, query))
        return value

    def put_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        """Run `ops` (PutOp / WritesOp) in order; returns per-op results (a put's config,
        None for writes). return_exceptions=False: all or nothing (the first error is
        raised) in one round trip: one merged statement, or, when two ops write the same
        row (two puts on one thread/ns), a pipeline in one implicit transaction.
        return_exceptions=True: op by op, a failing op's exception is in its slot."""
        gens = [_put.batch_op(self.serde, op) for op in ops]
        if return_exceptions:
            out: list[Any] = []
            for gen in gens:
                try:
                    out.append(self._run(gen))
                except Exception as exc:  # noqa: BLE001 - returned to the caller
                    out.append(exc)
            return out
        started = [_sql.start(gen) for gen in gens]
        if all(query is None for query, _ in started):
            return [value for _, value in started]
        merged = _put.merged_query(ops, started)
        if merged is not None:  # the usual case: ONE statement
            row = self._run(_put.single(merged))
            return [_sql.finish_batch_item(g, item, row) for g, item in zip(gens, started)]
        try:
            with self._connection() as conn:
                cursors = []
                # one Sync when the block exits: one round trip, one implicit transaction
                with conn.pipeline():
                    for query, _ in started:
                        cur = None
                        if query is not None:
                            cur = conn.cursor(binary=True, row_factory=tuple_row)
                            cur.execute(query.sql, query.params)
                        cursors.append(cur)
                rows = [
                    cur.fetchone() if cur is not None and q.fetch == "one" else None
                    for cur, (q, _) in zip(cursors, started)
                ]
                for cur in cursors:
                    if cur is not None:
                        cur.close()
            return [
                _sql.finish_batch_item(gen, item, row)
                for gen, item, row in zip(gens, started, rows)
            ]
        except psycopg.Error as exc:
            conflict = _put.conflict_from(exc)
            if conflict is None:
                raise
            raise conflict from None

    async def aput_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        return await asyncio.to_thread(self.put_batch, ops, return_exceptions=return_exceptions)

    # --- API
    def setup(self) -> None:
        """Create or migrate the tables (idempotent; safe to call from several processes)."""
        self._run(_sql.setup_op())

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint selected by `config` (latest of the thread/ns if no id), or None."""
        rows = self._run(_sql.get_tuple_op(config))
        return next(_sql.rows_to_tuples(self.serde, rows), None)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first; `filter` matches metadata with `@>`."""
        rows = self._run(_sql.list_op(config, filter, before, limit))
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
        """Store a checkpoint (blobs only for `new_versions`) in one statement.

        Fenced when `expected_head` (or `configurable[CONFIG_KEY_EXPECTED_HEAD]`) is given:
        the put succeeds only if the thread/ns head is still that id (None: no checkpoint
        yet), else it raises CheckpointConflictError and stores nothing.
        """
        op = _put.put_op(self.serde, config, checkpoint, metadata, new_versions, expected_head)
        return self._run(op)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes against the checkpoint in `config`."""
        self._run(_put.put_writes_op(self.serde, config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of `thread_id`."""
        self._run(_sql.delete_threads_op([thread_id]))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata `run_id` is in `run_ids`, with their writes."""
        self._run(_sql.delete_for_runs_op(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""
        self._run(_sql.copy_thread_op(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """ "keep_latest": keep each namespace's latest checkpoint with its writes (e.g. a
        pending interrupt) and the blobs it reads; "delete": delete the threads."""
        self._run(_sql.prune_op(thread_ids, strategy))

    get_next_version = InMemorySaver.get_next_version

    # --- async API: the sync implementation in a worker thread
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        rows = await asyncio.to_thread(self._run, _sql.list_op(config, filter, before, limit))
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
        return await asyncio.to_thread(
            lambda: self.put(
                config, checkpoint, metadata, new_versions, expected_head=expected_head
            )
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)
