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
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
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
from warpgraph.checkpoint.sqlite import _schema, _with_expectation
from warpgraph.checkpoint.sqlite._store import SqliteCore

__all__ = ("AsyncSqliteSaver", "CheckpointConflictError")

_LIST_CHUNK = 32


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
        try:
            self.loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            self.loop = None

    async def run(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        aconn = self.aconn
        return await aconn._execute(lambda: fn(aconn._conn))

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


class AsyncSqliteSaver(BaseCheckpointSaver[str]):
    """Async SQLite checkpoint saver (same storage, SQL and extensions as `SqliteSaver`)."""

    is_setup: bool

    def __init__(
        self,
        conn: Any,
        *,
        serde: SerializerProtocol | None = None,
        busy_timeout_ms: int = _schema.DEFAULT_BUSY_TIMEOUT_MS,
    ) -> None:
        super().__init__(serde=serde)
        self.conn = conn
        self.is_setup = False
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
        self._core = SqliteCore(self.serde)
        self._setup_lock = threading.Lock()

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, synchronous: str = "NORMAL", **kwargs: Any
    ) -> AsyncIterator[AsyncSqliteSaver]:
        """Open `conn_string` for the duration (see `SqliteSaver.from_conn_string`)."""
        conn = sqlite3.connect(
            conn_string,
            check_same_thread=False,
            isolation_level=None,
            uri=conn_string.startswith("file:"),
        )
        saver = None
        try:
            _schema.configure(conn, synchronous=synchronous)
            saver = cls(conn, **kwargs)
            await saver.setup()
            yield saver
        finally:
            if saver is not None:
                saver._runner.close()
            conn.close()

    # --- plumbing ---------------------------------------------------------------------
    def _op(self, method: str, *args: Any, **kwargs: Any) -> Callable[[sqlite3.Connection], Any]:
        def fn(conn: sqlite3.Connection) -> Any:
            if self._core.serde is not self.serde:  # e.g. a `with_allowlist` clone
                self._core = SqliteCore(self.serde)
            if not self.is_setup:
                self._setup_on(conn)
            return getattr(self._core, method)(conn, *args, **kwargs)

        return fn

    def _setup_on(self, conn: sqlite3.Connection) -> None:
        with self._setup_lock:
            if not self.is_setup:
                if _is_aiosqlite(self.conn):
                    _schema.configure(conn, busy_timeout_ms=self._busy_timeout_ms)
                _schema.setup(conn)
                self.is_setup = True

    async def _arun(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return await self._runner.run(self._op(method, *args, **kwargs))

    def _run(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return self._runner.run_sync(self._op(method, *args, **kwargs))

    async def setup(self) -> None:
        """Create or migrate the schema (idempotent; safe across processes) and enable WAL."""
        await self._runner.run(self._setup_on)

    # --- async API --------------------------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._arun("get_tuple", config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        rows = await self._arun("list_rows", config, filter=filter, before=before, limit=limit)
        for i in range(0, len(rows), _LIST_CHUNK):
            for tup in await self._arun("build_many", rows[i : i + _LIST_CHUNK]):
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
        op = PutOp(
            config, checkpoint, metadata, new_versions, expected_head_of(config, expected_head)
        )
        return (await self._arun("run_batch", [op]))[0]

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._arun("run_batch", [WritesOp(config, writes, task_id, task_path)])

    async def aput_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        """`SqliteSaver.put_batch`: ops in order in one transaction."""
        ops = [_with_expectation(op) for op in ops]
        return await self._arun("run_batch", ops, return_exceptions=return_exceptions)

    def writer(self, *, max_batch: int = 512) -> GroupCommitWriter:
        """A background group-commit writer (futures: wrap with `asyncio.wrap_future`)."""

        def commit(steps: Sequence[Any]) -> list[Any]:
            return self._run("run_steps", steps, return_exceptions=True)

        def prepare(op: PutOp | WritesOp) -> Any:
            return self._core.prepare(_with_expectation(op))

        return GroupCommitWriter(prepare, commit, max_batch=max_batch)

    async def adelete_thread(self, thread_id: str) -> None:
        await self._arun("delete_thread", thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._arun("delete_for_runs", run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._arun("copy_thread", source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._arun("prune", list(thread_ids), strategy)

    # --- sync API (same worker thread; usable from any thread) ------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run("get_tuple", config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        rows = self._run("list_rows", config, filter=filter, before=before, limit=limit)
        for i in range(0, len(rows), _LIST_CHUNK):
            yield from self._run("build_many", rows[i : i + _LIST_CHUNK])

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> RunnableConfig:
        op = PutOp(
            config, checkpoint, metadata, new_versions, expected_head_of(config, expected_head)
        )
        return self._run("run_batch", [op])[0]

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._run("run_batch", [WritesOp(config, writes, task_id, task_path)])

    def put_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        ops = [_with_expectation(op) for op in ops]
        return self._run("run_batch", ops, return_exceptions=return_exceptions)

    def delete_thread(self, thread_id: str) -> None:
        self._run("delete_thread", thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run("delete_for_runs", run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run("copy_thread", source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run("prune", list(thread_ids), strategy)

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """Same version strings as LangGraph's savers: `f"{n + 1:032}.{random:016}"`."""
        return InMemorySaver.get_next_version(self, current, channel)  # type: ignore[arg-type]
