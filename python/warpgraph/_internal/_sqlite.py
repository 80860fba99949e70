"""The connection options every `from_conn_string` of warpgraph's SQLite classes uses."""

from __future__ import annotations

import sqlite3

__all__ = ("open_connection",)


def open_connection(conn_string: str) -> sqlite3.Connection:
    """A connection to `conn_string` (a path, ":memory:" or a "file:" URI), usable from any
    thread (the callers serialise its use), in autocommit mode (they open transactions)."""
    return sqlite3.connect(
        conn_string,
        check_same_thread=False,
        isolation_level=None,
        uri=conn_string.startswith("file:"),
    )
