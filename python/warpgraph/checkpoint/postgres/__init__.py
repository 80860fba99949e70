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
    raise_conflict,
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
    """Run one query on a sync cursor and fetch what it asks for."""
    if query.fetch == "pipeline":  # queries in one pipeline: one round trip, one transaction
        with conn.pipeline():
            curs = [
                None if q is None else conn.cursor(binary=True, row_factory=tuple_row)
                for q in query.params
            ]
            for c, q in zip(curs, query.params):
                if c is not None:
                    c.execute(q.sql, q.params)
        rows = [
            c.fetchone() if c and q.fetch == "one" else None for c, q in zip(curs, query.params)
        ]
        for c in curs:
            if c is not None:
                c.close()
        return rows
    cur.execute(query.sql, query.params)
    if query.fetch == "one":
        return cur.fetchone()
    if query.fetch == "all":
        return cur.fetchall()
    return None


class PostgresSaver(PostgresBase):
    """Checkpoint saver on a psycopg `Connection` (autocommit) or a `ConnectionPool`.

    `pipe`: an optional `psycopg.Pipeline` of `conn`, synced after each operation (pipeline
    mode serialises the saver's operations: a pipeline is not thread-safe).
    The async methods run the sync ones in a worker thread.
    """

    _conn_type = psycopg.Connection
    _pool_type = "ConnectionPool"

    _lock_type = threading.Lock

    @classmethod
    @contextmanager
    def _open(
        cls, conn_string: str, pipeline: bool, serde: Any, pool_size: int | None
    ) -> Iterator[PostgresSaver]:
        kwargs = connect_kwargs(pipeline, pool_size)
        if pool_size is not None:
            from psycopg_pool import ConnectionPool

            with ConnectionPool(
                conn_string, **pool_kwargs(pool_size, kwargs, configure_connection, open=True)
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

    def setup(self) -> None:
        """Create or migrate the tables (idempotent; safe to call from several processes)."""
        self._exec(_sql.setup_op())

    # --- execution: the sync executor; the async one runs it in a worker thread
    def _exec(self, op: _sql.Op) -> Any:
        query, value = _sql.start(op)  # encoding and validation: before taking a connection
        if query is None:
            return value
        try:
            with self._connection() as conn, conn.cursor(binary=True, row_factory=tuple_row) as cur:
                with conn.transaction() if query.transaction else _NO_TRANSACTION:
                    while query is not None:
                        query, value = _sql.resume(op, execute_query(conn, cur, query))
                if self.pipe is not None:
                    self.pipe.sync()
                return value
        except psycopg.Error as exc:
            raise_conflict(exc)
            raise

    def _exec_batch(self, job: Any) -> Any:
        if type(job) is not list:
            return self._exec(job)
        out: list[Any] = []
        for op in job:
            try:
                out.append(self._exec(op))
            except Exception as exc:  # noqa: BLE001 - returned to the caller
                out.append(exc)
        return out

    async def _aexec(self, op: _sql.Op) -> Any:
        return await asyncio.to_thread(self._exec, op)

    async def _aexec_batch(self, job: Any) -> Any:
        return await asyncio.to_thread(self._exec_batch, job)
