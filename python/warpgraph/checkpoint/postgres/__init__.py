"""`PostgresSaver`: checkpoints in PostgreSQL via psycopg 3 (`pip install warpgraph[postgres]`).

Storage: one row per checkpoint (the checkpoint serialized with only its small scalar
values, metadata as JSONB), one BYTEA blob per (thread, ns, channel, version) written only
for the new versions, and the pending writes; see `_schema.py`. Every operation is a single
SQL statement (one round trip, atomic on an autocommit connection). Writes run prepared
with PostgreSQL's $n placeholders on a reused RawCursor (no per-call query parsing in
psycopg). There is no saver-wide lock: with a `ConnectionPool`, concurrent threads run
concurrently, each on its own connection. Fenced puts (`expected_head`) lock a per-namespace
row inside their statement; see `_schema.py` (migration 6).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from warpgraph.checkpoint._sql import (
    CONFIG_KEY_EXPECTED_HEAD,
    CheckpointConflictError,
    PutOp,
    WritesOp,
)
from warpgraph.checkpoint.postgres import _sql
from warpgraph.checkpoint.postgres._saver import (
    SESSION_SETUP,
    PostgresBase,
    connect_kwargs,
    pool_kwargs,
    psycopg,
    recover_pipeline,
    tuple_row,
)

__all__ = [
    "CONFIG_KEY_EXPECTED_HEAD",
    "CheckpointConflictError",
    "PostgresSaver",
    "PutOp",
    "WritesOp",
]

_NO_TRANSACTION = nullcontext()


def configure_connection(conn: Any) -> None:
    """Session setup for a connection the saver created (see SESSION_SETUP)."""
    conn.execute(SESSION_SETUP)


def execute_query(conn: Any, cur: Any, query: _sql.Query) -> Any:
    """Run one read / setup query on a sync cursor and fetch what it asks for."""
    cur.execute(query.sql, query.params)
    if query.fetch == "one":
        return cur.fetchone()
    if query.fetch == "all":
        return cur.fetchall()
    return None


def execute_write(conn: Any, cur: Any, query: _sql.Query) -> None:
    """Run a write (`Query.raw`) on the RawCursor `cur`: one statement, or
    (fetch="pipeline") several in one pipeline: one round trip, one implicit transaction."""
    if query.fetch != "pipeline":
        cur.execute(query.sql, query.params)
        return
    with conn.pipeline():
        for q in query.params:
            if q is not None:
                cur.execute(q.sql, q.params)


class PostgresSaver(PostgresBase):
    """Checkpoint saver on a psycopg `Connection` (autocommit) or a `ConnectionPool`.

    `pipe`: an optional `psycopg.Pipeline` of `conn`, synced after each operation (pipeline
    mode serialises the saver's operations: a pipeline is not thread-safe).
    The async methods run the sync ones in a worker thread.
    """

    _conn_type = psycopg.Connection
    _pool_type = "ConnectionPool"

    _lock_type = threading.Lock
    _raw_cursor = psycopg.RawCursor

    @classmethod
    @contextmanager
    def _open(
        cls, conn_string: str, pipeline: bool, serde: Any, pool_size: int | None, deltas: bool
    ) -> Iterator[PostgresSaver]:
        kwargs = connect_kwargs(pipeline, pool_size)
        if pool_size is not None:
            from psycopg_pool import ConnectionPool

            with ConnectionPool(
                conn_string, **pool_kwargs(pool_size, kwargs, configure_connection, open=True)
            ) as pool:
                yield cls(pool, serde=serde, append_deltas=deltas)
            return
        with psycopg.connect(conn_string, **kwargs) as conn:
            configure_connection(conn)
            if pipeline:
                with conn.pipeline() as pipe:
                    yield cls(conn, pipe, serde=serde, append_deltas=deltas)
            else:
                yield cls(conn, serde=serde, append_deltas=deltas)

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; safe to call from several processes)."""
        self._exec(_sql.setup_op())

    # --- execution: the sync executor; the async one runs it in a worker thread
    def _exec(self, op: _sql.Op) -> Any:
        query, value = self._first(op)
        if query is None:
            return value
        try:
            with self._connection() as conn:
                try:
                    if query.raw:  # a write: one statement, nothing to fetch
                        execute_write(conn, self._write_cursor(conn), query)
                        value = self._wrote(op, value)
                    else:
                        value = self._run_reads(conn, op, query)
                    if self.pipe is not None:
                        self.pipe.sync()
                except psycopg.Error:
                    if self.pipe is not None:
                        recover_pipeline(self.pipe)
                    raise
                return value
        except BaseException as exc:
            self._failed(query, exc)
            raise

    @staticmethod
    def _run_reads(conn: Any, op: _sql.Op, query: _sql.Query) -> Any:
        with (
            conn.cursor(binary=True, row_factory=tuple_row) as cur,
            conn.transaction() if query.transaction else _NO_TRANSACTION,
        ):
            while query is not None:
                query, value = _sql.resume(op, execute_query(conn, cur, query))
        return value

    def _exec_batch(self, job: Any) -> Any:
        if type(job) is not list:
            return self._exec(job)
        out: list[Any] = []
        for make in job:  # each op is encoded and run on its own
            try:
                out.append(self._exec(make()))
            except Exception as exc:  # noqa: BLE001 - returned to the caller
                out.append(exc)
        return out

    async def _aexec(self, op: _sql.Op) -> Any:
        return await asyncio.to_thread(self._exec, op)

    async def _aexec_batch(self, job: Any) -> Any:
        return await asyncio.to_thread(self._exec_batch, job)
