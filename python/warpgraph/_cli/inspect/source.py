"""Opening the database the inspector is pointed at, read-only, and finding its layouts."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import Any

from warpgraph._cli.args import CliError
from warpgraph._cli.inspect import readers as r


def is_dsn(target: str) -> bool:
    low = target.lower()
    return low.startswith(("postgres://", "postgresql://")) or (
        "=" in target and any(k in low for k in ("dbname=", "host=", "user=", "port="))
    )


def _sqlite_tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def open_sqlite(path: str) -> tuple[Any, list[r.Reader]]:
    if not os.path.exists(path):
        raise CliError(f"no such database file: {path}")
    if os.path.isdir(path):
        raise CliError(f"{path} is a directory, not a SQLite database")
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False, isolation_level=None)
        tables = _sqlite_tables(conn)
    except sqlite3.Error as exc:
        raise CliError(f"cannot read {path} as a SQLite database ({exc})") from None
    found: list[r.Reader] = []
    if {"wg_checkpoints", "wg_writes", "wg_blobs"} <= tables:
        found.append(r.WarpgraphSqlite(conn))
    if {"checkpoints", "writes"} <= tables:
        found.append(r.LangGraphSqlite(conn))
    if not found:
        conn.close()
        raise CliError(
            f"{path} holds no checkpoint tables (warpgraph's wg_checkpoints or LangGraph's "
            "checkpoints)"
        )
    return conn, found


def _pg_tables(conn: Any) -> set[str]:
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = ANY (current_schemas(false))"
    ).fetchall()
    return {row[0] for row in rows}


def open_postgres(dsn: str) -> tuple[Any, list[r.Reader]]:
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError:
        raise CliError(
            "reading Postgres needs psycopg: pip install 'warpgraph[postgres]'"
        ) from None
    try:
        options = conninfo_to_dict(dsn).get("options") or ""
        ro = make_conninfo(dsn, options=f"{options} -c default_transaction_read_only=on".strip())
        conn = psycopg.connect(ro, autocommit=True, connect_timeout=5)
        tables = _pg_tables(conn)
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CliError(f"cannot connect to Postgres ({reason})") from None
    found: list[r.Reader] = []
    if {"warpgraph_checkpoints", "warpgraph_checkpoint_writes"} <= tables:
        found.append(r.WarpgraphPostgres(conn))
    if {"checkpoints", "checkpoint_blobs", "checkpoint_writes"} <= tables:
        found.append(r.LangGraphPostgres(conn))
    if not found:
        conn.close()
        raise CliError(
            "the database holds no checkpoint tables (warpgraph's warpgraph_checkpoints or "
            "LangGraph's checkpoints) in its search_path"
        )
    return conn, found


def open_target(target: str) -> tuple[Any, list[r.Reader]]:
    """(connection, readers of the layouts found); the caller closes the connection."""
    return open_postgres(target) if is_dsn(target) else open_sqlite(target)
