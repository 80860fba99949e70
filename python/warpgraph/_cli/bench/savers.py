"""Savers for a bench side: memory, a SQLite file in the run's temp dir, or Postgres in a
schema of the run's own. A `SaverHandle` also measures what the saver stored."""

from __future__ import annotations

import contextlib
import importlib
import os
import sqlite3
from collections.abc import Iterator
from typing import Any

SAVERS = ("memory", "sqlite", "postgres")

# payload columns per layout: table -> value columns summed by `stored_bytes`
_SQLITE_PAYLOAD = {
    "warpgraph": {
        "wg_checkpoints": ("checkpoint", "metadata"),
        "wg_blobs": ("blob",),
        "wg_writes": ("value",),
    },
    "langgraph": {"checkpoints": ("checkpoint", "metadata"), "writes": ("value",)},
}
_PG_PAYLOAD = {
    "warpgraph": {
        "warpgraph_checkpoints": ("checkpoint", "inline", "metadata"),
        "warpgraph_checkpoint_blobs": ("blob",),
        "warpgraph_checkpoint_writes": ("blob",),
    },
    "langgraph": {
        "checkpoints": ("checkpoint", "metadata"),
        "checkpoint_blobs": ("blob",),
        "checkpoint_writes": ("blob",),
    },
}
_CHECKPOINT_TABLE = {
    ("sqlite", "warpgraph"): "wg_checkpoints",
    ("sqlite", "langgraph"): "checkpoints",
    ("postgres", "warpgraph"): "warpgraph_checkpoints",
    ("postgres", "langgraph"): "checkpoints",
}


def dsn_with_schema(dsn: str, schema: str) -> str:
    """`dsn` with `search_path` set to `schema` (the savers' unqualified tables land there)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    options = conninfo_to_dict(dsn).get("options") or ""
    return make_conninfo(dsn, options=f"{options} -c search_path={schema}".strip())


class SaverHandle:
    """A saver plus how to measure its storage: `stored_bytes()` (payload bytes of every
    checkpoint record, metadata, blob and write) and `checkpoint_count(thread)`."""

    def __init__(self, lib: str, kind: str, saver: Any, conn: Any = None) -> None:
        self.lib, self.kind, self.saver, self.conn = lib, kind, saver, conn

    def stored_bytes(self) -> int:
        if self.kind == "memory":
            return _memory_bytes(self.saver)
        tables = (_SQLITE_PAYLOAD if self.kind == "sqlite" else _PG_PAYLOAD)[self.lib]
        size = "length" if self.kind == "sqlite" else "pg_column_size"
        total = 0
        for table, cols in tables.items():
            expr = " + ".join(f"coalesce({size}({c}), 0)" for c in cols)
            row = self._query(f"SELECT coalesce(sum({expr}), 0) FROM {table}")
            total += int(row[0][0])
        return total

    def checkpoint_count(self, thread_id: str) -> int:
        if self.kind == "memory":
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            return sum(1 for _ in self.saver.list(config))
        table = _CHECKPOINT_TABLE[(self.kind, self.lib)]
        mark = "?" if self.kind == "sqlite" else "%s"
        rows = self._query(
            f"SELECT count(*) FROM {table} WHERE thread_id = {mark} AND checkpoint_ns = ''",
            (thread_id,),
        )
        return int(rows[0][0])

    def thread_payloads(self, thread_id: str) -> tuple[int, list[bytes]]:
        """(checkpoints, the payload values stored for the thread): what a floor rewrites."""
        tables = (_SQLITE_PAYLOAD if self.kind == "sqlite" else _PG_PAYLOAD)[self.lib]
        mark = "?" if self.kind == "sqlite" else "%s"
        payloads: list[bytes] = []
        for table, cols in tables.items():
            for row in self._query(
                f"SELECT {', '.join(cols)} FROM {table} WHERE thread_id LIKE {mark}",
                (f"{thread_id}%",),
            ):
                payloads.extend(_as_bytes(v) for v in row if v is not None)
        table = _CHECKPOINT_TABLE[(self.kind, self.lib)]
        rows = self._query(
            f"SELECT count(*) FROM {table} WHERE thread_id LIKE {mark}", (f"{thread_id}%",)
        )
        return int(rows[0][0]), payloads

    def _query(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.kind == "sqlite":
            return self.conn.execute(sql, params).fetchall()
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    import json

    return json.dumps(value, separators=(",", ":")).encode()


def _memory_bytes(saver: Any) -> int:
    """What an in-memory saver's checkpoints serialize to (it stores no file)."""
    total = 0
    for tup in saver.list(None):
        total += len(saver.serde.dumps_typed(tup.checkpoint)[1])
        for write in tup.pending_writes or ():
            total += len(saver.serde.dumps_typed(write[2])[1])
    return total


def _saver_module(lib: str, kind: str) -> Any:
    return importlib.import_module(f"{lib}.checkpoint.{kind}")


@contextlib.contextmanager
def open_saver(lib: str, kind: str, workdir: str, dsn: str | None = None) -> Iterator[SaverHandle]:
    """A fresh saver of `lib` ("warpgraph" / "langgraph") on `kind`: a new SQLite file in
    `workdir`, or Postgres at `dsn` (whose search_path names the side's own schema).
    Both SQLite savers run in WAL mode with synchronous=NORMAL."""
    if kind == "memory":
        yield SaverHandle(
            lib, kind, importlib.import_module(f"{lib}.checkpoint.memory").InMemorySaver()
        )
        return
    if kind == "sqlite":
        path = os.path.join(workdir, f"{lib}.sqlite")
        mod = _saver_module(lib, "sqlite")
        if lib == "warpgraph":
            with (
                mod.SqliteSaver.from_conn_string(path, synchronous="NORMAL") as saver,
                contextlib.closing(sqlite3.connect(path)) as probe,
            ):
                yield SaverHandle(lib, kind, saver, probe)
            return
        conn = sqlite3.connect(path, check_same_thread=False)
        try:
            saver = mod.SqliteSaver(conn)
            saver.setup()
            conn.execute("PRAGMA synchronous = NORMAL")
            with contextlib.closing(sqlite3.connect(path)) as probe:
                yield SaverHandle(lib, kind, saver, probe)
        finally:
            conn.close()
        return
    if kind == "postgres":
        import psycopg

        mod = _saver_module(lib, "postgres")
        with mod.PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            with psycopg.connect(dsn, autocommit=True) as probe:
                yield SaverHandle(lib, kind, saver, probe)
        return
    raise ValueError(f"unknown saver {kind!r} (choose from {', '.join(SAVERS)})")
