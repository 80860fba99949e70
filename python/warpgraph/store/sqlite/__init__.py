"""SQLite stores: `SqliteStore` (sync) and `AsyncSqliteStore` (asyncio, `.aio`)."""

from warpgraph.store.sqlite.base import SqliteStore

__all__ = ("AsyncSqliteStore", "SqliteStore")


def __getattr__(name: str):
    if name == "AsyncSqliteStore":
        from warpgraph.store.sqlite.aio import AsyncSqliteStore

        return AsyncSqliteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
