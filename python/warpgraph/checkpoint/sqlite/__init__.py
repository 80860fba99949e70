"""`SqliteSaver`: checkpoints in a SQLite file (WAL, busy timeout, versioned schema).

Storage (see `warpgraph.checkpoint._sql.codec`): one blob per (thread, ns, channel,
version) written only for `new_versions`; a compact checkpoint record whose versions (and
copies of small values, so reads skip their blob lookups) are a skip delta against an
ancestor; writes keyed by (checkpoint, task_id, idx).
The file's schema differs from LangGraph's SqliteSaver (tables are prefixed `wg_`).
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from warpgraph._internal._sqlite import setup_once
from warpgraph.checkpoint._sql import CheckpointConflictError, PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import GroupCommitWriter
from warpgraph.checkpoint.base import SerializerProtocol
from warpgraph.checkpoint.sqlite import _schema
from warpgraph.checkpoint.sqlite._native import native_writer_for
from warpgraph.checkpoint.sqlite._saver import Job, SqliteBase, connect

__all__ = ("CheckpointConflictError", "GroupCommitWriter", "PutOp", "SqliteSaver", "WritesOp")


class SqliteSaver(SqliteBase):
    """A checkpoint saver storing checkpoints in a SQLite database.

    Thread-safe: operations on one saver are serialized by a lock; several savers or
    processes can share a file (WAL mode, busy timeout, `BEGIN IMMEDIATE` writes).
    Async methods run the same code in a worker thread, so the connection must allow
    other threads (`check_same_thread=False`, as `from_conn_string` does).

    Extensions beyond LangGraph's interface:
    * `put(..., expected_head=id_or_None)` (or `config["configurable"]["__pregel_expected_head"]`):
      write fencing; raises `CheckpointConflictError` unless the thread/ns head is still
      that checkpoint, checked inside the write transaction.
    * `put_batch([PutOp | WritesOp, ...])`: several operations in one transaction.
    * `writer()`: a `GroupCommitWriter` committing queued operations in batches;
      `shared_writer()`: the saver's own one, shared by runs with durability "async"
      (stopped by `close_writer()`, the context exit, garbage collection or interpreter exit).
      For a database file it commits on a native thread that does not wait for the GIL
      (`_native.py`; WARPGRAPH_SQLITE_NATIVE_WRITER=0 keeps the Python one), on a
      connection of its own: opened with the parameters of the "file:" URI given to
      `from_conn_string`, or on the plain file for a connection you made (keep the Python
      writer when that connection depends on URI parameters such as a VFS or nolock).
    * `append_deltas` (default True): a list value that extends the one last stored (or
      read) for its channel is stored as the appended items only (a `"wg-append"` blob
      row), rebuilt into the full value on every read (`_sql/appends.py`); False stores
      every value whole.
    """

    conn: sqlite3.Connection
    is_setup: bool

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        busy_timeout_ms: int = _schema.DEFAULT_BUSY_TIMEOUT_MS,
        append_deltas: bool = True,
    ) -> None:
        if not isinstance(conn, sqlite3.Connection):
            raise TypeError(f"SqliteSaver needs a sqlite3.Connection, not {type(conn).__name__}")
        super().__init__(serde=serde, append_deltas=append_deltas)
        self.conn = conn
        self.lock = threading.RLock()
        # the "file:" URI `from_conn_string` opened, whose parameters (a VFS, nolock, ...)
        # the native writer's own connection must use too (unknown for a given connection)
        self._conn_uri: str | None = None
        _schema.configure(conn, busy_timeout_ms=busy_timeout_ms)

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, synchronous: str = "NORMAL", **kwargs: Any
    ) -> Iterator[SqliteSaver]:
        """Open `conn_string` (a path, ":memory:" or a "file:" URI) for the duration.

        `synchronous` defaults to NORMAL (SQLite's recommended setting with WAL: a commit
        survives an application crash; the last commits may be lost on power failure).
        Pass "FULL" for power-loss durability, like LangGraph's default.
        """
        conn = connect(conn_string, synchronous)
        saver = None
        try:
            saver = cls(conn, **kwargs)
            saver._conn_uri = conn_string if conn_string.startswith("file:") else None
            saver.setup()
            yield saver
        finally:
            try:
                if saver is not None:
                    saver.close_writer()
            finally:
                conn.close()

    def setup(self) -> None:
        """Create or migrate the schema (idempotent; safe across processes) and enable WAL."""
        setup_once(self)

    _writer_setup = setup

    def _new_shared_writer(self) -> Any:
        self.setup()
        return native_writer_for(self, max_batch=512) or self.writer()

    # --- execution: under the saver's lock; async calls run it in a worker thread
    def _setup_on(self, conn: sqlite3.Connection) -> None:
        _schema.setup(conn)
        self.is_setup = True

    def _exec(self, job: Job) -> Any:
        with self.lock:
            return self._apply(job, self.conn)

    async def _aexec(self, job: Job) -> Any:
        return await asyncio.to_thread(self._exec, job)
