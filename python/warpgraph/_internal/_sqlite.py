"""What warpgraph's SQLite classes (the savers and the stores) share: the connection
options of every `from_conn_string` and the once-only `setup`."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ("open_connection", "setup_once")


def open_connection(conn_string: str) -> sqlite3.Connection:
    """A connection to `conn_string` (a path, ":memory:" or a "file:" URI), usable from any
    thread (the callers serialise its use), in autocommit mode (they open transactions)."""
    return sqlite3.connect(
        conn_string,
        check_same_thread=False,
        isolation_level=None,
        uri=conn_string.startswith("file:"),
    )


def setup_once(owner: Any) -> None:
    """A sync SQLite class's `setup()`: `owner._setup_on(owner.conn)` under `owner.lock`,
    unless `owner.is_setup` says it ran already (then it is set)."""
    with owner.lock:
        if not owner.is_setup:
            owner._setup_on(owner.conn)
            owner.is_setup = True
