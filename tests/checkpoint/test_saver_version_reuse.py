"""A checkpoint naming a version an earlier put of its thread stored, whatever its parent.

The savers' contract (LangGraph's): `put` stores values only for `new_versions`; a value whose
(channel, version) was stored earlier in the same thread/namespace is found by any later
checkpoint that names that version. A checkpoint whose versions are not its parent's plus
`new_versions` (a copy of another checkpoint saved under another parent, a fork saved with
`new_versions={}`, a version re-used many steps later) must still read back every value.
warpgraph's SQLite saver keeps small values only inline in its skip-delta records, so its
encoder has to find them (`SqliteCore.encode_put`); larger ones are blob rows.

Every saver runs the same scenarios (sync and async ones through one adapter), and LangGraph's
SqliteSaver (which stores whole checkpoints) is the reference.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqliteSaver
from warpgraph.checkpoint._sql import PutOp
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.sqlite import SqliteSaver

BIG = "B" * 300  # a blob row (above the SQLite saver's inline size)


class Sync:
    """A sync saver's put / get_tuple."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver

    def put(self, config, checkpoint, new_versions):
        return self.saver.put(config, checkpoint, {"step": 0}, new_versions)

    def get(self, config):
        return self.saver.get_tuple(config)


class Async(Sync):
    """An async saver's aput / aget_tuple, run on the adapter's own event loop."""

    def __init__(self, saver: Any, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(saver)
        self.loop = loop

    def put(self, config, checkpoint, new_versions):
        return self.loop.run_until_complete(
            self.saver.aput(config, checkpoint, {"step": 0}, new_versions)
        )

    def get(self, config):
        return self.loop.run_until_complete(self.saver.aget_tuple(config))


class Batched(Sync):
    """warpgraph's SQLite saver through `put_batch` (the loop's per-step transaction)."""

    def put(self, config, checkpoint, new_versions):
        return self.saver.put_batch([PutOp(config, checkpoint, {"step": 0}, new_versions)])[0]


class SharedWriter(Sync):
    """warpgraph's SQLite saver through its shared group-commit writer (native on a file)."""

    def put(self, config, checkpoint, new_versions):
        sink = FailureSink()
        writer = self.saver.shared_writer()
        writer.submit_many([PutOp(config, checkpoint, {"step": 0}, new_versions)], sink)
        writer.flush()
        assert sink.error is None
        conf = config["configurable"]
        return {"configurable": {**conf, "checkpoint_id": checkpoint["id"]}}


@contextmanager
def _async(factory: Callable[[], Any]) -> Iterator[Async]:
    loop = asyncio.new_event_loop()
    cm = factory()
    try:
        yield Async(loop.run_until_complete(cm.__aenter__()), loop)
    finally:
        loop.run_until_complete(cm.__aexit__(None, None, None))
        loop.close()


@contextmanager
def _saver(kind: str, tmp_path, request) -> Iterator[Sync]:
    if kind == "memory":
        yield Sync(InMemorySaver())
    elif kind == "langgraph-sqlite":
        yield Sync(RefSqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)))
    elif kind in ("sqlite", "sqlite-batch", "sqlite-writer", "sqlite-memory-writer"):
        where = ":memory:" if kind == "sqlite-memory-writer" else str(tmp_path / "s.db")
        adapter = {"sqlite": Sync, "sqlite-batch": Batched}.get(kind, SharedWriter)
        with SqliteSaver.from_conn_string(where) as saver:
            yield adapter(saver)
    elif kind == "async-sqlite":
        from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        with _async(lambda: AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db"))) as s:
            yield s
    elif kind == "postgres":
        from warpgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(request.getfixturevalue("pg_dsn")) as saver:
            saver.setup()
            yield Sync(saver)
    elif kind == "async-postgres":
        from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        dsn = request.getfixturevalue("pg_dsn")
        with _async(lambda: AsyncPostgresSaver.from_conn_string(dsn)) as s:
            s.loop.run_until_complete(s.saver.setup())
            yield s
    else:  # pragma: no cover
        raise AssertionError(kind)


KINDS = [
    "langgraph-sqlite",
    "memory",
    "sqlite",
    "sqlite-batch",
    "sqlite-writer",
    "sqlite-memory-writer",
    "async-sqlite",
    "postgres",
    "async-postgres",
]


def _cp(n: int, values: dict, versions: dict) -> dict:
    return {
        "v": 4,
        "id": f"1ef00000-0000-6000-8000-{n:012d}",
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": dict(values),
        "channel_versions": dict(versions),
        "versions_seen": {"node": dict(versions)},
        "updated_channels": None,
    }


# A scenario: puts (name, parent name or None, values, versions, new versions), each value
# consistent with its version (the same (channel, version) always holds the same value).
Put = tuple[str, "str | None", dict, dict, dict]


def _copy_under_later(small: Any, other: Any) -> list[Put]:
    return [
        ("c1", None, {"a": 1, "b": small}, {"a": 1, "b": 1}, {"a": 1, "b": 1}),
        ("c2", "c1", {"a": 1, "b": other}, {"a": 1, "b": 2}, {"b": 2}),
        # a copy of c1 saved as c2's child, no new versions
        ("c3", "c2", {"a": 1, "b": small}, {"a": 1, "b": 1}, {}),
        # c1 forked under itself, no new versions
        ("c4", "c1", {"a": 1, "b": small}, {"a": 1, "b": 1}, {}),
        # c2's versions saved under c1 (another branch's versions)
        ("c5", "c1", {"a": 1, "b": other}, {"a": 1, "b": 2}, {}),
        # c1's versions as a thread's new root (no parent)
        ("c6", None, {"a": 1, "b": small}, {"a": 1, "b": 1}, {}),
    ]


def _mixed() -> list[Put]:
    return [
        ("c1", None, {"a": "one", "b": "x", "big": BIG}, {"a": 1, "b": 1, "big": 1}, None),
        ("c2", "c1", {"a": "two", "b": "y", "big": BIG + "2"}, {"a": 2, "b": 2, "big": 2}, None),
        # old versions (a, big) mixed with new ones (b, c)
        (
            "c3",
            "c2",
            {"a": "one", "b": "z", "big": BIG, "c": [1, 2]},
            {"a": 1, "b": 3, "big": 1, "c": 1},
            {"b": 3, "c": 1},
        ),
        # a channel whose version has no value (deleted), then its old version again
        ("c4", "c3", {"b": "z", "big": BIG, "c": [1, 2]}, {"a": 3, "b": 3, "big": 1, "c": 1}, None),
        (
            "c5",
            "c4",
            {"a": "two", "b": "z", "big": BIG, "c": [1, 2]},
            {"a": 2, "b": 3, "big": 1, "c": 1},
            {},
        ),
    ]


def _many_steps() -> list[Put]:
    """`b` keeps version 1 for 12 steps, changes, and comes back 20 steps later: the
    skip-delta bases of the late checkpoints are not the checkpoints that stored it."""
    puts: list[Put] = []
    parent = None
    for i in range(1, 41):
        b, bv = ("x", 1) if i <= 12 else ("y", 2)
        values = {"n": i, "b": b, "big": BIG if i <= 5 else BIG + "!"}
        versions = {"n": i, "b": bv, "big": 1 if i <= 5 else 2}
        new = {"n": i}
        if i == 1:
            new = dict(versions)
        elif i == 13:
            new["b"] = 2
        elif i == 6:
            new["big"] = 2
        puts.append((f"s{i}", parent, values, versions, new))
        parent = f"s{i}"
    # step 41: the versions of step 3 (b: 1, big: 1) saved under step 40
    puts.append(("s41", "s40", puts[2][2], puts[2][3], {}))
    # and a mix: n of step 40, b of step 3, big of step 40
    puts.append(
        ("s42", "s41", {"n": 40, "b": "x", "big": BIG + "!"}, {"n": 40, "b": 1, "big": 2}, {})
    )
    return puts


SCENARIOS = {
    "small-copy": _copy_under_later("x", "y"),
    "big-copy": _copy_under_later(BIG, BIG + "y"),
    "object-copy": _copy_under_later({"k": [1, 2, 3]}, {"k": []}),
    "mixed": _mixed(),
    "many-steps": _many_steps(),
}


def _run(saver: Sync, puts: list[Put], thread: str) -> dict[str, dict]:
    """Each put's values as read back (after all puts)."""
    configs: dict[str, Any] = {}
    for n, (name, parent, values, versions, new) in enumerate(puts, 1):
        if parent is None:
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        else:
            config = configs[parent]
        if new is None:  # the versions that differ from the parent's
            base = {} if parent is None else dict(puts[[p[0] for p in puts].index(parent)][3])
            new = {k: v for k, v in versions.items() if base.get(k) != v}
        configs[name] = saver.put(config, _cp(n, values, versions), new)
    out = {}
    for name, config in configs.items():
        got = saver.get(config)
        assert got is not None, name
        out[name] = got.checkpoint["channel_values"]
    return out


@pytest.mark.parametrize("scenario", list(SCENARIOS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_reused_version_reads_back_its_value(kind, scenario, tmp_path, request):
    puts = SCENARIOS[scenario]
    expected = {name: values for name, _, values, _, _ in puts}
    with _saver(kind, tmp_path, request) as saver:
        got = _run(saver, puts, f"t-{uuid.uuid4()}")
    assert got == expected


def test_sqlite_finds_a_value_a_queued_put_holds(tmp_path):
    """The copy and the checkpoint it copies in one batch of the shared writer (the
    source is queued, not committed) and in one `put_batch` transaction."""
    puts = SCENARIOS["small-copy"][:3]
    with SqliteSaver.from_conn_string(str(tmp_path / "q.db")) as saver:
        for submit in ("writer", "batch"):
            thread = f"q-{submit}"
            ops, parent_cfg = [], {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
            for n, (_, _, values, versions, new) in enumerate(puts, 1):
                cp = _cp(n, values, versions)
                ops.append(PutOp(parent_cfg, cp, {}, new if new is not None else versions))
                parent_cfg = {
                    "configurable": {**parent_cfg["configurable"], "checkpoint_id": cp["id"]}
                }
            if submit == "writer":
                sink = FailureSink()
                saver.shared_writer().submit_many(ops, sink)
                saver.shared_writer().flush()
                assert sink.error is None
            else:
                saver.put_batch(ops)
            assert saver.get_tuple(parent_cfg).checkpoint["channel_values"] == {"a": 1, "b": "x"}


def test_sqlite_copy_record_is_the_same_natively_and_in_python(tmp_path, monkeypatch):
    """The general path (which the native writer hands such puts to) gives the same rows
    with the native writer on and off."""
    rows = []
    for native in ("1", "0"):
        monkeypatch.setenv("WARPGRAPH_SQLITE_NATIVE_WRITER", native)
        path = tmp_path / f"n{native}.db"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            _run(SharedWriter(saver), SCENARIOS["many-steps"], "t")
        con = sqlite3.connect(path)
        rows.append(
            (
                con.execute("SELECT * FROM wg_checkpoints ORDER BY checkpoint_id").fetchall(),
                con.execute("SELECT * FROM wg_blobs ORDER BY channel, version").fetchall(),
            )
        )
        con.close()
    assert rows[0] == rows[1]
