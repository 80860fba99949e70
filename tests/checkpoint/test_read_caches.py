"""The savers' read paths: InMemorySaver's joined-payload cache, SQLite's one-statement
`get_tuple` and its blob cache, `loads_many` with None values; each read compared with
LangGraph's saver doing the same."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefMemory
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite
from warpgraph.checkpoint._sql.values import loads_many, msgpack_payload, unpack_payload
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.sqlite import SqliteSaver

from tests.checkpoint.test_sqlite import _cp as checkpoint_of

BIG = "x" * 500  # (not inlined in the SQLite record: read from a blob row)


def _cp(values: dict, versions: dict, cid: str | None = None) -> dict:
    return checkpoint_of(values, versions, {"n": {"a": versions.get("a", 1)}}, cid)


def _cfg(thread: str = "t", cid: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ""}
    if cid:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def _view(t) -> tuple:
    return None if t is None else (t.checkpoint, t.metadata, t.pending_writes, t.parent_config)


def test_loads_many_decodes_none_values_with_the_rest() -> None:
    serde = JsonPlusSerializer()
    typed = [serde.dumps_typed(v) for v in (1, None, "s", [1, {"k": None}], None)]
    assert typed[1][0] == "null"
    assert loads_many(serde, typed) == [1, None, "s", [1, {"k": None}], None]
    payload = msgpack_payload(serde, typed, 1 << 20)
    assert payload is not None and unpack_payload(serde, payload) == loads_many(serde, typed)
    assert msgpack_payload(serde, typed, 2) is None  # over the limit
    assert msgpack_payload(serde, [*typed, ("bytes", b"x")], 1 << 20) is None


def _scenario(saver, ref) -> None:
    """Puts, writes, repeated reads (cached), a replaced blob, a copy and a delete: every
    read equal to the reference saver's."""
    cp1 = _cp({"a": 1, "b": BIG}, {"a": 1, "b": 1})
    cp2 = _cp({"a": 2, "b": BIG}, {"a": 2, "b": 1})
    cfgs = []
    for s in (saver, ref):
        c1 = s.put(_cfg(), dict(cp1), {"step": 0}, {"a": 1, "b": 1})
        s.put_writes(c1, [("a", 5), ("b", None)], "task-2", "p")
        s.put_writes(c1, [("a", 6)], "task-1", "p")
        c2 = s.put(c1, dict(cp2), {"step": 1}, {"a": 2})
        cfgs.append((c1, c2))
    (c1, c2), (r1, r2) = cfgs
    for _ in range(3):  # (the later reads come from the caches)
        assert _view(saver.get_tuple(_cfg())) == _view(ref.get_tuple(_cfg()))
        a, b = saver.get_tuple(c1), ref.get_tuple(r1)
        assert a.checkpoint["channel_values"] == b.checkpoint["channel_values"]
        assert a.pending_writes == b.pending_writes  # (ordered by task path, id, idx)
        assert [_view(t) for t in saver.list(_cfg(), limit=5)] == [
            _view(t) for t in ref.list(_cfg(), limit=5)
        ]
    # a caller mutating what it read does not change the next read
    saver.get_tuple(_cfg()).checkpoint["channel_values"]["a"] = "mutated"
    assert saver.get_tuple(_cfg()).checkpoint["channel_values"]["a"] == 2
    # writes added after a cached read show up
    saver.put_writes(c2, [("a", 7)], "task-3", "p")
    ref.put_writes(r2, [("a", 7)], "task-3", "p")
    assert _view(saver.get_tuple(_cfg())) == _view(ref.get_tuple(_cfg()))
    # a copy, then a delete of the source, then a new thread under the old name
    saver.copy_thread("t", "u")
    assert saver.get_tuple(_cfg("u")).checkpoint["channel_values"]["b"] == BIG
    saver.delete_thread("t")
    ref.delete_thread("t")
    assert saver.get_tuple(_cfg()) is None and saver.get_tuple(c1) is None
    for s in (saver, ref):
        s.put(
            _cfg(),
            _cp({"a": 9, "b": "new"}, {"a": 1, "b": 1}, c1["configurable"]["checkpoint_id"]),
            {},
            {"a": 1, "b": 1},
        )
    assert _view(saver.get_tuple(_cfg())) == _view(ref.get_tuple(_cfg()))
    assert saver.get_tuple(_cfg("u")).checkpoint["channel_values"]["b"] == BIG


def test_memory_reads_match_the_reference() -> None:
    _scenario(InMemorySaver(), RefMemory())


def test_memory_read_cache_drops_a_replaced_blob() -> None:
    saver = InMemorySaver()
    cfg = saver.put(_cfg(), _cp({"a": 1}, {"a": 1}), {}, {"a": 1})
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == {"a": 1}
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == {"a": 1}  # cached
    # another checkpoint storing the same version again (a custom saver's versions)
    saver.put(cfg, _cp({"a": 2}, {"a": 1}), {}, {"a": 1})
    assert saver.get_tuple(cfg).checkpoint["channel_values"] == {"a": 2}


@pytest.mark.parametrize("native", ["0", "1"])
def test_sqlite_reads_match_the_reference(tmp_path, monkeypatch, native: str) -> None:
    monkeypatch.setenv("WARPGRAPH_SQLITE_NATIVE_WRITER", native)
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "wg.db")) as saver,
        RefSqlite.from_conn_string(str(tmp_path / "lg.db")) as ref,
    ):
        _scenario(saver, ref)


def test_sqlite_get_tuple_ignores_writes_without_their_checkpoint(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "wg.db")) as saver:
        cfg = saver.put(_cfg(), _cp({"a": 1}, {"a": 1}), {}, {"a": 1})
        saver.put_writes(cfg, [("a", 2)], "task", "p")
        assert saver.get_tuple(cfg).pending_writes == [("task", "a", 2)]
        saver.conn.execute("DELETE FROM wg_checkpoints")
        assert saver.get_tuple(cfg) is None and saver.get_tuple(_cfg()) is None


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize(
    "values",
    [{"a": 1, "s": "x", "f": 1.5, "n": None, "t": True}, {"a": 1, "l": [1, 2], "d": {"k": 1}}],
    ids=["leaves", "containers"],
)
def test_reads_hand_out_fresh_containers(tmp_path, kind: str, values: dict) -> None:
    """Every read (the first ones and those the savers then make from what they keep
    decoded) gives its own checkpoint, versions, seen versions, values, metadata and
    pending writes: changing one read's changes no later read's."""
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "wg.db"))
        if kind == "sqlite"
        else InMemorySaver()
    ) as saver:
        versions = dict.fromkeys(values, 1)
        cp = _cp(values, versions)
        cp["updated_channels"] = list(values)
        meta = {"step": 0, "source": "loop", "parents": {"": "p"}}
        cfg = saver.put(_cfg(), cp, meta, versions)
        saver.put_writes(cfg, [("a", values["a"]), ("s", values.get("s", [1]))], "task", "p")
        expected = _view(saver.get_tuple(_cfg()))
        for _ in range(5):
            got = saver.get_tuple(_cfg())
            assert _view(got) == expected
            c = got.checkpoint
            c["channel_values"]["a"] = "changed"
            c["channel_versions"]["a"] = 99
            c["versions_seen"]["n"]["a"] = 99
            c["updated_channels"].append("z")
            c["id"] = "other"
            got.metadata["parents"][""] = "changed"
            got.metadata["step"] = 99
            got.pending_writes.append(("x", "y", 1))
            for held in [*c["channel_values"].values(), *(w[2] for w in got.pending_writes)]:
                if isinstance(held, list):
                    held.append("changed")
                elif isinstance(held, dict):
                    held["k"] = "changed"
        assert _view(saver.get_tuple(_cfg())) == expected
        assert [_view(t) for t in saver.list(_cfg())] == [expected]
        for _ in range(5):  # (the later lists: what the SQLite saver keeps decoded)
            (got,) = saver.list(_cfg())
            assert _view(got) == expected
            got.checkpoint["channel_values"]["a"] = "changed"
            got.checkpoint["versions_seen"]["n"]["a"] = 99
            got.metadata["parents"][""] = "changed"
            got.pending_writes.append(("x", "y", 1))
        assert [_view(t) for t in saver.list(_cfg())] == [expected]


def test_memory_put_chain_leaves_what_the_next_read_decodes() -> None:
    """Each `put` on the checkpoint the previous put stored (or `get_tuple` read) leaves its
    payload for the next read (`_keep_payload`): every read equal to LangGraph's saver's,
    in key order too, also when a value turns None, a channel gets its first value, a
    blob is stored again with other bytes, or the put names another parent."""
    from warpgraph.checkpoint import memory

    saver, ref = InMemorySaver(), RefMemory()
    steps = [
        ({"a": 1, "b": "x", "c": 1.5}, {"a": 1, "b": 1, "c": 1}, None),
        ({"a": 2, "b": "x", "c": 1.5}, {"a": 2, "b": 1, "c": 1}, {"a": 2}),
        ({"a": None, "b": "x", "c": 1.5}, {"a": 3, "b": 1, "c": 1}, {"a": 3}),
        ({"a": None, "b": "y", "c": 1.5, "d": [1]}, {"a": 3, "b": 2, "c": 1, "d": 1}, None),
        ({"a": 4, "b": "y", "c": 1.5, "d": [1]}, {"a": 4, "b": 2, "c": 1, "d": 1}, {"a": 4}),
        # (version 4 of "a" stored again with other bytes: no kept payload may show 4)
        ({"a": 5, "b": "y", "c": 1.5, "d": [1]}, {"a": 4, "b": 2, "c": 1, "d": 1}, {"a": 4}),
        ({"a": 6, "b": "y", "c": 1.5, "d": [1]}, {"a": 6, "b": 2, "c": 1, "d": 1}, {"a": 6}),
    ]
    configs: list = [(_cfg(), _cfg())]
    kept = 0
    for i, (values, versions, new) in enumerate(steps):
        cid = f"1ef{i:05d}-0000-6000-8000-000000000000"
        new = dict(versions) if new is None else new
        parent = configs[-1] if i != 6 else configs[-3]  # (the last put: another parent)
        out = []
        for s, config in zip((saver, ref), parent):
            out.append(s.put(config, _cp(values, versions, cid), {"step": i}, new))
        configs.append(tuple(out))
        hit = saver._reads.get(("t", "", cid))
        kept += hit is not None and hit[3] is memory._UNREAD
        for _ in range(3):
            mine, theirs = saver.get_tuple(_cfg()), ref.get_tuple(_cfg())
            assert _view(mine) == _view(theirs)
            assert list(mine.checkpoint) == list(theirs.checkpoint)
            assert list(mine.checkpoint["channel_values"]) == list(
                theirs.checkpoint["channel_values"]
            )
        for mine_cfg, ref_cfg in configs[1:]:
            assert _view(saver.get_tuple(mine_cfg)) == _view(ref.get_tuple(ref_cfg))
    assert kept >= 2  # (the chain did keep payloads)


@pytest.mark.parametrize("native", ["0", "1"])
def test_sqlite_lists_kept_while_nothing_changed(tmp_path, monkeypatch, native: str) -> None:
    """`list` keeps its tuples under the database's stamp (`build_many`): repeated lists
    equal LangGraph's saver's, and a write (of this connection or another one), a
    checkpoint put since, or a list iterated across a write shows what a fresh read does."""
    monkeypatch.setenv("WARPGRAPH_SQLITE_NATIVE_WRITER", native)
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "wg.db")) as saver,
        RefSqlite.from_conn_string(str(tmp_path / "lg.db")) as ref,
    ):
        pairs = []
        for s in (saver, ref):
            cfg = _cfg()
            got = []
            for i in range(4):
                cp = _cp({"a": i, "b": BIG}, {"a": i + 1, "b": 1}, f"1ef{i:05d}-0000-6000-8000-0")
                cfg = s.put(cfg, cp, {"step": i}, {"a": i + 1} if i else {"a": 1, "b": 1})
                got.append(cfg)
            pairs.append(got)
        mine, theirs = pairs

        def same(limit: int | None = None) -> None:
            for _ in range(4):
                assert [_view(t) for t in saver.list(_cfg(), limit=limit)] == [
                    _view(t) for t in ref.list(_cfg(), limit=limit)
                ]

        same()
        same(2)
        for s, cfgs in ((saver, mine), (ref, theirs)):
            s.put_writes(cfgs[1], [("a", 7), ("b", None)], "task", "p")
        same()
        with SqliteSaver.from_conn_string(str(tmp_path / "wg.db")) as other:
            other.put_writes(mine[2], [("a", 8)], "task-2", "p")
        ref.put_writes(theirs[2], [("a", 8)], "task-2", "p")
        same()
        # a list iterated across a write: the later chunks read what is stored then
        from warpgraph.checkpoint.sqlite import _reads

        monkeypatch.setattr(_reads, "LIST_CHUNK", 1)
        same()
        it = saver.list(_cfg())
        assert _view(next(it)) == _view(next(iter(ref.list(_cfg()))))
        saver.put_writes(mine[0], [("a", 9)], "task-3", "p")
        ref.put_writes(theirs[0], [("a", 9)], "task-3", "p")
        # (LangGraph's saver reads a whole list at once: compared with its list after that)
        assert [_view(t) for t in it] == [_view(t) for t in ref.list(_cfg())][1:]
        same()
        for s, cfgs in ((saver, mine), (ref, theirs)):
            s.put(
                cfgs[-1],
                _cp({"a": 9, "b": BIG}, {"a": 9, "b": 1}, "1ef00009-0000-6000-8000-0"),
                {"step": 9},
                {"a": 9},
            )
        same()
