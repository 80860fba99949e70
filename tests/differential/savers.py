"""The differential scenarios on SQL savers: each library's own SqliteSaver / PostgresSaver
in place of the InMemorySaver a scenario builds (`lib.InMemorySaver()` /
`lib.MemorySaver()` make a fresh saver of the kind; each saver starts empty)."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

SAVER_KINDS = ("sqlite", "postgres")


class SaverLib:
    """`lib`, with its in-memory saver classes replaced by `make` (a saver factory)."""

    def __init__(self, lib: Any, make: Any) -> None:
        self._lib = lib
        self._make = make
        self.name = lib.name

    def __getattr__(self, attr: str) -> Any:
        if attr in ("InMemorySaver", "MemorySaver"):
            return self._saver
        return getattr(self._lib, attr)

    def _saver(self, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise TypeError("the SQL saver variants take no saver arguments")
        return self._make()

    def __repr__(self) -> str:
        return f"SaverLib({self._lib!r})"


@dataclass
class SaverKind:
    """A saver kind for `compare_sync(..., saver=)`: "sqlite", or "postgres" with one
    database per library (`dsns`: library name -> DSN)."""

    kind: str
    dsns: dict[str, str] = field(default_factory=dict)

    def env(self, lib_name: str) -> SaverEnv:
        return SaverEnv(self.kind, lib_name, self.dsns.get(lib_name))


class SaverEnv:
    """Savers of one kind for one library, for one trace; `close()` releases them."""

    def __init__(self, kind: str, lib_name: str, dsn: str | None) -> None:
        if kind not in SAVER_KINDS:
            raise ValueError(f"unknown saver kind {kind!r}")
        if kind == "postgres" and dsn is None:
            raise ValueError("the postgres saver kind needs a DSN per library")
        self.kind = kind
        self.lib_name = lib_name
        self.dsn = dsn
        self.stack = ExitStack()
        self.n = 0
        self.dir: str | None = None

    def make(self) -> Any:
        self.n += 1
        if self.kind == "sqlite":
            return self._sqlite()
        return self._postgres()

    def _sqlite(self) -> Any:
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="wg-diff-")
        path = f"{self.dir}/{self.n}.db"
        if self.lib_name == "langgraph":
            from langgraph.checkpoint.sqlite import SqliteSaver

            conn = sqlite3.connect(path, check_same_thread=False)
            self.stack.callback(conn.close)
            return SqliteSaver(conn)
        from warpgraph.checkpoint.sqlite import SqliteSaver as WgSqliteSaver

        return self.stack.enter_context(WgSqliteSaver.from_conn_string(path))

    def _postgres(self) -> Any:
        if self.lib_name == "langgraph":
            from langgraph.checkpoint.postgres import PostgresSaver
        else:
            from warpgraph.checkpoint.postgres import PostgresSaver  # type: ignore[assignment]
        saver = self.stack.enter_context(PostgresSaver.from_conn_string(self.dsn))
        saver.setup()
        _truncate(self.dsn)
        return saver

    def close(self) -> None:
        try:
            self.stack.close()
        finally:
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)


def _truncate(dsn: str) -> None:
    """Empty every table but the migrations' (one database per library, reused)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                " AND tablename NOT LIKE '%migrations%'"
            )
        ]
        if names:
            conn.execute("TRUNCATE " + ", ".join(f'"{n}"' for n in names))
