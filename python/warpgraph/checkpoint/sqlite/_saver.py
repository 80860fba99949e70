"""What `SqliteSaver` and `AsyncSqliteSaver` share: the jobs of every operation and how a
job runs on a connection. A job is `(SqliteCore method, args)`; the two classes differ only
in which thread runs `_apply` (see `SqlSaverBase` for the API built on them)."""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from warpgraph._internal._sqlite import open_connection
from warpgraph.checkpoint._sql import PutOp, WritesOp
from warpgraph.checkpoint._sql.api import SqlSaverBase
from warpgraph.checkpoint._sql.writer import GroupCommitWriter
from warpgraph.checkpoint.base import CheckpointTuple, RunnableConfig
from warpgraph.checkpoint.sqlite import _schema
from warpgraph.checkpoint.sqlite._store import SqliteCore

Job = tuple[Any, tuple]

_SHARED_LOCK = threading.Lock()  # guards every saver's `_wg_shared` slot


def connect(conn_string: str, synchronous: str) -> sqlite3.Connection:
    """A connection for `from_conn_string`: a path, ":memory:" or a "file:" URI."""
    conn = open_connection(conn_string)
    try:
        _schema.configure(conn, synchronous=synchronous)
    except BaseException:
        conn.close()
        raise
    return conn


class SqliteBase(SqlSaverBase):
    """Jobs + `_apply`; subclasses define `_exec`/`_aexec` and `_setup_on(conn)`."""

    is_setup: bool
    _core: SqliteCore

    def __init__(self, *, serde: Any = None, append_deltas: bool = True) -> None:
        super().__init__(serde=serde)
        self.is_setup = False
        # with append deltas (`_sql/appends.py`), a list value extending the one last
        # stored or read for its channel is stored as the appended items only
        self.append_deltas = append_deltas
        self._core = SqliteCore(self.serde, append_deltas=append_deltas)

    def _apply(self, job: Job, conn: sqlite3.Connection) -> Any:
        """Run a job on `conn` (the caller makes sure no other job runs on it meanwhile)."""
        fn, args = job
        return fn(self._core_for(conn), conn, *args)

    def _core_for(self, conn: sqlite3.Connection) -> SqliteCore:
        """The core, set up on `conn` (same caller's guarantee as `_apply`)."""
        if self._core.serde is not self.serde:  # e.g. a `with_allowlist` clone
            self._core = SqliteCore(self.serde, append_deltas=self.append_deltas)
        if not self.is_setup:
            self._setup_on(conn)
        return self._core

    def _setup_on(self, conn: sqlite3.Connection) -> None:
        raise NotImplementedError

    def _exec(self, job: Job) -> Any:
        raise NotImplementedError

    async def _aexec(self, job: Job) -> Any:
        raise NotImplementedError

    def _exec_batch(self, job: Job) -> Any:  # put_batch is one job (one transaction)
        return self._exec(job)

    async def _aexec_batch(self, job: Job) -> Any:
        return await self._aexec(job)

    def writer(self, *, max_batch: int = 512) -> GroupCommitWriter:
        """A background group-commit writer for this saver (close it when done; from
        asyncio code, wrap its futures with `asyncio.wrap_future`)."""
        self._writer_setup()
        ref = weakref.ref(self)  # `owner` keeps the saver alive; the shared writer drops it

        def saver() -> SqliteBase:
            s = ref()
            if s is None:
                raise RuntimeError("the saver of this GroupCommitWriter was garbage-collected")
            return s

        def commit(steps: Sequence[Any]) -> list[Any]:
            return saver()._exec((SqliteCore.commit_steps, (steps,)))

        def prepare(op: PutOp | WritesOp) -> Any:
            return saver()._core.prepare(op)

        writer = GroupCommitWriter(prepare, commit, max_batch=max_batch)
        writer.owner = self
        return writer

    def shared_writer(self) -> GroupCommitWriter:
        """The saver's own long-lived group-commit writer (one background thread, started
        on first use), shared by every run with durability "async" on this saver.

        Runs wait for their own operations' futures, never close it. It stops (after
        committing what it holds) on `close_writer()` (the `from_conn_string` context
        exit calls it), when the saver is garbage-collected, or at interpreter exit; a
        later call starts a new one.
        """
        writer = self._own_shared()
        if writer is None or writer.closed:
            with _SHARED_LOCK:
                writer = self._own_shared()
                if writer is None or writer.closed:
                    writer = self._new_shared_writer()
                    writer.owner = None  # the thread must not keep the saver alive
                    # (writer, weakref to its saver): a `with_allowlist` clone copies the
                    # attribute but is not that saver, so it starts its own
                    self.__dict__["_wg_shared"] = (writer, weakref.ref(self))
                    weakref.finalize(self, writer.close)
        return writer

    def _new_shared_writer(self) -> Any:
        return self.writer()

    def _own_shared(self) -> GroupCommitWriter | None:
        entry = self.__dict__.get("_wg_shared")
        return entry[0] if entry is not None and entry[1]() is self else None

    def close_writer(self) -> None:
        """Stop the shared writer (if started) once it has committed what it holds."""
        with _SHARED_LOCK:
            writer = self._own_shared()
            if writer is not None:
                del self.__dict__["_wg_shared"]
        if writer is not None:
            writer.close()

    def _writer_setup(self) -> None:
        pass

    # --- jobs (see `SqlSaverBase`)
    def _get_tuple_job(self, config: RunnableConfig) -> Job:
        return SqliteCore.get_tuple, (config,)

    def _done_tuple(self, tup: CheckpointTuple | None) -> CheckpointTuple | None:
        return tup

    def _list_job(self, config: Any, filter: Any, before: Any, limit: Any) -> Job:
        return SqliteCore.list_start, (config, filter, before, limit)

    def _put_job(
        self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any, expected: Any
    ) -> Job:
        # (an expectation in the config is read by `SqliteCore.prepare`)
        return SqliteCore.put, (PutOp(config, checkpoint, metadata, new_versions, expected),)

    def _put_writes_job(
        self, config: Any, writes: Any, task_id: str, task_path: str, expected_head: Any
    ) -> Job:
        return SqliteCore.put_writes, (WritesOp(config, writes, task_id, task_path, expected_head),)

    def _put_batch_job(self, ops: Sequence[PutOp | WritesOp], return_exceptions: bool) -> Job:
        return SqliteCore.batch, (ops, return_exceptions)

    def _delete_thread_job(self, thread_id: str) -> Job:
        return SqliteCore.delete_thread, (thread_id,)

    def _delete_for_runs_job(self, run_ids: Sequence[str]) -> Job:
        return SqliteCore.delete_for_runs, (run_ids,)

    def _copy_thread_job(self, source_thread_id: str, target_thread_id: str) -> Job:
        return SqliteCore.copy_thread, (source_thread_id, target_thread_id)

    def _prune_job(self, thread_ids: Sequence[str], strategy: str) -> Job:
        return SqliteCore.prune, (list(thread_ids), strategy)
