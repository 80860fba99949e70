"""One-operation fast paths of both SQLite stores: a `get`, `put` or `delete` that needs no
embedding and no TTL bookkeeping is ONE constant statement (so sqlite3's statement cache
keeps it prepared), with no op objects, no plan and no explicit transaction; such a
`search` (no query vector) is its page's statement (`plan.search_page`) run directly.

A write outside a transaction in autocommit mode (`isolation_level=None`) is SQLite's own
implicit transaction, committed when the statement ends: on disk exactly as LangGraph's
`BEGIN; INSERT ...; COMMIT` is, one statement instead of three. On a connection that
manages transactions itself (the sqlite3 default) the write is committed before returning.

`op_fast(store, op)` says whether an op qualifies; `run_fast(store, conn, op)` runs it on a
connection (the sync store on the caller's thread, the async one on aiosqlite's thread).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from typing import Any

from warpgraph.store._sql.dialect import SqliteDialect
from warpgraph.store._sql.dialect import loads as _loads
from warpgraph.store._sql.plan import search_items, search_page, stamp_item
from warpgraph.store.base import GetOp, Item, PutOp, SearchOp, validate_op_namespace

__all__ = (
    "DELETE_SQL",
    "GET_SQL",
    "PUT_SQL",
    "VALID_NAMESPACES",
    "get_fast",
    "op_fast",
    "put_params",
    "reads_fast",
    "remember_namespace",
    "run_fast",
    "run_fast_on",
    "search_fast",
    "write",
)

GET_SQL = "SELECT value, created_at, updated_at FROM store WHERE prefix = ? AND key = ?"
PUT_SQL = SqliteDialect().upsert(1)
DELETE_SQL = "DELETE FROM store WHERE prefix = ? AND key = ?"

_UTC = timezone.utc
_now = datetime.now
_new_item = Item.__new__

VALID_NAMESPACES: set[tuple[str, ...]] = set()
"""Namespace tuples that passed the write validation (so a put checks them once)."""


def remember_namespace(namespace: Any) -> None:
    if type(namespace) is tuple and len(VALID_NAMESPACES) < 4096:
        VALID_NAMESPACES.add(namespace)


def reads_fast(store: Any, refresh: bool) -> bool:
    """Whether a get is one SELECT: no expired rows to hide and no TTL to restart."""
    ttl = store.ttl_config
    if not ttl:
        return True
    return not ttl.get("omit_expired") and not (refresh and ttl.get("refresh_on_read"))


def run_fast_on(conn: sqlite3.Connection, store: Any, op: Any) -> Any:
    """`run_fast` with the connection first (the async store's thread-job signature)."""
    return run_fast(store, conn, op)


def op_fast(store: Any, op: Any) -> bool:
    """Whether `op` (one of a batch of one) runs as one statement."""
    kind = type(op)
    if kind is GetOp:
        return reads_fast(store, op.refresh_ttl)
    if kind is SearchOp:
        return not (op.query and store.embeddings is not None) and reads_fast(store, op.refresh_ttl)
    return kind is PutOp and store.index_config is None


def search_fast(store: Any, conn: sqlite3.Connection, op: SearchOp) -> list:
    """An unranked search needing no TTL work: its page's statement (the recency walk,
    and the full query only when the walk comes back short), rows made items."""
    d = store._dialect
    page = search_page(d, op, False, None)
    reply = None
    while True:
        try:
            request = page.send(reply)
        except StopIteration as stop:
            return search_items(d, stop.value)
        reply = conn.execute(request[1], request[2]).fetchall()


def write(conn: sqlite3.Connection, sql: str, params: tuple) -> None:
    """One write statement, committed when this returns."""
    conn.execute(sql, params)
    if conn.in_transaction:
        conn.commit()


def get_fast(
    store: Any, conn: sqlite3.Connection, namespace: tuple[str, ...], key: str
) -> Item | None:
    row = conn.execute(GET_SQL, (".".join(namespace), key)).fetchone()
    if row is None:
        return None
    item = _new_item(Item)
    value = row[0]
    d = store._dialect
    item.value = (
        _loads(value) if type(value) is str and type(d) is SqliteDialect else d.decode_value(value)
    )
    item.key = key
    item.namespace = namespace
    stamp_item(item, row[1], row[2])
    return item


def put_params(store: Any, namespace: tuple[str, ...], key: str, value: Any, ttl: Any) -> tuple:
    now = _now(_UTC)
    stamp = now.isoformat(" ")
    if ttl is None:
        expires = None
    else:
        expires = (now + timedelta(minutes=ttl)).isoformat(" ")
    encoded = store._dialect.encode_value(value if type(value) is dict else dict(value))
    return (".".join(namespace), key, encoded, stamp, stamp, expires, ttl)


def run_fast(store: Any, conn: sqlite3.Connection, op: Any) -> Any:
    """Run one qualifying op (see `op_fast`) on `conn`; returns its result."""
    validate_op_namespace(op)
    if type(op) is GetOp:
        return get_fast(store, conn, op.namespace, op.key)
    if type(op) is SearchOp:
        return search_fast(store, conn, op)
    if op.value is None:
        write(conn, DELETE_SQL, (".".join(op.namespace), op.key))
    else:
        ttl = op.ttl if store.supports_ttl else None
        write(conn, PUT_SQL, put_params(store, op.namespace, op.key, op.value, ttl))
    return None
