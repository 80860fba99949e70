"""PostgresSaver / AsyncPostgresSaver behaviour on a real PostgreSQL server.

Storage layout (blobs only for new versions, BYTEA, JSONB metadata), one statement per
operation, migrations, safe metadata filters, prune/delete_for_runs details, the import
error without the extra, and results equal to LangGraph's InMemorySaver on the same calls.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from warpgraph.checkpoint.postgres import CheckpointConflictError, PostgresSaver, PutOp, WritesOp
from warpgraph.checkpoint.postgres._schema import (
    BLOBS,
    CHECKPOINTS,
    MIGRATIONS,
    MIGRATIONS_TABLE,
    WRITES,
)
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from tests.checkpoint._data import checkpoint_dict as _checkpoint


def _cfg(thread: str, ns: str = "", checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


@pytest.fixture
def saver(pg_fresh_dsn):
    with PostgresSaver.from_conn_string(pg_fresh_dsn) as s:
        s.setup()
        yield s


def _count(saver: PostgresSaver, table: str, thread: str | None = None) -> int:
    sql = f"SELECT count(*) FROM {table}" + (" WHERE thread_id = %s" if thread else "")
    return saver.conn.execute(sql, [thread] if thread else None).fetchone()[0]


# --- schema and migrations -----------------------------------------------------------


def test_setup_is_versioned_idempotent_and_concurrent(pg_fresh_dsn: str) -> None:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with PostgresSaver.from_conn_string(pg_fresh_dsn) as s:
                s.setup()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with psycopg.connect(pg_fresh_dsn, autocommit=True) as conn:
        applied = [r[0] for r in conn.execute(f"SELECT v FROM {MIGRATIONS_TABLE} ORDER BY v")]
        assert applied == list(range(len(MIGRATIONS)))
        types = dict(
            conn.execute(
                "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns"
                " WHERE column_name IN ('blob', 'checkpoint', 'metadata')"
                " AND table_name LIKE 'warpgraph_%'"
            ).fetchall()
        )
    assert types == {
        f"{BLOBS}.blob": "bytea",
        f"{WRITES}.blob": "bytea",
        f"{CHECKPOINTS}.checkpoint": "bytea",
        f"{CHECKPOINTS}.metadata": "jsonb",
    }


def test_plain_connection_must_be_autocommit(pg_dsn: str) -> None:
    with psycopg.connect(pg_dsn) as conn, pytest.raises(ValueError, match="autocommit"):
        PostgresSaver(conn)
    with pytest.raises(TypeError, match="psycopg Connection or ConnectionPool"):
        PostgresSaver(object())


def test_import_error_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "try:\n    import warpgraph.checkpoint.postgres\n"
        "except ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'warpgraph[postgres]'" in out.stdout


# --- storage -------------------------------------------------------------------------


def test_blobs_written_only_for_new_versions(saver: PostgresSaver) -> None:
    big = "x" * 50_000
    c1 = saver.put(
        _cfg("t"), _checkpoint({"big": big, "n": [1]}, {"big": 1, "n": 1}), {}, {"big": 1, "n": 1}
    )
    assert _count(saver, BLOBS, "t") == 2
    # Only `n` changes: one new blob row; `big` is read back from version 1's row.
    cp2 = _checkpoint({"big": big, "n": [2]}, {"big": 1, "n": 2})
    c2 = saver.put(c1, cp2, {}, {"n": 2})
    assert _count(saver, BLOBS, "t") == 3
    tup = saver.get_tuple(c2)
    assert tup.checkpoint["channel_values"] == {"big": big, "n": [2]}
    assert tup.parent_config == c1
    stored = saver.conn.execute(
        f"SELECT octet_length(checkpoint) FROM {CHECKPOINTS} WHERE checkpoint_id = %s",
        [cp2["id"]],
    ).fetchone()[0]
    assert stored < 1024  # the checkpoint row carries no channel values


def test_each_operation_is_one_statement(pg_dsn: str, monkeypatch) -> None:
    executed: list[str] = []
    execute = psycopg.Cursor.execute  # every cursor class's, RawCursor's too

    def counting(self, query, params=None, **kw):
        executed.append(query)
        return execute(self, query, params, **kw)

    def executemany(self, *a, **kw):
        raise AssertionError("executemany is not one round trip")

    monkeypatch.setattr(psycopg.Cursor, "execute", counting)
    monkeypatch.setattr(psycopg.Cursor, "executemany", executemany)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        executed.clear()
        cfg = saver.put(
            _cfg("one"), _checkpoint({"a": 1, "b": [1]}, {"a": 1, "b": 1}), {}, {"a": 1, "b": 1}
        )
        saver.put_writes(cfg, [("a", 2), ("b", [3]), ("c", 4)], "task")
        saver.get_tuple(cfg)
        list(saver.list(_cfg("one"), limit=3))
        saver.copy_thread("one", "two")
        saver.prune(["one"])
        saver.delete_for_runs(["r"])
        saver.delete_thread("two")
        assert len(executed) == 8
        # a super-step (writes of several tasks + the next checkpoint, two threads): ONE
        # statement, and the fenced put's conflict rolls it all back
        executed.clear()
        c1 = saver.put(_cfg("b1"), _checkpoint({"a": 1}, {"a": 1}), {}, {"a": 1})
        head = c1["configurable"]["checkpoint_id"]
        nxt = _checkpoint({"a": 2}, {"a": 2})
        out = saver.put_batch(
            [
                WritesOp(c1, [("a", 2)], "t1"),
                WritesOp(c1, [("__interrupt__", "x")], "t2"),
                PutOp(c1, nxt, {"step": 1}, {"a": 2}, expected_head=head),
                PutOp(_cfg("b2"), _checkpoint({"z": 0}, {"z": 1}), {}, {"z": 1}),
            ]
        )
        assert len(executed) == 2  # the plain put + the batch
        assert out[:3] == [None, None, _cfg("b1", "", nxt["id"])]
        assert saver.get_tuple(c1).pending_writes == [("t1", "a", 2), ("t2", "__interrupt__", "x")]
        assert saver.get_tuple(_cfg("b1")).checkpoint["channel_values"] == {"a": 2}
        assert saver.get_tuple(out[3]).checkpoint["channel_values"] == {"z": 0}
        stale = [
            WritesOp(c1, [("a", 3)], "t3"),
            PutOp(c1, _checkpoint({"a": 3}, {"a": 3}), {}, {"a": 3}, expected_head=head),
        ]
        with pytest.raises(CheckpointConflictError):
            saver.put_batch(stale)
        assert len(saver.get_tuple(c1).pending_writes) == 2


def test_pending_writes_order_idempotence_and_special_replace(saver: PostgresSaver) -> None:
    ref = RefSaver()
    for s in (saver, ref):
        cfg = s.put(_cfg("w"), _checkpoint({}, {}), {}, {})
        s.put_writes(cfg, [("a", 1), ("b", 2)], "t2", "p2")
        s.put_writes(cfg, [("a", 10), ("b", 20)], "t2", "p2")  # duplicate: ignored
        s.put_writes(cfg, [("a", 3)], "t1", "p1")
        s.put_writes(cfg, [("__error__", "e1")], "t3", "p0")
        s.put_writes(cfg, [("__error__", "e2")], "t3", "p0")  # special: replaced
    ours = saver.get_tuple(_cfg("w")).pending_writes
    theirs = ref.get_tuple(_cfg("w")).pending_writes
    assert ours == theirs
    assert ours == [("t3", "__error__", "e2"), ("t1", "a", 3), ("t2", "a", 1), ("t2", "b", 2)]


# --- same results as LangGraph's PostgresSaver (own tables, same database) -----------------------------------------


def _script_checkpoints() -> list[dict]:
    return [
        _checkpoint(
            {"n": i, "items": list(range(i)), "raw": bytes([i])},
            {"n": i + 1, "items": i + 1, "raw": 1},
            versions_seen={"node": {"n": i}},
            updated_channels=["n"],
        )
        for i in range(5)
        for _ns in ("", "sub:1")
    ]


def _script(s: Any, checkpoints: list[dict]) -> None:
    parent = None
    it = iter(checkpoints)
    for i in range(5):
        for ns in ("", "sub:1"):
            cfg = _cfg("s", ns, parent if ns == "" else None)
            meta = {"source": "loop", "step": i, "score": i % 2, "tag": f"t{i}"}
            new = {"n": i + 1, "items": i + 1} if i else {"n": 1, "items": 1, "raw": 1}
            out = s.put(cfg, next(it), meta, new)
            if ns == "":
                parent = out["configurable"]["checkpoint_id"]
            s.put_writes(out, [("n", i * 10), ("__interrupt__", {"q": i})], f"task{i}", "~")


def _norm(tups: list) -> list:
    return [
        (
            t.config,
            t.checkpoint,
            {k: v for k, v in t.metadata.items()},
            t.parent_config,
            t.pending_writes,
        )
        for t in tups
    ]


@pytest.mark.parametrize(
    "query",
    [
        {"config": _cfg("s")},
        {"config": {"configurable": {"thread_id": "s"}}},
        {"config": _cfg("s", "sub:1")},
        {"config": _cfg("s"), "filter": {"score": 1}},
        {"config": _cfg("s"), "filter": {"score": 0, "tag": "t2"}},
        {"config": _cfg("s"), "filter": {"source": "loop"}, "limit": 2},
        {"config": _cfg("s"), "limit": 0},
        {"config": None, "filter": {"step": 3}},
    ],
)
def test_list_matches_langgraph_postgres_saver(
    saver: PostgresSaver, pg_fresh_dsn: str, query: dict
) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as RefPostgresSaver

    with RefPostgresSaver.from_conn_string(pg_fresh_dsn) as ref:
        ref.setup()
        _compare_list(saver, ref, query)


def _compare_list(saver: PostgresSaver, ref: Any, query: dict) -> None:
    checkpoints = _script_checkpoints()
    _script(saver, checkpoints)
    _script(ref, checkpoints)
    ours = list(saver.list(**query))
    theirs = list(ref.list(**query))
    assert _norm(ours) == _norm(theirs)
    assert len(ours) > 0 or query.get("limit") == 0
    # `before` = the second-newest of the thread: strictly older ones only
    before = list(ref.list(_cfg("s"), limit=2))[-1].config
    assert _norm(saver.list(_cfg("s"), before=before)) == _norm(ref.list(_cfg("s"), before=before))
    for cfg in (_cfg("s"), _cfg("s", "sub:1"), before):
        assert _norm([saver.get_tuple(cfg)]) == _norm([ref.get_tuple(cfg)])


# --- metadata filters: parameterised, hostile keys rejected ----------------------------

HOSTILE_KEYS = [
    "source') OR 1=1 --",
    "a'; DROP TABLE warpgraph_checkpoints; --",
    '$.source") OR ("1"="1',
    'step" = 1 OR "x',
    "a b",
    "",
    "x\u0000y",
    "metadata->>'run_id'",
]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_filter_keys_with_sql_syntax_are_rejected(saver: PostgresSaver, key: str) -> None:
    saver.put(_cfg("f"), _checkpoint({}, {}), {"source": "input"}, {})
    with pytest.raises(ValueError, match="filter key"):
        list(saver.list(None, filter={key: 1}))
    assert _count(saver, CHECKPOINTS) == 1  # nothing was executed or dropped


def test_filter_values_are_bound_and_keys_match_literally(saver: PostgresSaver) -> None:
    saver.put(
        _cfg("f"), _checkpoint({}, {}), {"source": "x' OR '1'='1", "a.b": 1, "a": {"b": 2}}, {}
    )
    assert len(list(saver.list(None, filter={"source": "x' OR '1'='1"}))) == 1
    assert len(list(saver.list(None, filter={"source": "' OR 1=1 --"}))) == 0
    assert len(list(saver.list(None, filter={"a.b": 1}))) == 1  # the key "a.b", not a path
    assert len(list(saver.list(None, filter={"a.b": 2}))) == 0
    with pytest.raises(ValueError, match="JSON"):
        list(saver.list(None, filter={"source": object()}))


# --- prune, delete_for_runs ------------------------------------------------------------


def test_prune_keeps_latest_with_its_interrupt_and_shared_blobs(saver: PostgresSaver) -> None:
    # list values: stored as blobs (small scalars are inlined in the checkpoint row)
    c1 = saver.put(
        _cfg("p"),
        _checkpoint({"big": ["B"], "n": [0]}, {"big": 1, "n": 1}),
        {},
        {"big": 1, "n": 1},
    )
    saver.put_writes(c1, [("n", 5)], "old-task")
    c2 = saver.put(c1, _checkpoint({"big": ["B"], "n": [1]}, {"big": 1, "n": 2}), {}, {"n": 2})
    c3 = saver.put(c2, _checkpoint({"big": ["B"], "n": [2]}, {"big": 1, "n": 3}), {}, {"n": 3})
    saver.put_writes(c3, [("__interrupt__", [{"value": "approve?"}])], "ask")
    saver.prune(["p"], strategy="keep_latest")
    assert [t.config for t in saver.list(_cfg("p"))] == [c3]
    latest = saver.get_tuple(_cfg("p"))
    # the blob of `big` (written by the pruned first checkpoint) is still there
    assert latest.checkpoint["channel_values"] == {"big": ["B"], "n": [2]}
    assert latest.pending_writes == [("ask", "__interrupt__", [{"value": "approve?"}])]
    assert _count(saver, BLOBS, "p") == 2  # big@1, n@3: n@1 and n@2 are gone
    assert _count(saver, WRITES, "p") == 1
    with pytest.raises(ValueError, match="prune strategy"):
        saver.prune(["p"], strategy="keep_some")


def test_delete_for_runs_moves_the_head_back(saver: PostgresSaver) -> None:
    c1 = saver.put(_cfg("r"), _checkpoint({"n": [1]}, {"n": 1}), {"run_id": "run-1"}, {"n": 1})
    c2 = saver.put(c1, _checkpoint({"n": [2]}, {"n": 2}), {"run_id": "run-2"}, {"n": 2})
    saver.put_writes(c2, [("n", 3)], "t")
    saver.delete_for_runs(["run-2"])
    assert saver.get_tuple(_cfg("r")).config == c1
    assert _count(saver, BLOBS, "r") == 1 and _count(saver, WRITES, "r") == 0
    # a fenced put expecting the restored head succeeds
    c3 = saver.put(
        c1,
        _checkpoint({"n": 4}, {"n": 3}),
        {},
        {"n": 3},
        expected_head=c1["configurable"]["checkpoint_id"],
    )
    assert saver.get_tuple(_cfg("r")).config == c3


# --- async saver: sync calls from other threads -------------------------------------------


async def test_async_saver_sync_methods_from_another_thread(pg_dsn: str) -> None:
    import asyncio

    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        await saver.setup()
        cfg = await saver.aput(_cfg("as"), _checkpoint({"a": 1}, {"a": 1}), {}, {"a": 1})
        with pytest.raises(asyncio.InvalidStateError, match="different thread"):
            saver.get_tuple(cfg)
        tup = await asyncio.to_thread(saver.get_tuple, cfg)
        assert tup.checkpoint["channel_values"] == {"a": 1}
        listed = await asyncio.to_thread(lambda: list(saver.list(_cfg("as"))))
        assert [t.config for t in listed] == [cfg]


def test_awkward_channel_names_and_many_channels_round_trip(saver: PostgresSaver) -> None:
    names = ['a"b', "c\\d", "e,f", "{g}", "NULL", " sp ", "ünï", "", "x" * 200]
    names += [f"ch{i}" for i in range(40)]  # more blob rows than the VALUES form takes
    values = {n: i for i, n in enumerate(names)}
    versions = {n: f"{1:032}.{0.5:016}" for n in names}
    cfg = saver.put(_cfg("names"), _checkpoint(values, versions), {}, versions)
    saver.put_writes(cfg, [(n, i) for i, n in enumerate(names)], "many")
    tup = saver.get_tuple(cfg)
    assert tup.checkpoint["channel_values"] == values
    assert tup.checkpoint["channel_versions"] == versions
    assert tup.pending_writes == [("many", n, i) for i, n in enumerate(names)]


def test_small_scalars_are_inlined_without_blobs(saver: PostgresSaver) -> None:
    values = {
        "i": 7,
        "f": 1.5,
        "b": True,
        "none": None,
        "s": "short",
        "long": "y" * 65,
        "lst": [1, 2],
    }
    versions = {k: 1 for k in values}
    cfg = saver.put(_cfg("inl"), _checkpoint(values, versions), {}, versions)
    # the row lists only the channels read from blobs; the inlined values have no blob
    channels = saver.conn.execute(
        f"SELECT channels FROM {CHECKPOINTS} WHERE thread_id = 'inl'"
    ).fetchone()[0]
    assert sorted(channels) == ["long", "lst"]
    blobs = saver.conn.execute(f"SELECT channel FROM {BLOBS} WHERE thread_id = 'inl'").fetchall()
    assert sorted(r[0] for r in blobs) == ["long", "lst"]
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == values
    # a later checkpoint that omits an unchanged value still finds it through its blob, and
    # unchanged inlined values are inlined again
    later = _checkpoint({**values, "i": 8}, {**versions, "i": 2})
    cfg2 = saver.put(cfg, later, {}, {"i": 2})
    assert saver.get_tuple(cfg2).checkpoint["channel_values"] == {**values, "i": 8}
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == values


def test_small_scalars_beyond_the_inline_budget_get_blobs(saver: PostgresSaver) -> None:
    """Inlining has a per-row budget, so an unchanged value inlined by one checkpoint can be
    left out by a later one (other values grew): that put writes its blob, and every
    checkpoint of the thread reads back in full."""
    values = {f"c{k:02d}": k for k in range(8)}  # 8 small ints: all inlined
    versions = {k: 1 for k in values}
    cfg = saver.put(_cfg("spill"), _checkpoint(values, versions), {}, versions)
    assert _count(saver, BLOBS, "spill") == 0
    configs = [(cfg, values)]
    # new channels in front take the budget (40 strings of 60 characters); c00..c07 are
    # unchanged (no new version) and no longer fit
    wide = {f"a{k:02d}": "z" * 60 for k in range(40)}
    state = {**wide, **values}
    cp = _checkpoint(state, {**{k: 1 for k in wide}, **versions})
    cfg = saver.put(cfg, cp, {}, {k: 1 for k in wide})
    configs.append((cfg, state))
    spilled = saver.conn.execute(
        f"SELECT count(*) FROM {BLOBS} WHERE thread_id = 'spill' AND channel LIKE 'c%%'"
    ).fetchone()[0]
    assert spilled == len(values)
    # the spilled values' blobs are there for later checkpoints too
    state = {**state, "c00": 100}
    cp = _checkpoint(state, {**cp["channel_versions"], "c00": 2})
    cfg = saver.put(cfg, cp, {}, {"c00": 2})
    configs.append((cfg, state))
    for c, expected in configs:
        assert saver.get_tuple(c).checkpoint["channel_values"] == expected
    listed = [t.checkpoint["channel_values"] for t in saver.list(_cfg("spill"))]
    assert listed == [expected for _, expected in reversed(configs)]


def test_rows_in_the_previous_checkpoint_format_still_read(saver: PostgresSaver) -> None:
    """Rows written before the checkpoint column held the checkpoint itself (the shared
    codec's record, inlined values in inline_type / inline) read back the same."""
    from warpgraph.checkpoint._sql import codec

    values = {"i": 7, "s": "short", "lst": [1, 2]}
    versions = {"i": 3, "s": 1, "lst": 2}
    cp = _checkpoint(values, versions, versions_seen={"node": {"i": 2}}, updated_channels=["i"])
    cfg = saver.put(_cfg("old"), cp, {"step": 1}, versions)
    new_format = saver.get_tuple(cfg)
    record = codec.encode_checkpoint(saver.serde, cp, None, None).record
    inline = saver.serde.dumps_typed({"i": 7, "s": "short"})
    saver.conn.execute(  # as the previous version wrote it: every channel listed
        f"UPDATE {CHECKPOINTS} SET type = %s, checkpoint = %s, inline_type = %s, inline = %s,"
        " channels = %s, versions = %s, inlined = %s WHERE thread_id = 'old'",
        [*record, *inline, list(versions), [str(v) for v in versions.values()], ["i", "s"]],
    )
    saver.conn.execute(f"DELETE FROM {BLOBS} WHERE thread_id = 'old' AND channel <> 'lst'")
    old_format = saver.get_tuple(cfg)
    assert old_format == new_format
    assert old_format.checkpoint["channel_values"] == values
    assert old_format.checkpoint["versions_seen"] == {"node": {"i": 2}}


def test_scratch_server_listens_on_loopback_only_and_is_removed(pg_server) -> None:
    from .pg_server import PgServer, find_bindir

    if find_bindir() is None:
        pytest.skip("uses the local PostgreSQL binaries")
    server = PgServer().start()
    tmp = server.tmpdir
    try:
        with psycopg.connect(server.dsn, autocommit=True) as conn:
            settings = dict(
                conn.execute(
                    "SELECT name, setting FROM pg_settings WHERE name IN "
                    "('listen_addresses', 'unix_socket_directories', 'port')"
                ).fetchall()
            )
        assert settings == {
            "listen_addresses": "127.0.0.1",
            "port": str(server.port),
            "unix_socket_directories": str(tmp),
        }
    finally:
        server.stop()
    assert not tmp.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(server.dsn, connect_timeout=5)
    server.stop()  # idempotent


def test_prune_keep_latest_refuses_delta_channel_threads(saver: PostgresSaver) -> None:
    """(LangGraph's rule) a DeltaChannel's latest value is rebuilt from older checkpoints,
    so keep_latest refuses a thread that uses one and prunes nothing; delete still works."""
    plain = saver.put(_cfg("plain"), _checkpoint({"n": [1]}, {"n": 1}), {}, {"n": 1})
    saver.put(plain, _checkpoint({"n": [2]}, {"n": 2}), {}, {"n": 2})
    c1 = saver.put(_cfg("d"), _checkpoint({}, {"items": 1}), {}, {"items": 1})
    saver.put(
        c1,
        _checkpoint({}, {"items": 2}),
        {"counters_since_delta_snapshot": {"items": [1, 1]}},
        {"items": 2},
    )
    with pytest.raises(NotImplementedError, match="use a DeltaChannel: d"):
        saver.prune(["plain", "d"], strategy="keep_latest")
    assert len(list(saver.list(_cfg("plain")))) == 2
    assert len(list(saver.list(_cfg("d")))) == 2
    saver.prune(["plain"], strategy="keep_latest")
    assert len(list(saver.list(_cfg("plain")))) == 1
    saver.prune(["d"], strategy="delete")
    assert list(saver.list(_cfg("d"))) == []
