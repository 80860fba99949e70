"""SqliteSaver: schema setup, storage layout and size, writes, list filters (CVE payloads),
index use on a 100,000-checkpoint database, batches and the group-commit writer."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from itertools import pairwise

import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqliteSaver
from warpgraph.checkpoint._sql import CheckpointConflictError, PutOp, WritesOp
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.sqlite import SqliteSaver

from tests._subproc import child_env
from tests.checkpoint._data import stored_bytes

PY = sys.executable


def _cp(values: dict, versions: dict, seen: dict | None = None, cid: str | None = None) -> dict:
    return {
        "v": 4,
        "id": cid or str(uuid6()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": seen or {},
        "updated_channels": sorted(versions),
    }


def _cfg(thread: str = "t", ns: str = "", cid: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ns}
    if cid:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def _ref_sqlite() -> RefSqliteSaver:
    ref = RefSqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    ref.setup()
    return ref


@pytest.fixture
def saver(tmp_path):
    with SqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")) as s:
        yield s


# --- setup -------------------------------------------------------------------------------


def test_setup_is_versioned_idempotent_and_enables_wal(tmp_path) -> None:
    path = str(tmp_path / "x.db")
    with SqliteSaver.from_conn_string(path) as s:
        s.setup()
        s.setup()
        assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 30_000
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT v FROM wg_migrations").fetchall() == [(0,), (1,)]
    # a user connection gets setup() lazily on first use
    s2 = SqliteSaver(conn)
    assert s2.get_tuple(_cfg()) is None
    assert conn.execute("SELECT count(*) FROM wg_migrations").fetchone()[0] == 2


def test_setup_from_several_processes_at_once(tmp_path) -> None:
    path = str(tmp_path / "race.db")
    code = (
        "import sqlite3, sys; from warpgraph.checkpoint.sqlite import SqliteSaver\n"
        "s = SqliteSaver(sqlite3.connect(sys.argv[1]))\n"
        "s.setup(); s.put({'configurable': {'thread_id': sys.argv[2], 'checkpoint_ns': ''}},"
        " {'v': 4, 'id': '1', 'ts': '', 'channel_values': {}, 'channel_versions': {},"
        " 'versions_seen': {}}, {}, {})\n"
    )
    env = child_env()
    procs = [
        subprocess.Popen([PY, "-c", code, path, f"p{i}"], env=env, stderr=subprocess.PIPE)
        for i in range(4)
    ]
    errors = [p.communicate()[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT v FROM wg_migrations").fetchall() == [(0,), (1,)]
    assert conn.execute("SELECT count(*) FROM wg_checkpoints").fetchone()[0] == 4


def _counter_graph():
    from typing_extensions import TypedDict
    from warpgraph.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    g = StateGraph(S)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    return g


def test_migration_to_clustered_tables_keeps_every_row(tmp_path, monkeypatch) -> None:
    """A database made by the first schema version (rowid tables) is rebuilt by the
    second as WITHOUT ROWID tables, with every checkpoint, write and index kept."""
    from warpgraph.checkpoint.sqlite import _schema

    path = str(tmp_path / "old.db")
    monkeypatch.setattr(_schema, "MIGRATIONS", _schema.MIGRATIONS[:1])
    with SqliteSaver.from_conn_string(path) as old:
        graph = _counter_graph().compile(checkpointer=old)
        config = {"configurable": {"thread_id": "m"}}
        graph.invoke({"n": 1}, config)
        graph.invoke({"n": 5}, config)
        before = list(old.list(config))
        old.put_writes(before[0].config, [("n", 7), ("__error__", "boom")], "task-x")
        before = list(old.list(config))
        assert old.conn.execute("SELECT v FROM wg_migrations").fetchall() == [(0,)]
    monkeypatch.undo()
    with SqliteSaver.from_conn_string(path) as new:
        new.setup()
        after = list(new.list(config))
        assert [t.checkpoint for t in after] == [t.checkpoint for t in before]
        assert [t.metadata for t in after] == [t.metadata for t in before]
        assert [t.parent_config for t in after] == [t.parent_config for t in before]
        assert [t.pending_writes for t in after] == [t.pending_writes for t in before]
        assert after[0].pending_writes  # the writes table's rows came along
        sql = dict(new.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        assert "WITHOUT ROWID" in sql["wg_checkpoints"] and "WITHOUT ROWID" in sql["wg_writes"]
        assert "wg_checkpoints_v2" not in sql and "wg_writes_v2" not in sql
        indexes = {
            r[0] for r in new.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        assert {"wg_checkpoints_thread_id", "wg_checkpoints_run_id"} <= indexes
        # and the thread goes on from where it was
        assert _counter_graph().compile(checkpointer=new).invoke({"n": 2}, config) == {"n": 3}
        assert len(list(new.list(config))) == len(after) + 3


# --- storage layout and size ----------------------------------------------------------------


OURS = {"wg_checkpoints": ["checkpoint", "metadata"], "wg_blobs": ["blob"]}
THEIRS = {"checkpoints": ["checkpoint", "metadata"]}


def test_one_small_channel_change_stores_only_that_value(saver) -> None:
    serde = JsonPlusSerializer()
    messages = [
        {"role": "user", "content": f"message {i} " + "lorem ipsum " * 12} for i in range(1000)
    ]
    state_bytes = len(serde.dumps_typed(messages)[1])
    assert state_bytes > 150_000
    ref = _ref_sqlite()
    ours_sizes, ref_sizes = [], []
    config = _cfg("big")
    ref_config = _cfg("big")
    for step in range(30):
        versions = {"messages": 1, "counter": step + 1}
        new = versions if step == 0 else {"counter": step + 1}
        cp = _cp({"messages": messages, "counter": step}, versions, {"node": {"counter": step}})
        md = {"source": "loop", "step": step, "parents": {}}
        before = stored_bytes(saver.conn, OURS)
        config = saver.put(config, cp, md, new)
        ours_sizes.append(stored_bytes(saver.conn, OURS) - before)
        before = stored_bytes(ref.conn, THEIRS)
        ref_config = ref.put(ref_config, cp, md, new)
        ref_sizes.append(stored_bytes(ref.conn, THEIRS) - before)
    # first checkpoint holds the state once; then only the changed int (+ a small record)
    assert ours_sizes[0] >= state_bytes
    assert max(ours_sizes[1:]) <= 1024
    assert min(ref_sizes[1:]) >= state_bytes  # the reference re-stores the whole state
    # blobs: one per (channel, version) actually written, except values small enough to
    # ride in the checkpoint record (the int counter): those have no blob row
    rows = saver.conn.execute("SELECT channel, count(*) FROM wg_blobs GROUP BY channel").fetchall()
    assert dict(rows) == {"messages": 1}
    tup = saver.get_tuple(_cfg("big"))
    assert tup.checkpoint["channel_values"] == {"messages": messages, "counter": 29}


def _chain_bytes_per_checkpoint(n_nodes: int) -> tuple[float, dict]:
    from typing import TypedDict

    from warpgraph.graph import END, START, StateGraph

    class S(TypedDict):
        x: int

    g = StateGraph(S)
    for i in range(n_nodes):
        g.add_node(f"n{i}", lambda s: {"x": s["x"] + 1})
    g.add_edge(START, "n0")
    for i in range(n_nodes - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    g.add_edge(f"n{n_nodes - 1}", END)
    with SqliteSaver.from_conn_string(":memory:") as s:
        app = g.compile(checkpointer=s)
        cfg = {"configurable": {"thread_id": "1"}, "recursion_limit": n_nodes + 10}
        out = app.invoke({"x": 0}, cfg, durability="sync")
        assert out == {"x": n_nodes}
        n, rec = s.conn.execute(
            "SELECT count(*), sum(length(checkpoint) + length(metadata)) FROM wg_checkpoints"
        ).fetchone()
        assert n == n_nodes + 2
        latest = s.get_tuple({"configurable": {"thread_id": "1"}}).checkpoint
        return rec / n, latest


def test_checkpoint_row_does_not_grow_with_the_number_of_nodes() -> None:
    small, _ = _chain_bytes_per_checkpoint(10)
    large, latest = _chain_bytes_per_checkpoint(1000)
    # the versions themselves grow with the graph: a full encoding would be ~100x
    full = len(
        JsonPlusSerializer().dumps_typed(
            {k: latest[k] for k in ("channel_versions", "versions_seen")}
        )[1]
    )
    assert full > 50 * small
    # skip deltas: O(changes per step x log(steps)), far from proportional to the nodes
    assert large < 4 * small, (small, large)


# --- writes ------------------------------------------------------------------------------


def test_put_writes_semantics_and_order_match_reference(saver) -> None:
    ref = RefMemorySaver()
    cp = _cp({}, {})
    outs = [s.put(_cfg(), cp, {}, {}) for s in (saver, ref)]
    calls = [
        ([("b", 1), ("a", 2)], "task-2", "~__pregel_pull, z"),
        ([("a", 3)], "task-1", "~__pregel_pull, a"),
        ([("a", 99), ("b", 98)], "task-2", "~__pregel_pull, z"),  # duplicate idx: ignored
        ([("__error__", "boom")], "task-3", "~__pregel_push, 0"),
        ([("__error__", "boom2"), ("__interrupt__", "i")], "task-3", "~__pregel_push, 0"),
        ([("x", 1), ("__resume__", "r")], "task-1", "~__pregel_pull, a"),  # mixed
    ]
    for writes, task_id, path in calls:
        for s, out in zip((saver, ref), outs):
            s.put_writes(out, writes, task_id, path)
    mine = saver.get_tuple(_cfg()).pending_writes
    theirs = ref.get_tuple(_cfg()).pending_writes
    assert mine == theirs
    stored = saver.conn.execute(
        "SELECT task_id, idx, task_path FROM wg_writes ORDER BY task_path, task_id, idx"
    ).fetchall()
    assert ("task-3", -3, "~__pregel_push, 0") in stored


@pytest.mark.parametrize("path", ["put", "put_batch", "group_commit"])
def test_stored_columns_keep_their_sql_types(saver, path) -> None:
    """Rows are bound with 0 for a missing parent / base / run id and bytearray values
    (cheaper for the sqlite3 module than None and bytes): stored, they are still SQL NULLs
    and blobs, read back as None and bytes, on every write path."""
    first, second = _cp({"a": 1}, {"a": "1"}), _cp({"a": 2, "b": b"raw"}, {"a": "2", "b": "1"})
    writes = [("a", 3), ("b", None), ("c", b"x")]
    if path == "put":
        cfg = saver.put(_cfg(), first, {}, {"a": "1"})
        saver.put(cfg, second, {"run_id": "r"}, {"a": "2", "b": "1"})
        saver.put_writes(cfg, writes, "task", "p")
    else:
        cfg = {"configurable": {**_cfg()["configurable"], "checkpoint_id": first["id"]}}
        ops = [
            PutOp(_cfg(), first, {}, {"a": "1"}),
            PutOp(cfg, second, {"run_id": "r"}, {"a": "2", "b": "1"}),
            WritesOp(cfg, writes, "task", "p"),
        ]
        if path == "put_batch":
            saver.put_batch(ops)
        else:
            with saver.writer() as writer:
                with saver.lock:  # one batch: the writer's bulk path
                    futures = [writer.submit(op) for op in ops]
                for fut in futures:
                    fut.result()
    rows = saver.conn.execute(
        "SELECT typeof(parent_checkpoint_id), typeof(base_id), typeof(run_id), "
        "typeof(checkpoint) FROM wg_checkpoints ORDER BY checkpoint_id"
    ).fetchall()
    assert rows == [("null", "null", "null", "blob"), ("text", "text", "text", "blob")]
    stored = saver.conn.execute("SELECT typeof(value), value FROM wg_writes ORDER BY idx")
    assert [(t, type(v)) for t, v in stored] == [("blob", bytes)] * 3
    assert saver.conn.execute("SELECT count(*) FROM wg_checkpoints WHERE run_id = 'r'").fetchone()
    tup = saver.get_tuple(cfg)
    assert tup.checkpoint["channel_values"] == {"a": 1}
    assert [w[1:] for w in tup.pending_writes] == writes
    head = saver.get_tuple(_cfg())
    assert head.checkpoint["channel_values"] == {"a": 2, "b": b"raw"}
    assert head.parent_config == cfg


def test_put_writes_needs_a_checkpoint_id(saver) -> None:
    with pytest.raises(ValueError, match="checkpoint_id"):
        saver.put_writes(_cfg(), [("a", 1)], "t")


# --- list filters ------------------------------------------------------------------------


def _fill(s) -> list[str]:
    ids = []
    metas = [
        {"source": "input", "step": -1, "run_id": "r1", "score": 42, "flag": True},
        {"source": "loop", "step": 0, "run_id": "r1", "parents": {"": "abc"}, "flag": False},
        {"source": "loop", "step": 1, "run_id": "r2", "tags": ["a", "b"], "score": 4.5},
        {"source": "update", "step": 2, "run_id": "r2", "a.b": 1, "x": None},
    ]
    config = _cfg("f")
    for md in metas:
        cp = _cp({"k": md["step"]}, {"k": md["step"] + 2})
        config = s.put(config, cp, md, {"k": md["step"] + 2})
        ids.append(cp["id"])
    return ids


FILTERS = [
    {"source": "loop"},
    {"step": 1},
    {"source": "loop", "step": 0},
    {"score": 42},
    {"score": 4.5},
    {"flag": True},
    {"flag": False},
    {"run_id": "r2"},
    {"parents": {"": "abc"}},
    {"tags": ["a", "b"]},
    {"missing": None},
    {"source": "nope"},
    {"step": "1"},
]


@pytest.mark.parametrize("flt", FILTERS, ids=[str(f) for f in FILTERS])
def test_list_filter_matches_reference_sqlite_saver(saver, flt) -> None:
    ref = _ref_sqlite()
    _fill(saver)
    _fill(ref)
    for config in (None, _cfg("f")):
        mine = [t.metadata for t in saver.list(config, filter=flt)]
        theirs = [t.metadata for t in ref.list(config, filter=flt)]
        assert mine == theirs


def test_list_before_limit_and_dotted_keys_literal(saver) -> None:
    ids = _fill(saver)
    got = [t.checkpoint["id"] for t in saver.list(_cfg("f"), before=_cfg("f", cid=ids[2]), limit=1)]
    assert got == [ids[1]]
    # a dot is part of the key (as in InMemorySaver), not a JSON path
    ref = RefMemorySaver()
    _fill(ref)
    for flt in ({"a.b": 1}, {"a": {"b": 1}}):
        assert [t.metadata for t in saver.list(None, filter=flt)] == [
            t.metadata for t in ref.list(None, filter=flt)
        ]


CVE_KEYS = [
    # CVE-2025-67644: key interpolated into json_extract(..., '$.{key}')
    "source') = 'input' OR 1=1 --",
    "x') OR 1=1; DROP TABLE wg_checkpoints; --",
    "step'||(SELECT sqlite_version())||'",
    # JSON-path syntax
    "$.source",
    "tags[0]",
    'a"b',
    "*",
    # CVE-2025-8709: operator keys
    "$eq",
    "source\u0000",
    "",
]


@pytest.mark.parametrize("key", CVE_KEYS)
def test_injection_filter_keys_are_rejected(saver, key) -> None:
    _fill(saver)
    with pytest.raises(ValueError, match="Invalid filter key"):
        list(saver.list(None, filter={key: "input"}))
    # the reference rejects the same keys (its fix for the CVE)
    ref = _ref_sqlite()
    with pytest.raises(ValueError):
        list(ref.list(None, filter={key: "input"}))
    assert saver.conn.execute("SELECT count(*) FROM wg_checkpoints").fetchone()[0] == 4


def test_filter_values_are_bound_parameters(saver) -> None:
    _fill(saver)
    evil = "input' OR '1'='1"
    assert list(saver.list(None, filter={"source": evil})) == []
    assert saver.conn.execute("SELECT count(*) FROM wg_checkpoints").fetchone()[0] == 4


def test_metadata_that_is_not_json_is_a_clear_error(saver) -> None:
    with pytest.raises(TypeError, match="metadata key 'blob'"):
        saver.put(_cfg(), _cp({}, {}), {"blob": object()}, {})
    with pytest.raises(TypeError, match="metadata key 'nan'"):
        saver.put(_cfg(), _cp({}, {}), {"nan": float("nan")}, {})
    assert saver.get_tuple(_cfg()) is None


# --- indexes -----------------------------------------------------------------------------


def test_queries_use_indexes_on_a_100k_checkpoint_database(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "big.db")) as s:
        filler = []
        serde = JsonPlusSerializer()
        rec = serde.dumps_typed({"v": 4, "id": "x", "ts": "", "c": {}, "s": {}})
        for t in range(1000):
            for i in range(100):
                filler.append(
                    (
                        f"thread-{t}",
                        "",
                        f"{i:08d}",
                        None,
                        None,
                        0,
                        f"run-{t}",
                        rec[0],
                        rec[1],
                        f'{{"source":"loop","step":{i}}}',
                    )
                )
        s.conn.execute("BEGIN")
        s.conn.executemany(
            "INSERT INTO wg_checkpoints (thread_id, checkpoint_ns, "
            "checkpoint_id, parent_checkpoint_id, base_id, depth, run_id, type, "
            "checkpoint, metadata) VALUES (?,?,?,?,?,?,?,?,?,?)",
            filler,
        )
        s.conn.execute("COMMIT")
        config = _cfg("real")
        for step in range(20):
            cp = _cp({"a": step, "b": "x"}, {"a": step + 1, "b": 1}, {"n": {"a": step}})
            config = s.put(config, cp, {"step": step, "run_id": "run-real"}, {"a": step + 1})
            s.put_writes(config, [("a", 1)], "task", "p")
        assert s.conn.execute("SELECT count(*) FROM wg_checkpoints").fetchone()[0] >= 100_000

        statements: list[str] = []
        s.conn.set_trace_callback(statements.append)
        s.get_tuple(_cfg("real"))
        s.get_tuple(config)
        list(s.list(_cfg("real"), limit=5))
        list(s.list({"configurable": {"thread_id": "real"}}, before=config, limit=5))
        list(s.list(None, filter={"run_id": "run-real"}, limit=3))
        s.put(
            config,
            _cp({"a": 0}, {"a": 99, "b": 1}),
            {"step": 99},
            {"a": 99},
            expected_head=config["configurable"]["checkpoint_id"],
        )
        s.conn.set_trace_callback(None)
        s.delete_for_runs(["run-7"])
        checked = blob_loads = 0
        for sql in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
                continue
            plan = " | ".join(r[3] for r in s.conn.execute("EXPLAIN QUERY PLAN " + sql))
            for table in ("wg_checkpoints", "wg_blobs", "wg_writes", " b "):
                assert f"SCAN {table.strip()} " not in plan + " ", (sql, plan)
            if "wg_blobs AS b" in sql:  # one full-key lookup per wanted channel version
                assert "channel=? AND version=?" in plan, plan
                blob_loads += 1
            checked += 1
        # (blob rows once read are cached: later reads of the same versions need no query)
        assert checked >= 10 and blob_loads >= 1
        plan = " ".join(
            r[3]
            for r in s.conn.execute(
                "EXPLAIN QUERY PLAN " + s._core.list_query(_cfg("real"), limit=5)[0],
                s._core.list_query(_cfg("real"), limit=5)[1],
            )
        )
        # a keyed search (the clustered primary key or an index), and no sort of the rows
        assert plan.startswith("SEARCH") and ("INDEX" in plan or "PRIMARY KEY" in plan), plan
        assert "TEMP B-TREE" not in plan, plan


# --- batches, fencing and the writer ---------------------------------------------------------


def test_put_batch_is_one_transaction(saver) -> None:
    first = saver.put(_cfg(), _cp({"a": 1}, {"a": 1}), {}, {"a": 1})
    head = first["configurable"]["checkpoint_id"]
    cp2 = _cp({"a": 2}, {"a": 2})
    ops = [
        WritesOp(first, [("a", 2)], "task", "p"),
        PutOp(first, cp2, {"step": 1}, {"a": 2}, expected_head=head),
        WritesOp(_cfg(cid=cp2["id"]), [("a", 3)], "task2"),
        PutOp(_cfg(cid=cp2["id"]), _cp({}, {"a": 2}), {}, {}, expected_head="stale"),
    ]
    with pytest.raises(CheckpointConflictError):
        saver.put_batch(ops)
    assert saver.get_tuple(_cfg()).checkpoint["id"] == head  # all rolled back
    assert saver.get_tuple(first).pending_writes == []
    results = saver.put_batch(ops, return_exceptions=True)
    assert results[0] is None and results[2] is None
    assert results[1]["configurable"]["checkpoint_id"] == cp2["id"]
    assert isinstance(results[3], CheckpointConflictError)
    assert saver.get_tuple(_cfg()).checkpoint["id"] == cp2["id"]
    assert saver.get_tuple(first).pending_writes == [("task", "a", 2)]
    assert saver.get_tuple(_cfg()).pending_writes == [("task2", "a", 3)]


def test_fenced_put_semantics(saver) -> None:
    a = _cp({"v": 1}, {"v": 1})
    cfg_a = saver.put(_cfg(), a, {}, {"v": 1}, expected_head=None)
    with pytest.raises(CheckpointConflictError) as info:
        saver.put(_cfg(), _cp({}, {}), {}, {}, expected_head=None)
    assert info.value.actual == a["id"] and info.value.expected is None
    b = _cp({"v": 2}, {"v": 2})
    cfg_b = saver.put(cfg_a, b, {}, {"v": 2}, expected_head=a["id"])
    # stale run (still expecting a): rejected, nothing stored
    stale = _cp({"v": 3}, {"v": 3})
    with pytest.raises(CheckpointConflictError, match="another run wrote"):
        saver.put(cfg_a, stale, {}, {"v": 3}, expected_head=a["id"])
    assert saver.get_tuple(_cfg(cid=stale["id"])) is None
    assert (
        saver.conn.execute("SELECT count(*) FROM wg_blobs WHERE version = '3'").fetchone()[0] == 0
    )
    # time travel: fork from `a` while the head is `b` is allowed when expecting `b`
    fork = _cp({"v": 4}, {"v": 4})
    saver.put(cfg_a, fork, {}, {"v": 4}, expected_head=cfg_b["configurable"]["checkpoint_id"])
    # the config key does the same; other namespaces are independent
    cfg = {
        "configurable": {
            **_cfg()["configurable"],
            "checkpoint_id": fork["id"],
            "__pregel_expected_head": b["id"],
        }
    }
    with pytest.raises(CheckpointConflictError):
        saver.put(cfg, _cp({}, {}), {}, {})
    saver.put(_cfg(ns="child"), _cp({}, {}), {}, {}, expected_head=None)
    # plain puts are not fenced
    saver.put(cfg_a, _cp({}, {}), {}, {})


def test_group_commit_writer_batches_in_order(tmp_path) -> None:
    path = str(tmp_path / "gc.db")
    with SqliteSaver.from_conn_string(path) as s:
        writer = s.writer()
        config = s.put(_cfg(), _cp({"n": 0}, {"n": 1}), {"step": 0}, {"n": 1})
        futures = []
        with s.lock:  # the writer cannot commit until everything is queued
            for step in range(1, 201):
                futures.append(writer.put_writes(config, [("n", step)], f"task-{step}"))
                cp = _cp({"n": step}, {"n": step + 1})
                futures.append(writer.put(config, cp, {"step": step}, {"n": step + 1}))
                config = {"configurable": {**config["configurable"], "checkpoint_id": cp["id"]}}
        writer.flush()
        assert all(f.done() and f.exception() is None for f in futures)
        assert writer.batches <= 3
        writer.close()
        history = list(s.list(_cfg()))
        assert [t.metadata["step"] for t in history] == list(range(200, -1, -1))
        for newer, older in pairwise(history):
            assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]
            assert older.pending_writes == [
                (f"task-{newer.metadata['step']}", "n", newer.metadata["step"])
            ]


def test_writer_never_shows_a_checkpoint_before_its_writes(tmp_path) -> None:
    path = str(tmp_path / "order.db")
    with SqliteSaver.from_conn_string(path) as s:
        config = s.put(_cfg(), _cp({}, {}), {"step": 0}, {})
        stop = threading.Event()
        problems: list[str] = []

        def reader() -> None:
            with SqliteSaver.from_conn_string(path) as r:
                while not stop.is_set():
                    tup = r.get_tuple(_cfg())
                    if tup.parent_config is not None:
                        parent = r.get_tuple(tup.parent_config)
                        if len(parent.pending_writes) != 2:
                            problems.append(tup.checkpoint["id"])

        t = threading.Thread(target=reader)
        t.start()
        with s.writer(max_batch=7) as writer:
            for step in range(1, 300):
                writer.put_writes(config, [("a", step)], "t1")
                writer.put_writes(config, [("b", step)], "t2")
                cp = _cp({}, {})
                writer.put(config, cp, {"step": step}, {})
                config = _cfg(cid=cp["id"])
        stop.set()
        t.join()
        assert problems == []
        assert s.get_tuple(_cfg()).metadata["step"] == 299


def test_with_allowlist_clone_shares_the_database(saver) -> None:
    clone = saver.with_allowlist([("mymod", "MyType")])
    cfg = clone.put(_cfg("al"), _cp({"a": [1, 2]}, {"a": 1}), {}, {"a": 1})
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == {"a": [1, 2]}
    assert clone.get_tuple(cfg) == saver.get_tuple(cfg)
