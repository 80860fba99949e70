"""A cache in an SQLite database (a file shared by processes, or ":memory:")."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from warpgraph.cache.base import BaseCache, FullKey, Namespace, ValueT, expiry_of
from warpgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ("SqliteCache",)

# One table, the layout LangGraph's SqliteCache uses (a namespace is stored with its parts
# joined by ","), so either library can read a cache file the other wrote.
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS cache ("
    " ns TEXT, key TEXT, expiry REAL, encoding TEXT NOT NULL, val BLOB NOT NULL,"
    " PRIMARY KEY (ns, key))"
)
_CHUNK = 400  # (ns, key) pairs per SELECT: two variables each, under SQLite's old 999 cap


def _ns_text(ns: Sequence[str]) -> str:
    return ",".join(ns)


class SqliteCache(BaseCache[ValueT]):
    """Entries in table `cache` of the database at `path`; one connection, used under a
    lock (the async methods run the sync ones in a worker thread)."""

    def __init__(self, *, path: str, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)

    def _run(self, fn: Any, *args: Any) -> Any:
        """`fn(conn, *args)` inside one transaction."""
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn(conn, *args)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return out

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        if not keys:
            return {}
        wanted = {(_ns_text(ns), key): (tuple(ns), key) for ns, key in keys}
        rows = self._run(self._select, list(wanted))
        loads = self.serde.loads_typed
        return {wanted[(ns, key)]: loads((tag, data)) for ns, key, tag, data in rows}

    @staticmethod
    def _select(conn: sqlite3.Connection, pairs: list[tuple[str, str]]) -> list[tuple]:
        now = time.time()
        live: list[tuple] = []
        expired: list[tuple[str, str]] = []
        for i in range(0, len(pairs), _CHUNK):
            part = pairs[i : i + _CHUNK]
            marks = ",".join(["(?,?)"] * len(part))
            flat = [x for pair in part for x in pair]
            for ns, key, expires, tag, data in conn.execute(
                f"SELECT ns, key, expiry, encoding, val FROM cache WHERE (ns, key) IN ({marks})",
                flat,
            ):
                if expires is not None and now >= expires:
                    expired.append((ns, key))
                else:
                    live.append((ns, key, tag, data))
        if expired:
            conn.executemany("DELETE FROM cache WHERE ns = ? AND key = ?", expired)
        return live

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return await asyncio.to_thread(self.get, keys)

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        if not pairs:
            return
        dumps = self.serde.dumps_typed
        now = time.time()
        rows = []
        for (ns, key), (value, ttl) in pairs.items():
            tag, data = dumps(value)
            rows.append((_ns_text(ns), key, expiry_of(ttl, now), tag, data))
        self._run(
            lambda conn: conn.executemany(
                "INSERT OR REPLACE INTO cache (ns, key, expiry, encoding, val)"
                " VALUES (?, ?, ?, ?, ?)",
                rows,
            )
        )

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        await asyncio.to_thread(self.set, pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        if namespaces is None:
            self._run(lambda conn: conn.execute("DELETE FROM cache"))
        else:
            names = [(_ns_text(ns),) for ns in namespaces]
            self._run(lambda conn: conn.executemany("DELETE FROM cache WHERE ns = ?", names))

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        await asyncio.to_thread(self.clear, namespaces)

    def close(self) -> None:
        """Close the connection (the cache is unusable afterwards)."""
        with self._lock:
            self._conn.close()

    def __del__(self) -> None:
        try:
            self._conn.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown or never opened
            pass
