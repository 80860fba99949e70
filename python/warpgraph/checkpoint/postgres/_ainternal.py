"""Async twin of `_internal`: an `AsyncConnection` or an `AsyncConnectionPool`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Union

from psycopg import AsyncConnection
from psycopg.rows import DictRow
from psycopg_pool import AsyncConnectionPool

Conn = Union[AsyncConnection[DictRow], AsyncConnectionPool[AsyncConnection[DictRow]]]  # noqa: UP007

__all__ = ("Conn", "get_connection")


@asynccontextmanager
async def get_connection(conn: Any) -> AsyncIterator[AsyncConnection[DictRow]]:
    if isinstance(conn, AsyncConnection):
        yield conn
    elif isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as pooled:
            yield pooled
    else:
        raise TypeError(
            f"Expected a psycopg AsyncConnection or AsyncConnectionPool, got {type(conn).__name__}"
        )
