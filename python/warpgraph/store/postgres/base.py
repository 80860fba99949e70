"""`PostgresStore`: the store in PostgreSQL (LangGraph's `langgraph.store.postgres`), on
psycopg 3, imported only when a store is opened.

The `store` / `store_migrations` tables are LangGraph's; vectors (with an index) live in
warpgraph's own `warpgraph_store_vectors` (float32 `bytea`, ranked in Python: no pgvector
needed). Filters are bound SQL over `jsonb` (see `warpgraph.store._sql.filters`). The plan
is the SQLite stores' (`warpgraph.store._sql.plan`); this module only runs its statements.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from warpgraph.store._sql.dialect import PostgresDialect
from warpgraph.store._sql.plan import EXEC, MANY, ROWS, run_batch, sweep
from warpgraph.store._sql.store import SqlStoreConfig, ThreadSweeper, drive
from warpgraph.store.base import BaseStore, IndexConfig, Op, Result, TTLConfig

try:
    from typing import TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import TypedDict

__all__ = ("MIGRATIONS", "VECTOR_MIGRATIONS", "PoolConfig", "PostgresIndexConfig", "PostgresStore")

MIGRATIONS = [
    (
        "CREATE TABLE IF NOT EXISTS store (prefix text NOT NULL, key text NOT NULL,"
        " value jsonb NOT NULL, created_at timestamptz DEFAULT CURRENT_TIMESTAMP,"
        " updated_at timestamptz DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key))"
    ),
    "CREATE INDEX IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops)",
    (
        "ALTER TABLE store ADD COLUMN IF NOT EXISTS expires_at timestamptz,"
        " ADD COLUMN IF NOT EXISTS ttl_minutes double precision"
    ),
    (
        "CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)"
        " WHERE expires_at IS NOT NULL"
    ),
]
VECTOR_MIGRATIONS = [
    (
        "CREATE TABLE IF NOT EXISTS warpgraph_store_vectors (prefix text NOT NULL,"
        " key text NOT NULL, field_name text NOT NULL, embedding bytea,"
        " PRIMARY KEY (prefix, key, field_name))"
    ),
]
# serializes concurrent setups across processes (inside the migration transaction)
_SETUP_LOCK_ID = 0x57_47_53_54  # "WGST"


class PoolConfig(TypedDict, total=False):
    """Connection pool settings for `from_conn_string(pool_config=...)`."""

    min_size: int
    max_size: int | None
    kwargs: dict


class PostgresIndexConfig(IndexConfig, total=False):
    """Vector-search settings of a Postgres store (ranking is cosine similarity)."""

    distance_type: str
    ann_index_config: dict


def _migration_steps(index: bool) -> list[tuple[str, list[str]]]:
    steps = [("store_migrations", MIGRATIONS)]
    if index:
        steps.append(("warpgraph_vector_migrations", VECTOR_MIGRATIONS))
    return steps


class _Session:
    """One batch on a psycopg connection; a transaction from the first write."""

    __slots__ = ("began", "conn", "cur")

    def __init__(self, conn: Any) -> None:
        from psycopg.rows import tuple_row

        self.conn = conn
        self.cur = conn.cursor(row_factory=tuple_row)
        self.began = False

    def _begin(self) -> None:
        if not self.began:
            self.began = True
            if self.conn.autocommit:
                self.cur.execute("BEGIN")

    def run(self, kind: int, sql: str, params: Any) -> Any:
        cur = self.cur
        if kind == ROWS:
            cur.execute(sql, params)
            return cur.fetchall()
        self._begin()
        if kind == EXEC:
            cur.execute(sql, params)
            return cur.rowcount
        if kind == MANY:
            cur.executemany(sql, params)
            return None
        raise ValueError(f"unknown statement kind {kind}")

    def close(self, ok: bool) -> None:
        try:
            if self.conn.autocommit:
                if self.began:
                    self.cur.execute("COMMIT" if ok else "ROLLBACK")
            elif ok:
                self.conn.commit()
            else:
                self.conn.rollback()
        finally:
            self.cur.close()


class _AsyncSession(_Session):
    """`_Session` for psycopg's AsyncConnection."""

    async def _abegin(self) -> None:
        if not self.began:
            self.began = True
            if self.conn.autocommit:
                await self.cur.execute("BEGIN")

    async def run(self, kind: int, sql: str, params: Any) -> Any:  # type: ignore[override]
        cur = self.cur
        if kind == ROWS:
            await cur.execute(sql, params)
            return await cur.fetchall()
        await self._abegin()
        if kind == EXEC:
            await cur.execute(sql, params)
            return cur.rowcount
        if kind == MANY:
            await cur.executemany(sql, params)
            return None
        raise ValueError(f"unknown statement kind {kind}")

    async def aclose(self, ok: bool) -> None:
        try:
            if self.conn.autocommit:
                if self.began:
                    await self.cur.execute("COMMIT" if ok else "ROLLBACK")
            elif ok:
                await self.conn.commit()
            else:
                await self.conn.rollback()
        finally:
            await self.cur.close()


class PostgresStoreBase(SqlStoreConfig):
    """Configuration shared by the sync and async Postgres stores."""

    _dialect = PostgresDialect()
    MIGRATIONS = MIGRATIONS
    VECTOR_MIGRATIONS = VECTOR_MIGRATIONS

    def _init_pg(self, conn: Any, pipe: Any, deserializer: Any, index: Any, ttl: Any) -> None:
        self.conn = conn
        self.pipe = pipe
        self._deserializer = deserializer
        if deserializer is not None:
            self._dialect = _CustomLoads(deserializer)
        self._configure(index, ttl)

    def _is_pool(self) -> bool:
        return hasattr(self.conn, "getconn")


class PostgresStore(PostgresStoreBase, BaseStore):
    """A store in PostgreSQL (sync; `AsyncPostgresStore` for asyncio). `conn`: a psycopg
    Connection (autocommit recommended) or ConnectionPool."""

    supports_ttl = True

    def __init__(
        self,
        conn: Any,
        *,
        pipe: Any = None,
        deserializer: Callable[[Any], dict[str, Any]] | None = None,
        index: PostgresIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        super().__init__()
        self._init_pg(conn, pipe, deserializer, index, ttl)
        self.lock = threading.Lock()
        self._sweeper = ThreadSweeper()

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: PoolConfig | None = None,
        index: PostgresIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> Iterator[PostgresStore]:
        """A store on a new connection (or, with `pool_config`, a pool) to `conn_string`,
        closed at the end. (`pipeline` is accepted for compatibility: each batch already
        runs as one transaction.)"""
        from psycopg import Connection

        if pool_config is not None:
            from psycopg_pool import ConnectionPool

            settings = dict(pool_config)
            kwargs = {
                "autocommit": True,
                "prepare_threshold": 0,
                **(settings.pop("kwargs", None) or {}),
            }
            with ConnectionPool(
                conn_string,
                min_size=settings.pop("min_size", 1),
                max_size=settings.pop("max_size", None),
                kwargs=kwargs,
                open=True,
                **settings,
            ) as pool:
                yield cls(pool, index=index, ttl=ttl)
            return
        with Connection.connect(conn_string, autocommit=True, prepare_threshold=0) as conn:
            yield cls(conn, index=index, ttl=ttl)

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        from warpgraph.checkpoint.postgres import _internal  # psycopg, on first use

        if self._is_pool():
            with _internal.get_connection(self.conn) as conn:
                yield conn
        else:
            with self.lock, _internal.get_connection(self.conn) as conn:
                yield conn

    @contextmanager
    def _session(self) -> Iterator[_Session]:
        with self._connection() as conn:
            session = _Session(conn)
            try:
                yield session
            except BaseException:
                session.close(False)
                raise
            session.close(True)

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        """A dict-row cursor on the store's connection (for maintenance and tests)."""
        from psycopg.rows import dict_row

        with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    def setup(self) -> None:
        """Create or migrate the tables (idempotent, safe across processes). Call once
        before first use."""
        with self._session() as session:
            for kind, sql, params in _setup_statements(self):
                session.run(kind, sql, params)
            for table, migrations in _migration_steps(self.index_config is not None):
                rows = session.run(ROWS, f"SELECT max(v) FROM {table}", [])
                done = -1 if rows[0][0] is None else rows[0][0]
                for version in range(done + 1, len(migrations)):
                    session.run(EXEC, migrations[version], [])
                    session.run(EXEC, f"INSERT INTO {table} (v) VALUES (%s)", [version])

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return drive(run_batch(self, ops), self.embeddings, self._session)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def sweep_ttl(self) -> int:
        """Delete the expired items now; returns how many."""
        return drive(sweep(self), None, self._session)[0]

    def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Any:
        """Sweep periodically on a daemon thread; returns a future done when it stops."""
        return self._sweeper.start(self, sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True once it has stopped."""
        return self._sweeper.stop(timeout)

    def __del__(self) -> None:
        sweeper = getattr(self, "_sweeper", None)
        if sweeper is not None:
            sweeper.stop(0.1)


def _setup_statements(store: Any) -> list[tuple[int, str, list]]:
    """The statements opening a setup transaction: the lock, then the version tables."""
    out = [(EXEC, "SELECT pg_advisory_xact_lock(%s)", [_SETUP_LOCK_ID])]
    for table, _ in _migration_steps(store.index_config is not None):
        out.append((EXEC, f"CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)", []))
    return out


class _CustomLoads(PostgresDialect):
    """The dialect with a caller's value deserializer (values arrive as jsonb text)."""

    def __init__(self, loads: Callable[[Any], Any]) -> None:
        self._loads = loads

    def decode_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            from warpgraph.store._sql.dialect import dumps

            value = dumps(value).encode()
        return self._loads(value)
