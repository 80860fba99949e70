"""The inspector on databases written by warpgraph's and LangGraph's savers (SQLite and
Postgres), read-only, with corrupt rows reported by id."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from tests.cli.graphs import write_postgres, write_sqlite


def _json(cli, *args):
    code, out, err = cli(*args, "--json")
    assert code == 0, err
    return json.loads(out)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(params=["warpgraph", "langgraph"])
def sqlite_db(request, tmp_path):
    path = tmp_path / f"{request.param}.sqlite"
    write_sqlite(request.param, str(path))
    return request.param, path


def _check_database(cli, db, layout):
    threads = {t["thread_id"]: t for t in _json(cli, "threads", db)}
    assert set(threads) == {"waiting", "done"}
    assert threads["waiting"]["layout"] == layout
    assert threads["waiting"]["checkpoints"] == 3 and threads["waiting"]["last_step"] == 1
    assert threads["done"]["checkpoints"] == 4 and threads["done"]["last_step"] == 2
    assert all(t["bytes"] > 0 and t["last_update"] for t in threads.values())

    hist = _json(cli, "history", db, "done")
    assert [h["step"] for h in hist] == [2, 1, 0, -1]
    assert [h["source"] for h in hist] == ["loop", "loop", "loop", "input"]
    assert [h["next"] for h in hist] == [[], ["b"], ["a"], ["__start__"]]
    assert hist[1]["writes"] >= 2  # b's interrupt and its resume value
    assert all(h["bytes"] > 0 for h in hist)
    assert hist[0]["parent_checkpoint_id"] == hist[1]["checkpoint_id"]

    shown = _json(cli, "show", db, "waiting")
    assert shown["values"] == {"n": 2, "log": ["a"]}
    assert shown["next"] == ["b"]
    (intr,) = shown["interrupts"]
    assert intr["value"] == "approve?"
    old = _json(cli, "show", db, "done", hist[-1]["checkpoint_id"][:30])
    assert old["checkpoint_id"] == hist[-1]["checkpoint_id"] and old["values"] == {}

    diff = _json(cli, "diff", db, "done", hist[1]["checkpoint_id"], hist[0]["checkpoint_id"])
    changes = {c["channel"]: c for c in diff["changes"]}
    assert changes["answer"] == {"channel": "answer", "change": "added", "new": "yes"}
    assert changes["log"]["change"] == "appended" and changes["log"]["appended"] == ["b"]
    assert "n" not in changes  # unchanged between the two

    code, out, _ = cli("history", db, "done")
    assert code == 0 and hist[0]["checkpoint_id"][:8] in out
    code, out, _ = cli("show", db, "waiting")
    assert code == 0 and "approve?" in out and "log" in out
    code, out, _err = cli("diff", db, "done", hist[1]["checkpoint_id"], hist[0]["checkpoint_id"])
    assert code == 0 and "+ answer" in out and "appended 1" in out


def test_sqlite_written_by_each_library(cli, sqlite_db):
    layout, path = sqlite_db
    before = _digest(path)
    _check_database(cli, str(path), layout)
    code, out, _ = cli("threads", str(path))
    assert code == 0 and "waiting" in out
    assert _digest(path) == before  # read-only: not one byte changed


def test_opened_read_only_and_never_migrated(cli, tmp_path):
    path = tmp_path / "old.sqlite"
    write_sqlite("warpgraph", str(path))
    conn = sqlite3.connect(path)  # as if written before migration 1
    with conn:
        conn.execute("DELETE FROM wg_migrations WHERE v = 1")
    conn.close()  # (closed before the digest: a close may fold the WAL into the file)
    path.chmod(0o444)
    before = _digest(path)
    assert {t["thread_id"] for t in _json(cli, "threads", str(path))} == {"waiting", "done"}
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert conn.execute("SELECT max(v) FROM wg_migrations").fetchone()[0] == 0
    conn.close()
    assert _digest(path) == before


@pytest.mark.parametrize("layout", ["warpgraph", "langgraph"])
def test_a_corrupt_row_is_reported_by_id(cli, tmp_path, layout):
    path = tmp_path / "corrupt.sqlite"
    write_sqlite(layout, str(path))
    table = "wg_checkpoints" if layout == "warpgraph" else "checkpoints"
    hist = _json(cli, "history", str(path), "done")
    bad = hist[0]["checkpoint_id"]
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET checkpoint = x'c1ffee' WHERE checkpoint_id = ?", (bad,))
    hist = _json(cli, "history", str(path), "done")
    assert hist[0]["checkpoint_id"] == bad and "cannot decode" in hist[0]["error"]
    assert [h["step"] for h in hist[1:]] == [1, 0, -1] and "error" not in hist[1]
    threads = {t["thread_id"]: t for t in _json(cli, "threads", str(path))}
    assert bad in threads["done"]["error"] and "error" not in threads["waiting"]
    code, out, err = cli("history", str(path), "done")
    assert code == 0 and f"checkpoint {bad}: cannot decode" in out
    code, out, err = cli("show", str(path), "done", bad)
    assert code == 1 and bad in err and "Traceback" not in err


def test_errors(cli, tmp_path, sqlite_db):
    _, db = sqlite_db
    cases = [
        (("threads", str(tmp_path / "nope.sqlite")), "no such database file"),
        (("threads", str(tmp_path)), "is a directory"),
        (("history", str(db), "ghost"), "no thread 'ghost'"),
        (("show", str(db), "done", "ffff"), "no checkpoint 'ffff'"),
        (("show", str(db), "done", "1"), "ambiguous"),
        (("diff", str(db), "done"), "required"),
        (("history", str(db), "done", "--limit", "0"), "--limit must be at least 1"),
    ]
    not_sqlite = tmp_path / "text.sqlite"
    not_sqlite.write_text("hello, this is not a database" * 20)
    cases.append((("threads", str(not_sqlite)), "cannot read"))
    empty = tmp_path / "empty.sqlite"
    sqlite3.connect(empty).execute("CREATE TABLE other (x)").connection.close()
    cases.append((("threads", str(empty)), "no checkpoint tables"))
    for args, needle in cases:
        code, _out, err = cli(*args)
        assert code == 2, (args, err)
        assert needle in err and "Traceback" not in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("layout", ["warpgraph", "langgraph"])
def test_postgres_written_by_each_library(cli, pg_fresh_dsn, layout):
    import psycopg

    write_postgres(layout, pg_fresh_dsn)
    with psycopg.connect(pg_fresh_dsn) as conn:
        tables = conn.execute("SELECT count(*) FROM information_schema.tables").fetchone()
    _check_database(cli, pg_fresh_dsn, layout)
    with psycopg.connect(pg_fresh_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM information_schema.tables").fetchone() == tables


def test_unreachable_postgres(cli):
    code, _, err = cli("threads", "postgresql://127.0.0.1:1/none")
    assert code == 2 and "cannot connect to Postgres" in err


def test_the_connections_refuse_writes(tmp_path, pg_fresh_dsn):
    import psycopg
    from warpgraph._cli.inspect.source import open_target

    path = tmp_path / "wg.sqlite"
    write_sqlite("warpgraph", str(path))
    conn, readers = open_target(str(path))
    try:
        assert [r.layout for r in readers] == ["warpgraph"]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("CREATE TABLE intruder (x)")
    finally:
        conn.close()
    write_postgres("warpgraph", pg_fresh_dsn)
    conn, readers = open_target(pg_fresh_dsn)
    try:
        assert [r.layout for r in readers] == ["warpgraph"]
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("CREATE TABLE intruder (x int)")
    finally:
        conn.close()


def test_both_layouts_in_one_file(cli, tmp_path):
    path = tmp_path / "both.sqlite"
    write_sqlite("warpgraph", str(path))
    write_sqlite("langgraph", str(path))
    rows = _json(cli, "threads", str(path))
    assert sorted((t["layout"], t["thread_id"]) for t in rows) == [
        ("langgraph", "done"),
        ("langgraph", "waiting"),
        ("warpgraph", "done"),
        ("warpgraph", "waiting"),
    ]
    lg = _json(cli, "history", str(path), "done", "--layout", "langgraph")
    wg = _json(cli, "history", str(path), "done", "--layout", "warpgraph")
    assert {h["checkpoint_id"] for h in lg}.isdisjoint(h["checkpoint_id"] for h in wg)
    assert [h["step"] for h in lg] == [h["step"] for h in wg] == [2, 1, 0, -1]


@pytest.mark.parametrize("layout", ["warpgraph", "langgraph"])
def test_next_matches_the_librarys_own_snapshots(cli, tmp_path, layout):
    """`next` read from the database alone equals what the library's `get_state_history`
    computes with the graph, on every checkpoint (Sends, an interrupt_before, the end)."""
    import importlib

    from tests.cli.graphs import S, send_graph

    path = tmp_path / "next.sqlite"
    mod = importlib.import_module(f"{layout}.checkpoint.sqlite")
    graph_mod = importlib.import_module(f"{layout}.graph")
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = mod.SqliteSaver(conn)
        saver.setup()
        fan = send_graph(layout, saver)
        assert (
            fan.invoke({"n": 3, "results": []}, {"configurable": {"thread_id": "sends"}})["n"]
            == 0 + 2 + 4
        )
        g = graph_mod.StateGraph(S)
        g.add_node("a", lambda s: {"n": s["n"] + 1})
        g.add_edge(graph_mod.START, "a")
        g.add_edge("a", graph_mod.END)
        paused = g.compile(checkpointer=saver, interrupt_before=["a"])
        paused.invoke({"n": 1, "log": []}, {"configurable": {"thread_id": "paused"}})
        expected = {
            snap.config["configurable"]["checkpoint_id"]: sorted(snap.next)
            for thread, graph in (("sends", fan), ("paused", paused))
            for snap in graph.get_state_history({"configurable": {"thread_id": thread}})
        }
    finally:
        conn.close()
    assert ["worker"] * 3 in expected.values() and ["a"] in expected.values()
    for thread in ("sends", "paused"):
        for h in _json(cli, "history", str(path), thread):
            assert sorted(h["next"]) == expected[h["checkpoint_id"]], h


def test_subgraph_namespaces_and_limit(cli, tmp_path):
    from warpgraph.checkpoint.sqlite import SqliteSaver

    from tests.cli.graphs import send_graph

    path = tmp_path / "ns.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        send_graph("warpgraph", saver).invoke(
            {"n": 2, "results": []}, {"configurable": {"thread_id": "fan"}}
        )
    (thread,) = _json(cli, "threads", str(path))
    assert len(thread["namespaces"]) == 2 and all(
        ns.startswith("worker:") for ns in thread["namespaces"]
    )
    sub = _json(cli, "history", str(path), "fan", "--ns", thread["namespaces"][0])
    assert [h["source"] for h in sub][-1] == "input" and sub[0]["next"] == []
    shown = _json(cli, "show", str(path), "fan", "--ns", thread["namespaces"][0])
    assert shown["checkpoint_ns"] == thread["namespaces"][0] and "x" in shown["values"]
    assert len(_json(cli, "history", str(path), "fan", "--limit", "2")) == 2
    code, _, err = cli("history", str(path), "fan", "--ns", "nowhere")
    assert code == 2 and "no checkpoints in namespace 'nowhere'" in err
