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
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from warpgraph.checkpoint._sql import (
    NO_EXPECTATION,
    CheckpointConflictError,
    PutOp,
    WritesOp,
    expected_head_of,
)
from warpgraph.checkpoint._sql.writer import GroupCommitWriter
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
from warpgraph.checkpoint.sqlite import _schema
from warpgraph.checkpoint.sqlite._store import SqliteCore

__all__ = ("CheckpointConflictError", "GroupCommitWriter", "PutOp", "SqliteSaver", "WritesOp")

_LIST_CHUNK = 32


class SqliteSaver(BaseCheckpointSaver[str]):
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
    * `writer()`: a `GroupCommitWriter` committing queued operations in batches.
    """

    conn: sqlite3.Connection
    is_setup: bool

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        serde: SerializerProtocol | None = None,
        busy_timeout_ms: int = _schema.DEFAULT_BUSY_TIMEOUT_MS,
    ) -> None:
        super().__init__(serde=serde)
        if not isinstance(conn, sqlite3.Connection):
            raise TypeError(f"SqliteSaver needs a sqlite3.Connection, not {type(conn).__name__}")
        self.conn = conn
        self.is_setup = False
        self.lock = threading.RLock()
        self._core = SqliteCore(self.serde)
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
        conn = sqlite3.connect(
            conn_string,
            check_same_thread=False,
            isolation_level=None,
            uri=conn_string.startswith("file:"),
        )
        try:
            _schema.configure(conn, synchronous=synchronous)
            saver = cls(conn, **kwargs)
            saver.setup()
            yield saver
        finally:
            conn.close()

    # --- setup / core -----------------------------------------------------------------
    def setup(self) -> None:
        """Create or migrate the schema (idempotent; safe across processes) and enable WAL."""
        with self.lock:
            if not self.is_setup:
                _schema.setup(self.conn)
                self.is_setup = True

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            if self._core.serde is not self.serde:  # e.g. a `with_allowlist` clone
                self._core = SqliteCore(self.serde)
            if not self.is_setup:
                _schema.setup(self.conn)
                self.is_setup = True
            return getattr(self._core, method)(self.conn, *args, **kwargs)

    # --- sync API ---------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint selected by `config` (latest of the thread/ns if no id), or None."""
        return self._call("get_tuple", config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first. Filter keys are validated (ValueError) and
        matched literally against top-level metadata keys, with bound parameters only."""
        rows = self._call("list_rows", config, filter=filter, before=before, limit=limit)
        for i in range(0, len(rows), _LIST_CHUNK):
            chunk = rows[i : i + _LIST_CHUNK]
            yield from self._call("build_many", chunk)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> RunnableConfig:
        """Store a checkpoint (values only for `new_versions`); returns its config."""
        op = PutOp(
            config, checkpoint, metadata, new_versions, expected_head_of(config, expected_head)
        )
        return self._call("run_batch", [op])[0]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes (idempotent per (task_id, idx); special writes replace)."""
        self._call("run_batch", [WritesOp(config, writes, task_id, task_path)])

    def put_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        """Run `ops` in order in ONE transaction; returns per-op results (a put's config,
        None for writes). return_exceptions=False: all or nothing, the first error is
        raised; True: a failing op is rolled back alone and its exception returned."""
        ops = [_with_expectation(op) for op in ops]
        return self._call("run_batch", ops, return_exceptions=return_exceptions)

    def writer(self, *, max_batch: int = 512) -> GroupCommitWriter:
        """A background group-commit writer for this saver (close it when done)."""
        self.setup()

        def commit(steps: Sequence[Any]) -> list[Any]:
            return self._call("run_steps", steps, return_exceptions=True)

        def prepare(op: PutOp | WritesOp) -> Any:
            return self._core.prepare(_with_expectation(op))

        return GroupCommitWriter(prepare, commit, max_batch=max_batch)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and blob of `thread_id`."""
        self._call("delete_thread", thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata `run_id` is in `run_ids`, with their writes."""
        self._call("delete_for_runs", run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and blob of one thread to another."""
        self._call("copy_thread", source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """ "keep_latest": keep each namespace's latest checkpoint with its pending writes
        and the blobs it reads; "delete": delete the threads."""
        self._call("prune", list(thread_ids), strategy)

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Same version strings as LangGraph's savers: `f"{n + 1:032}.{random:016}"`."""
        return InMemorySaver.get_next_version(self, current, channel)  # type: ignore[arg-type]

    # --- async API (same code, run in a worker thread) ---------------------------------
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
        rows = await asyncio.to_thread(
            self._call, "list_rows", config, filter=filter, before=before, limit=limit
        )
        for i in range(0, len(rows), _LIST_CHUNK):
            for tup in await asyncio.to_thread(self._call, "build_many", rows[i : i + _LIST_CHUNK]):
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
            self.put, config, checkpoint, metadata, new_versions, expected_head=expected_head
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def aput_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        return await asyncio.to_thread(self.put_batch, ops, return_exceptions=return_exceptions)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)


def _with_expectation(op: Any) -> Any:
    if isinstance(op, PutOp) and op.expected_head is NO_EXPECTATION:
        expected = expected_head_of(op.config)
        if expected is not NO_EXPECTATION:
            return PutOp(op.config, op.checkpoint, op.metadata, op.new_versions, expected)
    return op
