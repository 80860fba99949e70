"""What `PostgresSaver` and `AsyncPostgresSaver` share: argument checks and the jobs of
every operation (the sans-IO generators of `_sql` / `_put`). The two classes differ only
in how they run a job on a connection (see `SqlSaverBase` for the API built on them)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

try:
    import psycopg
    from psycopg.rows import tuple_row  # noqa: F401 - for the saver modules
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "warpgraph.checkpoint.postgres needs psycopg 3 and psycopg_pool: "
        "install them with `pip install 'warpgraph[postgres]'`"
    ) from exc

from warpgraph.checkpoint._sql import PutOp, WritesOp
from warpgraph.checkpoint._sql.api import SqlSaverBase
from warpgraph.checkpoint._sql.appends import Tails
from warpgraph.checkpoint.base import CheckpointTuple, RunnableConfig, SerializerProtocol
from warpgraph.checkpoint.postgres import _put, _sql

# The savers' statements are prepared (prepare_threshold=0) and keyed by primary keys, so a
# generic plan is always right; PostgreSQL would otherwise re-plan each execution of the
# read query (a custom plan costs more to make than to run). Set on connections that
# `from_conn_string` creates, never on a caller's connection.
SESSION_SETUP = "SET plan_cache_mode = force_generic_plan"
TAILS = 4096  # (thread, ns, channel) tails kept for append deltas (`_sql/appends.py`)


def check_autocommit(conn: Any) -> None:
    """Raise ValueError if a plain connection is not in autocommit mode."""
    if getattr(conn, "autocommit", True) is False:
        raise ValueError(
            "the Postgres saver needs an autocommit connection: "
            "psycopg.connect(conn_string, autocommit=True)"
        )


def connect_kwargs(pipeline: bool, pool_size: int | None) -> dict[str, Any]:
    """psycopg connection options of `from_conn_string` (after checking its arguments)."""
    if pool_size is not None and pipeline:
        raise ValueError("pipeline=True cannot be combined with pool_size")
    return {"autocommit": True, "prepare_threshold": 0}


def pool_kwargs(size: int, kwargs: dict[str, Any], configure: Callable, open: bool) -> dict:
    """Options of the (async) connection pool `from_conn_string(pool_size=size)` creates."""
    return {"min_size": 1, "max_size": size, "kwargs": kwargs, "open": open, "configure": configure}


def recover_pipeline(pipe: Any) -> Any:
    """After a failed operation in pipeline mode: sync, so that the pipeline leaves its
    aborted state and the next operation runs (and reports its own outcome) instead of
    failing with PipelineAborted. Returns the awaitable of an async pipeline's sync."""
    try:
        return pipe.sync()
    except psycopg.Error:  # the failed operation's results: already reported
        return None


def raise_conflict(exc: psycopg.Error) -> None:
    """Raise the CheckpointConflictError `exc` stands for, if any (else return)."""
    conflict = _put.conflict_from(exc)
    if conflict is not None:
        raise conflict from None


class _Holding:
    """`with` / `async with`: hold `lock` (threading or asyncio), give `conn`."""

    __slots__ = ("conn", "lock")

    def __init__(self, lock: Any, conn: Any) -> None:
        self.lock, self.conn = lock, conn

    def __enter__(self) -> Any:
        self.lock.acquire()
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    async def __aenter__(self) -> Any:
        await self.lock.acquire()
        return self.conn

    async def __aexit__(self, *exc: object) -> None:
        self.lock.release()


class PostgresBase(SqlSaverBase):
    """Constructor checks, connection choice and jobs; subclasses set the class attributes
    and run jobs (`_exec` / `_aexec`, `_exec_batch` / `_aexec_batch`)."""

    _conn_type: type  # psycopg (Async)Connection
    _pool_type: str  # psycopg_pool class name
    _lock_type: Callable[[], Any]  # serialises a pipeline's operations
    _raw_cursor: Callable[[Any], Any]  # psycopg (Async)RawCursor

    def __init__(
        self,
        conn: Any,
        pipe: Any = None,
        serde: SerializerProtocol | None = None,
        *,
        append_deltas: bool = True,
    ) -> None:
        super().__init__(serde=serde)
        # append deltas (`_sql/appends.py`): a list value extending the one last stored or
        # read for its channel is stored as the appended items. Tails are kept when a put
        # is encoded (before it runs); a failed write drops them all (`_drop_tails`).
        self.append_deltas = append_deltas
        self._tails = Tails(TAILS) if append_deltas else None
        self.is_pool = _is_pool(conn, self._pool_type)
        name = self._conn_type.__name__
        if self.is_pool and pipe is not None:
            raise ValueError(f"pipe is only supported with a single {name}, not a pool")
        if not self.is_pool:
            if not isinstance(conn, self._conn_type):
                raise TypeError(
                    f"conn must be a psycopg {name} or {self._pool_type}, got {type(conn)!r}"
                )
            check_autocommit(conn)
        self.conn = conn
        self.pipe = pipe
        # A pipeline is not thread-safe and must not interleave operations: only pipeline
        # mode serialises operations.
        self._pipe_lock = self._lock_type() if pipe is not None else None
        self._bare = nullcontext(conn)
        self._write_cur: Any = None
        self._init_runtime()

    def _init_runtime(self) -> None:
        pass

    @property
    def _lists(self) -> Any:
        """The list encoder of puts (None: every value whole)."""
        tails = self._tails
        if tails is None:
            return None
        cached = self.__dict__.get("_wg_lists")
        if cached is None or cached[0] is not self.serde:  # (a `with_allowlist` clone)
            cached = (self.serde, tails.encoder(self.serde.dumps_typed, text_versions=True))
            self.__dict__["_wg_lists"] = cached
        return cached[1]

    @staticmethod
    def _first(op: Any) -> tuple[_sql.Query | None, Any]:
        """(an op's first query, None) or (None, its value): a `Write` (put / put_writes)
        is encoded already; a generator encodes and validates here, before a connection
        is taken."""
        if type(op) is _sql.Write:
            return op  # type: ignore[return-value]
        return _sql.start(op)

    @staticmethod
    def _wrote(op: Any, value: Any) -> Any:
        """An op's value once its write statement ran."""
        return value if type(op) is _sql.Write else _sql.resume(op, None)[1]

    def _failed(self, query: _sql.Query, exc: BaseException) -> None:
        """After an op's query raised `exc` (re-raised by the caller): a failed write drops
        the tails (no later put may extend what it held); a fence conflict is raised as
        CheckpointConflictError."""
        if query.raw:
            self._drop_tails()
        if isinstance(exc, psycopg.Error):
            raise_conflict(exc)

    def _drop_tails(self) -> None:
        """After a failed write: the next put of a channel must not extend a version that
        may not be stored."""
        if self._tails is not None:
            self._tails.forget()

    @classmethod
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        serde: SerializerProtocol | None = None,
        pool_size: int | None = None,
        append_deltas: bool = True,
    ) -> Any:
        """A saver on a new connection (or a pool of `pool_size` connections), closed on
        exit: a context manager (an async one for `AsyncPostgresSaver`)."""
        return cls._open(conn_string, pipeline, serde, pool_size, append_deltas)

    def _connection(self) -> Any:
        """The connection to run a job on, as a (sync or async) context manager."""
        if self.is_pool:
            return self.conn.connection()
        if self._pipe_lock is not None:
            return _Holding(self._pipe_lock, self.conn)
        return self._bare

    def _write_cursor(self, conn: Any) -> Any:
        """The RawCursor that runs writes (`Query.raw`) on `conn`. On the saver's own
        connection one is kept and reused: creating a psycopg cursor costs about as much as
        a small statement's client side, and sharing it between threads is safe because
        writes fetch nothing and psycopg runs `execute` entirely under the connection's
        lock. On a pool's connections, a new one per call (keeping them would pin the
        connections the pool discards)."""
        if self.is_pool:
            return self._raw_cursor(conn)
        cur = self._write_cur
        if cur is None or cur.closed:
            cur = self._write_cur = self._raw_cursor(conn)
        return cur

    # --- jobs (see `SqlSaverBase`)
    def _get_tuple_job(self, config: RunnableConfig) -> _sql.Op:
        return _sql.get_tuple_op(config)

    def _done_tuple(self, got: Any) -> CheckpointTuple | None:
        rows, chains = got
        return next(_sql.rows_to_tuples(self.serde, rows, chains, self._tails), None)

    def _list_job(self, config: Any, filter: Any, before: Any, limit: Any) -> _sql.Op:
        return _sql.list_page_op(self.serde, config, filter, before, limit)

    def _put_job(
        self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any, expected_head: Any
    ) -> _sql.Write:
        return _put.put_op(
            self.serde, config, checkpoint, metadata, new_versions, expected_head, self._lists
        )

    def _put_writes_job(
        self, config: Any, writes: Any, task_id: str, task_path: str, expected_head: Any
    ) -> _sql.Write:
        return _put.put_writes_op(self.serde, config, writes, task_id, task_path, expected_head)

    def _put_batch_job(self, ops: Sequence[PutOp | WritesOp], return_exceptions: bool) -> Any:
        """All or nothing: one op (`_put.batch_all_op`); else a list of ops run one by one."""
        lists = self._lists
        if return_exceptions:  # ops encoded one by one when run: errors stay per op
            return [functools.partial(_put.batch_op, self.serde, op, True, lists) for op in ops]
        return _put.batch_all_op(self.serde, ops, lists)

    def _delete_thread_job(self, thread_id: str) -> _sql.Op:
        return _sql.delete_threads_op([thread_id])

    def _delete_for_runs_job(self, run_ids: Sequence[str]) -> _sql.Op:
        return _sql.delete_for_runs_op(run_ids)

    def _copy_thread_job(self, source_thread_id: str, target_thread_id: str) -> _sql.Op:
        return _sql.copy_thread_op(source_thread_id, target_thread_id)

    def _prune_job(self, thread_ids: Sequence[str], strategy: str) -> _sql.Op:
        return _sql.prune_op(thread_ids, strategy)


def _is_pool(conn: Any, pool_type: str) -> bool:
    try:
        import psycopg_pool
    except ImportError:  # pragma: no cover
        return False
    return isinstance(conn, getattr(psycopg_pool, pool_type))
