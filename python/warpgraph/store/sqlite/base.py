"""`SqliteStore`: the store in a SQLite database (LangGraph's `langgraph.store.sqlite`).

The tables are LangGraph's (`store`, `store_migrations`, and with an index `store_vectors`
/ `vector_migrations` holding float32 vectors), so a database written by either opens with
the other. Values are JSON text; filters run in SQL on `json_extract` with bound
parameters only; vector search ranks in Python (cosine similarity, no extension needed).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from warpgraph._internal._sqlite import open_connection, setup_once
from warpgraph.store._sql.dialect import SqliteDialect
from warpgraph.store._sql.plan import EXEC, run_batch, sweep
from warpgraph.store._sql.store import (
    SqlSession,
    SqlStoreConfig,
    SyncSweeping,
    drive,
)
from warpgraph.store.base import (
    NOT_PROVIDED,
    READABLE_NAMESPACES,
    BaseStore,
    IndexConfig,
    Item,
    NotProvided,
    Op,
    Result,
    SearchItem,
    TTLConfig,
    _check_read_namespace,
    _ensure_refresh,
    _ensure_ttl,
    _search_op_of,
    _ttl_unsupported,
    _validate_namespace,
    _validate_namespace_labels,
)
from warpgraph.store.sqlite import _direct

__all__ = ("MIGRATIONS", "VECTOR_MIGRATIONS", "SqliteIndexConfig", "SqliteStore")

_AIO_ERROR_MSG = (
    "The SqliteStore does not support async methods. "
    "Consider using AsyncSqliteStore instead.\n"
    "from langgraph.store.sqlite.aio import AsyncSqliteStore\n"
)

# Schema versions (index = version). Same tables and columns as LangGraph's SQLite store.
MIGRATIONS = [
    (
        "CREATE TABLE IF NOT EXISTS store (prefix TEXT NOT NULL, key TEXT NOT NULL,"
        " value TEXT NOT NULL, created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
        " updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (prefix, key))"
    ),
    "CREATE INDEX IF NOT EXISTS store_prefix_idx ON store (prefix)",
    "ALTER TABLE store ADD COLUMN expires_at TIMESTAMP",
    "ALTER TABLE store ADD COLUMN ttl_minutes REAL",
    (
        "CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at)"
        " WHERE expires_at IS NOT NULL"
    ),
]
VECTOR_MIGRATIONS = [
    (
        "CREATE TABLE IF NOT EXISTS store_vectors (prefix TEXT NOT NULL, key TEXT NOT NULL,"
        " field_name TEXT NOT NULL, embedding BLOB,"
        " created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
        " updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,"
        " PRIMARY KEY (prefix, key, field_name),"
        " FOREIGN KEY (prefix, key) REFERENCES store (prefix, key) ON DELETE CASCADE)"
    ),
]

RECENT_INDEX = (
    f"CREATE INDEX IF NOT EXISTS {SqliteDialect.recent_index} ON store"
    " (updated_at DESC, prefix, key)"
)
"""The recency index searches walk (warpgraph's; see `_sql.plan.recent_first`)."""


class SqliteIndexConfig(IndexConfig, total=False):
    """Vector-search settings of a SQLite store."""

    distance_type: str
    """Only "cosine" is computed (the default)."""
    text_fields: list[str] | None


def migrate(conn: sqlite3.Connection, table: str, migrations: list[str]) -> None:
    """Apply the migrations `table` has not recorded yet, in one transaction."""
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)")
        row = conn.execute(f"SELECT max(v) FROM {table}").fetchone()
        done = -1 if row[0] is None else row[0]
        for version in range(done + 1, len(migrations)):
            conn.execute(migrations[version])
            conn.execute(f"INSERT INTO {table} (v) VALUES (?)", (version,))
    except BaseException:
        if began:
            conn.execute("ROLLBACK")
        raise
    if began:
        conn.execute("COMMIT")
    else:
        conn.commit()


class _Session(SqlSession):
    """One batch on a sqlite3 connection: reads as they come, a transaction from the first
    write (unless the connection is in one already)."""

    __slots__ = ()

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__(conn, conn.cursor())

    def _begin(self) -> None:
        if not self.began and not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.began = True

    def close(self, ok: bool) -> None:
        try:
            if self.conn.in_transaction:
                if ok:
                    self.conn.commit()
                else:
                    self.conn.rollback()
        finally:
            self.cur.close()


class _CustomLoads(SqliteDialect):
    """The dialect with a caller's value deserializer."""

    def __init__(self, loads: Callable[[Any], Any]) -> None:
        self._loads = loads

    def decode_value(self, value: Any) -> Any:
        return value if isinstance(value, dict) else self._loads(value)


class SqliteStoreBase(SqlStoreConfig):
    """Constructor, configuration and schema of both SQLite stores (`conn`: a sqlite3
    connection for `SqliteStore`, an aiosqlite one for `AsyncSqliteStore`)."""

    _dialect = SqliteDialect()
    _custom_loads = _CustomLoads
    MIGRATIONS = MIGRATIONS
    VECTOR_MIGRATIONS = VECTOR_MIGRATIONS

    def __init__(
        self,
        conn: Any,
        *,
        deserializer: Callable[[Any], dict[str, Any]] | None = None,
        index: SqliteIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        super().__init__()  # the lock and sweeper of the store's kind (`_sql.store`)
        self._configure(conn, deserializer, index, ttl)
        self.is_setup = False

    def _setup_on(self, conn: sqlite3.Connection) -> None:
        migrate(conn, "store_migrations", self.MIGRATIONS)
        if self.index_config is not None:
            migrate(conn, "vector_migrations", self.VECTOR_MIGRATIONS)
        # not a numbered migration (LangGraph numbers its own): an extra index its store
        # ignores and SQLite maintains on its writes too
        conn.execute(RECENT_INDEX)
        if conn.in_transaction:
            conn.commit()


class SqliteStore(SqliteStoreBase, SyncSweeping, BaseStore):
    """A store in a SQLite database (sync; see `AsyncSqliteStore` for asyncio)."""

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        index: SqliteIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> Iterator[SqliteStore]:
        """A store on a new connection to `conn_string` (a path, ":memory:" or a "file:"
        URI), closed at the end."""
        conn = open_connection(conn_string)
        try:
            yield cls(conn, index=index, ttl=ttl)
        finally:
            conn.close()

    def setup(self) -> None:
        """Create or migrate the tables (idempotent); runs on first use if not called."""
        setup_once(self)

    @contextmanager
    def _session(self) -> Iterator[_Session]:
        if not self.is_setup:
            self.setup()
        with self.lock, _Session(self.conn) as session:
            yield session

    @contextmanager
    def _cursor(self, *, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """A cursor under the store's lock, in a transaction committed at the end (for
        maintenance and tests)."""
        with self._session() as session:
            if transaction:
                session.run(EXEC, "SELECT 1", [])  # opens the transaction
            yield session.cur

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # the one-statement methods bypass batch: a subclass that intercepts batch must see
        # every operation, so it gets the generic BaseStore methods back
        if cls.batch is not SqliteStore.batch:
            for name in ("get", "put", "delete", "search"):
                setattr(cls, name, getattr(BaseStore, name))

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if type(ops) is list and len(ops) == 1 and _direct.op_fast(self, ops[0]):
            if not self.is_setup:
                self.setup()
            with self.lock:
                return [_direct.run_fast(self, self.conn, ops[0])]
        return drive(run_batch(self, ops), self.embeddings, self._session)

    # --- one-statement single operations (see `_direct`); the rest go through `batch`
    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item under (namespace, key), or None."""
        if type(namespace) is not tuple or namespace not in READABLE_NAMESPACES:
            _check_read_namespace(namespace)
            namespace = tuple(namespace)
        if type(key) is not str:
            key = str(key)
        if self.ttl_config and not _direct.reads_fast(
            self, _ensure_refresh(self.ttl_config, refresh_ttl)
        ):  # (without a TTL config every get is one SELECT)
            return self.batch([self._get_op(namespace, key, refresh_ttl=refresh_ttl)])[0]
        if not self.is_setup:
            self.setup()
        with self.lock:
            return _direct.get_fast(self, self.conn, namespace, key)

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Any,
        index: Any = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Store (or replace) `value` under (namespace, key); `ttl` in minutes."""
        if self.index_config is not None:
            self.batch([self._put_op(namespace, key, value, index, ttl=ttl)])
            return
        if type(namespace) is not tuple or namespace not in _direct.VALID_NAMESPACES:
            _validate_namespace(namespace)
            _direct.remember_namespace(namespace)
        if ttl is NOT_PROVIDED:
            ttl = _ensure_ttl(self.ttl_config, ttl)
        elif ttl is not None and not self.supports_ttl:  # pragma: no cover - always True
            raise _ttl_unsupported(self)
        params = _direct.put_params(
            self, namespace, key if type(key) is str else str(key), value, ttl
        )
        if not self.is_setup:
            self.setup()
        with self.lock:
            _direct.write(self.conn, _direct.PUT_SQL, params)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under `namespace_prefix`, filtered and (with `query` and an index) ranked
        by similarity, newest first otherwise; `limit` / `offset` page the results."""
        if type(namespace_prefix) is not tuple or namespace_prefix not in READABLE_NAMESPACES:
            _check_read_namespace(namespace_prefix)
        op = _search_op_of(self, namespace_prefix, query, filter, limit, offset, refresh_ttl)
        if not _direct.op_fast(self, op):
            return self.batch([op])[0]  # type: ignore[return-value]
        if not self.is_setup:
            self.setup()
        with self.lock:
            return _direct.search_fast(self, self.conn, op)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the item under (namespace, key) (no error if absent)."""
        if self.index_config is not None:
            self.batch([self._delete_op(namespace, key)])
            return
        _validate_namespace_labels(namespace)
        if not self.is_setup:
            self.setup()
        with self.lock:
            _direct.write(self.conn, _direct.DELETE_SQL, (".".join(namespace), str(key)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        raise NotImplementedError(_AIO_ERROR_MSG)

    # --- TTL
    def sweep_ttl(self) -> int:
        """Delete the expired items now; returns how many."""
        return drive(sweep(self), None, self._session)[0]
