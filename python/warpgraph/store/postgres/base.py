"""`PostgresStore`: the store in PostgreSQL (LangGraph's `langgraph.store.postgres`), on
psycopg 3, imported only when a store is opened.

The `store` / `store_migrations` tables are LangGraph's; vectors (with an index) live in
warpgraph's own `warpgraph_store_vectors` (float32 `bytea`, ranked in Python: no pgvector
needed). Filters are bound SQL over `jsonb` (see `warpgraph.store._sql.filters`). The plan
is the SQLite stores' (`warpgraph.store._sql.plan`); this module only runs its statements.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from warpgraph.store._sql.dialect import PostgresDialect
from warpgraph.store._sql.plan import EXEC, MANY, ROWS, Plan, run_batch, sweep
from warpgraph.store._sql.store import (
    SqlSession,
    SqlStoreConfig,
    SyncSweeping,
    drive,
)
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


class _Session(SqlSession):
    """One batch on a psycopg connection; a transaction from the first write."""

    __slots__ = ()

    def __init__(self, conn: Any) -> None:
        from psycopg.rows import tuple_row

        super().__init__(conn, conn.cursor(row_factory=tuple_row))

    def _begin(self) -> None:
        if not self.began:
            self.began = True
            if self.conn.autocommit:
                self.cur.execute("BEGIN")

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
    """`_Session` for psycopg's AsyncConnection (its twin, awaiting the driver)."""

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

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        await self.aclose(exc_type is None)

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


class _CustomLoads(PostgresDialect):
    """The dialect with a caller's value deserializer (values arrive as jsonb text)."""

    def __init__(self, loads: Callable[[Any], Any]) -> None:
        self._loads = loads

    def decode_value(self, value: Any) -> Any:
        if isinstance(value, dict):
            from warpgraph.store._sql.dialect import dumps

            value = dumps(value).encode()
        return self._loads(value)


class PostgresStoreBase(SqlStoreConfig):
    """Constructor and configuration shared by the sync and async Postgres stores."""

    _dialect = PostgresDialect()
    _custom_loads = _CustomLoads
    MIGRATIONS = MIGRATIONS
    VECTOR_MIGRATIONS = VECTOR_MIGRATIONS
    _pipe_on_pool: str | None = None
    """The error a `pipe` given with a pool raises (None: no check)."""

    def __init__(
        self,
        conn: Any,
        *,
        pipe: Any = None,
        deserializer: Callable[[Any], dict[str, Any]] | None = None,
        index: PostgresIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if pipe is not None and self._pipe_on_pool is not None and hasattr(conn, "getconn"):
            raise ValueError(self._pipe_on_pool)
        super().__init__()  # the lock and sweeper of the store's kind (`_sql.store`)
        self._configure(conn, deserializer, index, ttl)
        self.pipe = pipe

    def _is_pool(self) -> bool:
        return hasattr(self.conn, "getconn")


_CONNECT = {"autocommit": True, "prepare_threshold": 0}  # from_conn_string's connections


def _pool_options(pool_config: PoolConfig) -> dict[str, Any]:
    """`from_conn_string`'s keyword arguments to the pool (min_size, max_size, the
    connections' kwargs, the pool's other settings). Connections autocommit, without
    prepared statements, unless the config's kwargs say otherwise."""
    settings: dict[str, Any] = dict(pool_config)
    kwargs = {**_CONNECT, **(settings.pop("kwargs", None) or {})}
    return {
        "min_size": settings.pop("min_size", 1),
        "max_size": settings.pop("max_size", None),
        "kwargs": kwargs,
        **settings,
    }


class PostgresStore(PostgresStoreBase, SyncSweeping, BaseStore):
    """A store in PostgreSQL (sync; `AsyncPostgresStore` for asyncio). `conn`: a psycopg
    Connection (autocommit recommended) or ConnectionPool."""

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

            with ConnectionPool(conn_string, open=True, **_pool_options(pool_config)) as pool:
                yield cls(pool, index=index, ttl=ttl)
            return
        with Connection.connect(conn_string, **_CONNECT) as conn:
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
        with self._connection() as conn, _Session(conn) as session:
            yield session

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[Any]:
        """A dict-row cursor on the store's connection (for maintenance and tests)."""
        from psycopg.rows import dict_row

        with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    def setup(self) -> None:
        """Create or migrate the tables (idempotent, safe across processes). Call once
        before first use."""
        drive(_setup_plan(self), None, self._session)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return drive(run_batch(self, ops), self.embeddings, self._session)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, ops)

    def sweep_ttl(self) -> int:
        """Delete the expired items now; returns how many."""
        return drive(sweep(self), None, self._session)[0]


def _setup_plan(store: Any) -> Plan:
    """Both stores' setup as a plan (one transaction; `drive` / `adrive` run it): the
    lock, the version tables, then each migration a table has not recorded yet."""
    steps = _migration_steps(store.index_config is not None)
    yield (EXEC, "SELECT pg_advisory_xact_lock(%s)", [_SETUP_LOCK_ID])
    for table, _ in steps:
        yield (EXEC, f"CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)", [])
    for table, migrations in steps:
        rows = yield (ROWS, f"SELECT max(v) FROM {table}", [])
        done = -1 if rows[0][0] is None else rows[0][0]
        for version in range(done + 1, len(migrations)):
            yield (EXEC, migrations[version], [])
            yield (EXEC, f"INSERT INTO {table} (v) VALUES (%s)", [version])
