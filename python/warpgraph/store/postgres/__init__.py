"""Postgres stores: `PostgresStore` (sync) and `AsyncPostgresStore` (asyncio); psycopg 3 is
imported only when a store is opened."""

from warpgraph.store.postgres.aio import AsyncPostgresStore
from warpgraph.store.postgres.base import PoolConfig, PostgresStore

__all__ = ("AsyncPostgresStore", "PoolConfig", "PostgresStore")
