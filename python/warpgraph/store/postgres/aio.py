"""`AsyncPostgresStore`: the Postgres store for asyncio (psycopg's AsyncConnection or
AsyncConnectionPool). Same plan and tables as `PostgresStore`; concurrent calls are merged
into one batch (`AsyncBatchedBaseStore`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from warpgraph.store._sql.plan import run_batch, sweep
from warpgraph.store._sql.store import AsyncSweeping, adrive
from warpgraph.store.base import Op, Result, TTLConfig
from warpgraph.store.base.batch import AsyncBatchedBaseStore
from warpgraph.store.postgres.base import (
    _CONNECT,
    PoolConfig,
    PostgresIndexConfig,
    PostgresStoreBase,
    _AsyncSession,
    _pool_options,
    _setup_plan,
)

__all__ = ("AsyncPostgresStore",)


class AsyncPostgresStore(PostgresStoreBase, AsyncSweeping, AsyncBatchedBaseStore):
    """A store in PostgreSQL for asyncio code (psycopg's AsyncConnection or
    AsyncConnectionPool; constructed like `PostgresStore`, inside a running event loop)."""

    _pipe_on_pool = (
        "Pipeline should be used only with a single AsyncConnection, not AsyncConnectionPool."
    )

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls,
        conn_string: str,
        *,
        pipeline: bool = False,
        pool_config: PoolConfig | None = None,
        index: PostgresIndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> AsyncIterator[AsyncPostgresStore]:
        """A store on a new async connection (or pool) to `conn_string`, closed at the end."""
        from psycopg import AsyncConnection

        if pool_config is not None:
            from psycopg_pool import AsyncConnectionPool

            options = _pool_options(pool_config)
            async with AsyncConnectionPool(conn_string, open=False, **options) as pool:
                yield cls(pool, index=index, ttl=ttl)
            return
        async with await AsyncConnection.connect(conn_string, **_CONNECT) as conn:
            yield cls(conn, index=index, ttl=ttl)

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        from warpgraph.checkpoint.postgres import _ainternal  # psycopg, on first use

        if self._is_pool():
            async with _ainternal.get_connection(self.conn) as conn:
                yield conn
        else:
            async with self.lock, _ainternal.get_connection(self.conn) as conn:
                yield conn

    @asynccontextmanager
    async def _asession(self) -> AsyncIterator[_AsyncSession]:
        async with self._connection() as conn, _AsyncSession(conn) as session:
            yield session

    @asynccontextmanager
    async def _cursor(self, *, pipeline: bool = False) -> AsyncIterator[Any]:
        """A dict-row cursor on the store's connection (for maintenance and tests)."""
        from psycopg.rows import dict_row

        async with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    async def setup(self) -> None:
        """Create or migrate the tables (idempotent, safe across processes)."""
        await adrive(_setup_plan(self), None, self._asession)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await adrive(run_batch(self, ops), self.embeddings, self._asession)

    async def sweep_ttl(self) -> int:
        """Delete the expired items now; returns how many."""
        return (await adrive(sweep(self), None, self._asession))[0]
