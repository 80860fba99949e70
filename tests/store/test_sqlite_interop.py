"""SQLite store files are shared with LangGraph's SqliteStore both ways (what one writes the
other reads, on the same file, setup run by either), and the one-statement paths and the
recency-ordered search page answer as the general batch path and LangGraph do."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime

import pytest
from warpgraph.store.base import GetOp, PutOp
from warpgraph.store.sqlite import SqliteStore
from warpgraph.store.sqlite._direct import GET_SQL, PUT_SQL

from tests.store._common import norm

lg_sqlite = pytest.importorskip("langgraph.store.sqlite")

ITEMS = [
    (
        ("docs", "u1"),
        "a",
        {"n": 1, "kind": "x", "text": "caf\u00e9 \u2603", "nested": {"l": [1, 2]}},
    ),
    (("docs", "u1"), "b", {"n": 2, "kind": "y", "ok": True, "none": None}),
    (("docs", "u2"), "c", {"n": 3.5, "kind": "x", "tags": ["p", "q"]}),
    (("users", "u9", "prefs"), "d", {"n": 4, "kind": "z", "quote": 'o\'k "q"'}),
]


def _connect(path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    return conn


def _view(store) -> dict:
    """What a reader sees of the file: gets, searches (order included) and namespaces."""
    return {
        "get": [norm(store.get(ns, key)) for ns, key, _ in ITEMS],
        "missing": store.get(("docs", "u1"), "zz"),
        "search": sorted(norm(store.search(("docs",), limit=100))),
        "filter": sorted(norm(store.search((), filter={"kind": "x"}, limit=100))),
        "ns": [tuple(n) for n in store.list_namespaces()],
    }


def _timestamps_are_datetimes(store) -> None:
    for ns, key, _ in ITEMS:
        item = store.get(ns, key)
        assert isinstance(item.created_at, datetime), item
        assert isinstance(item.updated_at, datetime), item
        assert item.updated_at >= item.created_at


def _write(store) -> None:
    for ns, key, value in ITEMS:
        store.put(ns, key, value)
    store.put(("docs", "u1"), "b", {**ITEMS[1][2], "n": 20})  # replace
    store.put(("docs", "gone"), "g", {"n": 0})
    store.delete(("docs", "gone"), "g")


@pytest.mark.parametrize("writer", ["langgraph", "warpgraph"])
def test_a_file_written_by_one_library_reads_the_same_in_the_other(tmp_path, writer) -> None:
    path = str(tmp_path / "store.db")
    libs = {"langgraph": lg_sqlite.SqliteStore, "warpgraph": SqliteStore}
    reader = "warpgraph" if writer == "langgraph" else "langgraph"
    w = libs[writer](_connect(path))
    w.setup()
    _write(w)
    r = libs[reader](_connect(path))
    r.setup()  # migrating a file the other library set up is a no-op
    assert _view(r) == _view(w)
    assert norm(r.get(("docs", "u1"), "b"))[2]["n"] == 20
    assert r.get(("docs", "gone"), "g") is None
    _timestamps_are_datetimes(r)
    # and back: the reader writes, the writer reads it
    r.put(("docs", "u2"), "c", {"n": 30, "kind": "x"})
    r.delete(("docs", "u1"), "a")
    assert w.get(("docs", "u1"), "a") is None
    assert norm(w.get(("docs", "u2"), "c")) == (("docs", "u2"), "c", {"n": 30, "kind": "x"}, None)
    assert _view(w) == _view(r)


def test_warpgraph_setup_on_a_langgraph_file_keeps_langgraph_migrations(tmp_path) -> None:
    path = str(tmp_path / "store.db")
    lg = lg_sqlite.SqliteStore(_connect(path))
    lg.setup()
    before = lg.conn.execute("SELECT v FROM store_migrations ORDER BY v").fetchall()
    ours = SqliteStore(_connect(path))
    ours.setup()
    after = lg.conn.execute("SELECT v FROM store_migrations ORDER BY v").fetchall()
    assert after == before  # our extra index is not a numbered migration
    names = {r[0] for r in lg.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "store_recent_idx" in names
    lg2 = lg_sqlite.SqliteStore(_connect(path))
    lg2.setup()  # LangGraph still opens it
    lg2.put(("a",), "k", {"v": 1})
    assert ours.get(("a",), "k").value == {"v": 1}


def test_search_order_matches_langgraph_when_timestamps_differ(tmp_path) -> None:
    """Newest first. LangGraph stamps whole seconds, so its order is only comparable
    across seconds: rows get explicit, distinct stamps here (LangGraph's format and ours
    mixed), then both stores read the same file."""
    path = str(tmp_path / "store.db")
    ours = SqliteStore(_connect(path))
    for i in range(30):
        ours.put(("docs", f"u{i % 3}"), f"k{i}", {"i": i, "even": i % 2 == 0})
    stamps = [
        f"2026-01-01 00:00:{i:02d}" if i % 2 else f"2026-01-01 00:00:{i:02d}.500000+00:00"
        for i in range(30)
    ]
    order = [7, 3, 29, 0, 15, 22, 11, 1, 18, 26, 5, 9, 13, 2, 28, 4, 6, 8, 10, 12]
    order += [14, 16, 17, 19, 20, 21, 23, 24, 25, 27]
    for stamp, i in zip(stamps, order, strict=True):
        ours.conn.execute("UPDATE store SET updated_at = ? WHERE key = ?", (stamp, f"k{i}"))
    lg = lg_sqlite.SqliteStore(_connect(path))
    for prefix, flt, limit, offset in [
        (("docs",), None, 10, 0),
        (("docs",), None, 7, 5),
        (("docs", "u1"), None, 4, 0),
        (("docs",), {"even": True}, 5, 2),
        ((), {"i": {"$gte": 10}}, 100, 0),
    ]:
        got = [r.key for r in ours.search(prefix, filter=flt, limit=limit, offset=offset)]
        ref = [r.key for r in lg.search(prefix, filter=flt, limit=limit, offset=offset)]
        assert got == ref, (prefix, flt, limit, offset)


def test_the_recency_page_falls_back_when_the_walk_stops_short(tmp_path, monkeypatch) -> None:
    """A namespace whose items are all older than the walk's budget still gets its page
    (the full query answers), and ties in updated_at order by (prefix, key)."""
    from warpgraph.store._sql import plan

    monkeypatch.setattr(plan, "_PROBE_BUDGET", 5)
    monkeypatch.setattr(plan, "_PROBE_PER_ROW", 1)
    store = SqliteStore(_connect(str(tmp_path / "s.db")))
    for i in range(6):
        store.put(("old",), f"o{i}", {"i": i})
    for i in range(40):
        store.put(("new",), f"n{i}", {"i": i})
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    assert sorted(r.key for r in store.search(("old",), limit=3)) == ["o3", "o4", "o5"]
    assert [("INDEXED BY" in s, "ORDER BY updated_at DESC, prefix" in s) for s in statements] == [
        (True, True),  # the walk: nothing in its 5 entries
        (False, True),  # the full query
    ]
    statements.clear()
    assert [r.key for r in store.search(("new",), limit=3)] == ["n39", "n38", "n37"]
    assert len(statements) == 1  # the walk answered
    store.conn.execute("UPDATE store SET updated_at = '2026-01-01 00:00:00'")
    got = [(tuple(r.namespace), r.key) for r in store.search((), limit=4, offset=1)]
    assert got == [(("new",), "n1"), (("new",), "n10"), (("new",), "n11"), (("new",), "n12")]


def test_rows_with_odd_stamps_are_ordered_by_sqlite(tmp_path) -> None:
    """NULL and numeric updated_at values (foreign writers) sort as SQLite sorts them."""
    store = SqliteStore(_connect(str(tmp_path / "s.db")))
    for i in range(5):
        store.put(("n",), f"k{i}", {"i": i})
    store.conn.execute("UPDATE store SET updated_at = NULL WHERE key = 'k1'")
    store.conn.execute("UPDATE store SET updated_at = 5 WHERE key = 'k3'")
    got = [r.key for r in store.search(("n",), limit=5)]
    (ref,) = store.conn.execute(
        "SELECT group_concat(key) FROM (SELECT key FROM store"
        " ORDER BY updated_at DESC, prefix, key)"
    ).fetchone()
    assert got == ref.split(",")
    assert got[-1] == "k1"


def test_one_statement_paths_answer_as_the_batch_path(tmp_path) -> None:
    store = SqliteStore(_connect(str(tmp_path / "s.db")))
    store.put(("a", "b"), "k", {"v": [1, {"x": None}]})
    direct = store.get(("a", "b"), "k")
    (batched,) = store.batch([GetOp(("a", "b"), "k"), GetOp(("a", "b"), "zz")])[:1]
    assert direct == batched
    assert direct.created_at == direct.updated_at
    store.batch([PutOp(("a", "b"), "k", {"v": 2}), PutOp(("a", "b"), "k2", {"v": 3})])
    assert store.get(("a", "b"), "k").value == {"v": 2}
    assert store.batch([GetOp(("a", "b"), "k2")])[0].value == {"v": 3}
    store.batch([PutOp(("a", "b"), "k2", None)])
    assert store.get(("a", "b"), "k2") is None
    # the single statements are the constant ones (kept prepared by sqlite3)
    assert "?" in GET_SQL and "ON CONFLICT" in PUT_SQL


def test_one_statement_writes_are_committed(tmp_path) -> None:
    """A put that returned is in the file: a second connection sees it, whether the
    connection autocommits or manages transactions itself (the sqlite3 default)."""
    path = str(tmp_path / "s.db")
    for conn in (_connect(path), sqlite3.connect(path, check_same_thread=False)):
        store = SqliteStore(conn)
        store.put(("c",), "k", {"mode": str(conn.isolation_level)})
        assert not conn.in_transaction
        other = sqlite3.connect(path)
        (value,) = other.execute("SELECT value FROM store WHERE key = 'k'").fetchone()
        assert str(conn.isolation_level) in value
        store.delete(("c",), "k")
        assert other.execute("SELECT count(*) FROM store").fetchone() == (0,)
        other.close()


def test_one_statement_paths_validate_like_the_generic_ones(tmp_path) -> None:
    store = SqliteStore(_connect(str(tmp_path / "s.db")))
    with pytest.raises(ValueError, match="cannot contain periods"):
        store.put(("a.b",), "k", {})
    with pytest.raises(ValueError, match="cannot be empty"):
        store.put((), "k", {})
    with pytest.raises(ValueError, match="must be strings"):
        store.get(("a", 1), "k")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Root label"):
        store.put(("langgraph", "x"), "k", {})
    store.put(("a",), 7, {"v": 1})  # type: ignore[arg-type]
    assert store.get(("a",), "7").key == "7"


def test_a_subclass_overriding_batch_sees_every_operation(tmp_path) -> None:
    seen: list = []

    class Spy(SqliteStore):
        def batch(self, ops):
            ops = list(ops)
            seen.extend(type(op).__name__ for op in ops)
            return super().batch(ops)

    store = Spy(_connect(str(tmp_path / "s.db")))
    store.put(("a",), "k", {"v": 1})
    assert store.get(("a",), "k").value == {"v": 1}
    store.delete(("a",), "k")
    assert seen == ["PutOp", "GetOp", "PutOp"]


def test_async_store_shares_the_file_with_langgraph(tmp_path) -> None:
    pytest.importorskip("aiosqlite")
    from warpgraph.store.sqlite.aio import AsyncSqliteStore

    path = str(tmp_path / "a.db")
    lg = lg_sqlite.SqliteStore(_connect(path))
    lg.setup()
    lg.put(("docs", "u1"), "a", {"n": 1})

    async def main() -> list:
        async with AsyncSqliteStore.from_conn_string(path) as store:
            first = await store.aget(("docs", "u1"), "a")
            await store.aput(("docs", "u1"), "b", {"n": 2})
            await store.adelete(("docs", "u1"), "a")
            both = await asyncio.gather(
                store.aget(("docs", "u1"), "b"), store.asearch(("docs",), limit=5)
            )
            return [norm(first), norm(both[0]), norm(both[1])]

    got = asyncio.run(main())
    assert got[0] == (("docs", "u1"), "a", {"n": 1}, None)
    assert got[1] == (("docs", "u1"), "b", {"n": 2}, None)
    assert got[2] == [(("docs", "u1"), "b", {"n": 2}, None)]
    assert lg.get(("docs", "u1"), "a") is None
    assert lg.get(("docs", "u1"), "b").value == {"n": 2}
