"""The connection helper LangGraph's Postgres store imports (`..._internal`): a saver or
store takes a psycopg `Connection` or a `ConnectionPool`; `get_connection` yields a
connection from either."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Union

from psycopg import Connection
from psycopg.rows import DictRow
from psycopg_pool import ConnectionPool

Conn = Union[Connection[DictRow], ConnectionPool[Connection[DictRow]]]  # noqa: UP007

__all__ = ("Conn", "get_connection")


@contextmanager
def get_connection(conn: Any) -> Iterator[Connection[DictRow]]:
    if isinstance(conn, Connection):
        yield conn
    elif isinstance(conn, ConnectionPool):
        with conn.connection() as pooled:
            yield pooled
    else:
        raise TypeError(
            f"Expected a psycopg Connection or ConnectionPool, got {type(conn).__name__}"
        )
