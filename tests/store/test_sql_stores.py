"""The SQL stores (SQLite, Postgres; sync and async) against LangGraph's stores of the same
backend and against warpgraph's InMemoryStore: the same scenario gives the same answers.
Filters are bound parameters: SQL-looking keys are refused, SQL-looking values are data."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time

import pytest
from warpgraph.store.memory import InMemoryStore
from warpgraph.store.sqlite import SqliteStore

from tests.store._common import embed, norm

ITEMS = [
    (("docs", "u1"), "a", {"n": 1, "kind": "x", "tags": ["p"], "meta": {"lvl": 1}, "t": "o'k"}),
    (("docs", "u1"), "b", {"n": 2, "kind": "y", "tags": ["p", "q"], "meta": {"lvl": 2}}),
    (("docs", "u2"), "c", {"n": 3, "kind": "x", "tags": [], "meta": {"lvl": 1}, "ok": True}),
    (("docs", "u2"), "d", {"n": 4.5, "kind": "y", "tags": ["q"], "meta": {"lvl": 0}, "ok": False}),
    (("docsx",), "e", {"n": 5, "kind": "x", "tags": ["p"], "meta": {"lvl": 1}, "t": None}),
    (("users", "u1", "prefs"), "f", {"n": 6, "kind": "z", "tags": ["p"], "meta": {}}),
]
FILTERS = [
    None,
    {"kind": "x"},
    {"n": {"$gt": 2}},
    {"n": {"$gte": 3, "$lte": 5}},
    {"kind": {"$ne": "x"}},
    {"tags": ["p", "q"]},
    {"meta": {"lvl": 1}},
    {"ok": True},
    {"ok": False},
    {"t": "o'k"},
    {"t": None},
    {"kind": {"$in": ["y", "z"]}},
    {"kind": {"$nin": ["x"]}},
    {"n": 4.5, "kind": "y"},
]
PREFIXES = [(), ("docs",), ("docs", "u1"), ("users",), ("nope",)]


def _scenario(store, filters: list = FILTERS) -> dict:
    """{"get": [...], (prefix, filter index): results, "list": [...]} of one store."""
    out: dict = {}
    for ns, key, value in ITEMS:
        store.put(ns, key, value)
    store.put(("docs", "u1"), "b", {**ITEMS[1][2], "n": 2})  # replace
    store.delete(("docs", "u2"), "zz")  # absent: no error
    out["get"] = [norm(store.get(ns, key)) for ns, key, _ in ITEMS]
    for prefix in PREFIXES:
        for i, flt in enumerate(FILTERS):
            if flt in filters:
                # by key: SQL stores order by updated_at, InMemoryStore by insertion
                found = store.search(prefix, filter=flt, limit=100)
                out[(prefix, i)] = sorted(norm(found), key=lambda r: (r[0], r[1]))
    out["list"] = [
        [tuple(n) for n in store.list_namespaces()],
        [tuple(n) for n in store.list_namespaces(prefix=("docs",), max_depth=1)],
        [tuple(n) for n in store.list_namespaces(suffix=("u1",))],
        [tuple(n) for n in store.list_namespaces(prefix=("*", "u1"), limit=1, offset=1)],
    ]
    store.delete(("docsx",), "e")
    out["list"].append([tuple(n) for n in store.list_namespaces()])
    return out


def _same_where_both_ran(ours: dict, ref: dict) -> None:
    assert set(ref) <= set(ours)
    for key, value in ref.items():
        assert ours[key] == value, key


def _sqlite(lib: str):
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    if lib == "langgraph":
        mod = pytest.importorskip("langgraph.store.sqlite")
        return mod.SqliteStore(conn)
    return SqliteStore(conn)


def test_sqlite_matches_memory_and_langgraph() -> None:
    ours = _scenario(_sqlite("warpgraph"))
    assert ours == _scenario(InMemoryStore())
    # LangGraph's SQLite store runs these filters the same way; it refuses dict filters
    # without operators and $in / $nin, compares booleans as 0/1 and None as JSON null only
    same = [f for f in FILTERS if f is None or set(f) <= {"kind", "n", "tags", "t"}]
    same = [f for f in same if f not in ({"t": None}, {"kind": {"$in": ["y", "z"]}})]
    same = [f for f in same if f != {"kind": {"$nin": ["x"]}}]
    _same_where_both_ran(ours, _scenario(_sqlite("langgraph"), same))


def test_filter_keys_are_validated_and_values_bound() -> None:
    store = _sqlite("warpgraph")
    store.put(("a",), "k", {"name": "x' OR '1'='1", "n": 1})
    for bad in ["n') OR 1=1 --", "a b", 'q"uote', "x;DROP TABLE store"]:
        with pytest.raises(ValueError, match="Invalid filter key"):
            store.search(("a",), filter={bad: 1})
    assert store.search(("a",), filter={"name": "' OR '1'='1"}) == []
    assert [r.key for r in store.search(("a",), filter={"name": "x' OR '1'='1"})] == ["k"]
    with pytest.raises(ValueError, match="Invalid filter key"):
        store.search(("a",), filter={"n": {"$eq": {"x') --": 1}}})
    assert store.get(("a",), "k") is not None  # the table is intact


def test_sqlite_vector_search_matches_memory() -> None:
    index = {"dims": 6, "embed": embed, "fields": ["text"]}
    stores = [InMemoryStore(index=index), SqliteStore(sqlite3.connect(":memory:"), index=index)]
    results = []
    for store in stores:
        store.put(("d",), "1", {"text": "hello world"})
        store.put(("d",), "2", {"text": "abc xyz"})
        store.put(("d", "sub"), "3", {"text": "hello there 42"})
        store.put(("d",), "4", {"text": "no index"}, index=False)
        store.put(("d",), "2", {"text": "hello abc"})  # re-embedded
        results.append(norm(store.search(("d",), query="hello", limit=3)))
        results.append(norm(store.search(("d",), query="hello", limit=2, offset=1)))
    # float32 storage in SQLite: scores agree to ~1e-6
    for mem, sql in zip(results[0::2][:1] + results[1::2][:1], results[2:4], strict=True):
        assert [(r[0], r[1]) for r in mem] == [(r[0], r[1]) for r in sql]
        for a, b in zip(mem, sql, strict=True):
            assert (a[3] is None) == (b[3] is None)
            assert a[3] is None or abs(a[3] - b[3]) < 1e-5


def test_sqlite_ttl_sweep_and_refresh(tmp_path) -> None:
    path = str(tmp_path / "ttl.db")
    cfg = {"default_ttl": 0.4 / 60, "refresh_on_read": True}
    with SqliteStore.from_conn_string(path, ttl=cfg) as store:
        store.put(("a",), "short", {"v": 1})
        store.put(("a",), "long", {"v": 2}, ttl=None)
        time.sleep(0.25)
        assert store.get(("a",), "short") is not None  # refreshed
        time.sleep(0.25)
        assert store.sweep_ttl() == 0
        time.sleep(0.3)
        assert store.sweep_ttl() == 1
        assert [r.key for r in store.search(("a",))] == ["long"]
    with SqliteStore.from_conn_string(path) as store:  # the file reopens
        assert store.get(("a",), "long").value == {"v": 2}


def test_async_sqlite_matches_sync(tmp_path) -> None:
    pytest.importorskip("aiosqlite")
    from warpgraph.store.sqlite.aio import AsyncSqliteStore

    async def run() -> list:
        async with AsyncSqliteStore.from_conn_string(str(tmp_path / "a.db")) as store:
            for ns, key, value in ITEMS:
                await store.aput(ns, key, value)
            got = await asyncio.gather(*(store.aget(ns, key) for ns, key, _ in ITEMS))
            found = await store.asearch(("docs",), filter={"kind": "x"}, limit=10)
            spaces = await store.alist_namespaces(max_depth=2)
            return [norm(got), sorted(norm(found)), [tuple(n) for n in spaces]]

    ours = asyncio.run(run())
    sync = _sqlite("warpgraph")
    for ns, key, value in ITEMS:
        sync.put(ns, key, value)
    expected = [
        norm([sync.get(ns, key) for ns, key, _ in ITEMS]),
        sorted(norm(sync.search(("docs",), filter={"kind": "x"}, limit=10))),
        [tuple(n) for n in sync.list_namespaces(max_depth=2)],
    ]
    assert ours == expected


# --- Postgres -----------------------------------------------------------------------------


def test_postgres_matches_memory_and_langgraph(pg_fresh_dsn, pg_server) -> None:
    from warpgraph.store.postgres import PostgresStore

    from tests.checkpoint.pg_server import create_database

    with PostgresStore.from_conn_string(pg_fresh_dsn) as store:
        store.setup()
        store.setup()  # idempotent
        ours = _scenario(store)
    assert ours == _scenario(InMemoryStore())
    lg_pg = pytest.importorskip("langgraph.store.postgres")
    # LangGraph's Postgres store compares $gt / $lt as text, has no $in / $nin or
    # partial dict matching, and None matches JSON null only: the others run the same way
    same = [
        f
        for f in FILTERS
        if f is None
        or not any(isinstance(v, dict) and not set(v) <= {"$eq", "$ne"} for v in f.values())
        and not isinstance(f.get("meta"), dict)
        and f != {"t": None}
    ]
    with lg_pg.PostgresStore.from_conn_string(
        pg_server.dsn_for(create_database(pg_server.dsn, "wg_lgstore"))
    ) as ref_store:
        ref_store.setup()
        ref = _scenario(ref_store, same)
    _same_where_both_ran(ours, ref)


def test_async_postgres_vector_search_and_ttl(pg_fresh_dsn) -> None:
    from warpgraph.store.postgres import AsyncPostgresStore

    index = {"dims": 6, "embed": embed, "fields": ["text"]}

    async def run() -> tuple:
        async with AsyncPostgresStore.from_conn_string(
            pg_fresh_dsn, index=index, ttl={"default_ttl": 0.2 / 60}
        ) as store:
            await store.setup()
            await store.aput(("d",), "1", {"text": "hello world"})
            await store.aput(("d",), "2", {"text": "abc xyz"})
            await store.aput(("d",), "3", {"text": "plain"}, index=False)
            found = norm(await store.asearch(("d",), query="hello", limit=3))
            with pytest.raises(ValueError, match="Invalid filter key"):
                await store.asearch(("d",), filter={"a'b": 1})
            await asyncio.sleep(0.3)
            swept = await store.sweep_ttl()
            return found, swept, await store.asearch(("d",))

    found, swept, left = asyncio.run(run())
    mem = InMemoryStore(index=index)
    mem.put(("d",), "1", {"text": "hello world"})
    mem.put(("d",), "2", {"text": "abc xyz"})
    mem.put(("d",), "3", {"text": "plain"}, index=False)
    expected = norm(mem.search(("d",), query="hello", limit=3))
    assert [(r[1], r[3] is None) for r in found] == [(r[1], r[3] is None) for r in expected]
    assert all(a[3] is None or abs(a[3] - b[3]) < 1e-5 for a, b in zip(found, expected))
    assert swept == 3 and left == []


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_postgres_from_conn_string_with_a_pool(pg_fresh_dsn, aio) -> None:
    """pool_config opens a pool of autocommit connections; its own kwargs win."""
    from warpgraph.store.postgres import AsyncPostgresStore, PostgresStore

    config = {"min_size": 1, "max_size": 2, "kwargs": {"application_name": "wg-pool"}}
    if not aio:
        with PostgresStore.from_conn_string(pg_fresh_dsn, pool_config=config) as store:
            assert store._is_pool()
            store.setup()
            store.put(("p",), "k", {"v": 1})
            with store._cursor() as cur:
                cur.execute("SHOW application_name")
                name = cur.fetchone()["application_name"]
            got = store.get(("p",), "k").value
    else:

        async def run() -> tuple:
            async with AsyncPostgresStore.from_conn_string(
                pg_fresh_dsn, pool_config=config
            ) as store:
                assert store._is_pool()
                await store.conn.open()
                await store.setup()
                await store.aput(("p",), "k", {"v": 1})
                async with store._cursor() as cur:
                    await cur.execute("SHOW application_name")
                    name = (await cur.fetchone())["application_name"]
                return name, (await store.aget(("p",), "k")).value

        name, got = asyncio.run(run())
    assert (name, got) == ("wg-pool", {"v": 1})


def test_sql_sessions_roll_back_on_an_exception(tmp_path, pg_fresh_dsn) -> None:
    """A session commits what it wrote when its block ends, rolls back on an exception."""
    from warpgraph.store._sql.plan import EXEC
    from warpgraph.store.postgres import PostgresStore

    insert = "INSERT INTO store (prefix, key, value) VALUES ({p}, {p}, {p})"
    with SqliteStore.from_conn_string(str(tmp_path / "s.db")) as lite:
        lite.setup()
        with PostgresStore.from_conn_string(pg_fresh_dsn) as pg:
            pg.setup()
            for store, p, value in ((lite, "?", "{}"), (pg, "%s", "{}")):
                with pytest.raises(KeyError), store._session() as session:
                    session.run(EXEC, insert.format(p=p), ("ns", "gone", value))
                    raise KeyError("boom")
                with store._session() as session:
                    session.run(EXEC, insert.format(p=p), ("ns", "kept", value))
                assert [i.key for i in store.search(("ns",))] == ["kept"]


# --- construction ---------------------------------------------------------------------------


def _parameters(cls: type) -> list[tuple]:
    import inspect

    params = inspect.signature(cls.__init__).parameters.values()
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("store.sqlite", "SqliteStore"),
        ("store.sqlite.aio", "AsyncSqliteStore"),
        ("store.postgres", "PostgresStore"),
        ("store.postgres.aio", "AsyncPostgresStore"),
    ],
)
def test_sql_store_constructors_take_langgraphs_parameters(module: str, name: str) -> None:
    import importlib

    ref = getattr(pytest.importorskip(f"langgraph.{module}"), name)
    ours = getattr(importlib.import_module(f"warpgraph.{module}"), name)
    assert _parameters(ours) == _parameters(ref)


def test_sql_stores_get_their_lock_and_sweeper_from_their_kind(tmp_path) -> None:
    """One constructor per backend; the sync / async mixin adds the lock, loop and
    sweeper of its kind, and every SQL store supports TTLs."""
    from warpgraph.store._sweeper import ThreadSweeper
    from warpgraph.store.sqlite.aio import AsyncSqliteStore

    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, ttl={"default_ttl": 1.0})
    assert store.conn is conn and store.ttl_config == {"default_ttl": 1.0}
    assert type(store.lock) is type(threading.Lock())
    assert isinstance(store._sweeper, ThreadSweeper) and store.supports_ttl

    async def run() -> tuple:
        store = AsyncSqliteStore(conn)
        return store.lock, store.loop is asyncio.get_running_loop(), store.supports_ttl

    lock, same_loop, ttl = asyncio.run(run())
    assert isinstance(lock, asyncio.Lock) and same_loop and ttl


def test_a_pipe_with_a_pool_is_refused_by_the_async_postgres_store_only() -> None:
    """As in LangGraph: its AsyncPostgresStore refuses a pipeline with a pool, its
    PostgresStore does not check."""
    from warpgraph.store.postgres import AsyncPostgresStore, PostgresStore

    class Pool:
        def getconn(self) -> None: ...

    pipe = object()
    assert PostgresStore(Pool(), pipe=pipe).pipe is pipe

    async def run() -> None:
        with pytest.raises(ValueError, match="single AsyncConnection, not AsyncConnectionPool"):
            AsyncPostgresStore(Pool(), pipe=pipe)
        assert AsyncPostgresStore(Pool()).pipe is None
        assert AsyncPostgresStore(object(), pipe=pipe).pipe is pipe

    asyncio.run(run())
