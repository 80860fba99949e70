"""`SqliteCore.native_items`: the native writer's items for a list of operations, the
usual ones made in one crossing (`_core.SqliteItems`: values serialized, metadata JSON,
the record encoded against the parent's and base's states, the rows). Each item, and each
version state it queues, must be exactly what the general path (`native_item`: `prepare`,
`put_rows`) makes of that op; any op it does not take itself goes to that path, in
order, and a parent state it does not know is read from the database first."""

from __future__ import annotations

import datetime
import enum
import sqlite3
import uuid
from typing import Any

import pytest
from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp, codec
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._store import SqliteCore

# the native writer / items are fast paths (off with WARPGRAPH_FAST_PATHS=0)
pytestmark = pytest.mark.fast_paths

TARGET = object()  # (a failure sink: items only carry it)


def _version(n: int) -> str:
    return f"{n:032}.{0.25 + n / 1000:016}"


def _chain(thread: str) -> list[PutOp]:
    """Puts of one thread whose values, versions and keys change the ways runs change them:
    small values (kept inline), large ones, a channel that appears and one that goes,
    versions_seen entries that change, metadata with a run id, fenced and plain puts."""
    ops = []
    parent = None
    values: dict[str, Any] = {f"n{k}": 0 for k in range(4)}
    values["big"] = "x" * 500
    versions = {ch: _version(1) for ch in values}
    seen: dict[str, dict[str, str]] = {"__input__": {}, "step": {}}
    for i in range(1, 40):
        new = dict(versions) if i == 1 else {}  # (the first put stores every value)
        ch = f"n{i % 4}"
        values[ch] = i
        new[ch] = versions[ch] = _version(i + 1)
        if i % 7 == 0:  # a large value changes
            values["big"] = "y" * (400 + i)
            new["big"] = versions["big"] = _version(i + 1)
        if i == 10:  # a channel appears
            values["extra"] = [1, "two", None]
            new["extra"] = versions["extra"] = _version(i + 1)
        if i == 20:  # and goes
            del values["extra"], versions["extra"]
        seen["step"] = {**seen["step"], ch: versions[ch]}
        cid = f"{i:04d}-{uuid.uuid4()}"
        checkpoint = {
            "v": 4,
            "id": cid,
            "ts": "2026-11-30T00:00:00+00:00",
            "channel_values": dict(values),
            "channel_versions": dict(versions),
            "versions_seen": {k: dict(v) for k, v in seen.items()},
            "updated_channels": sorted(new),
        }
        conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
        if parent:
            conf["checkpoint_id"] = parent
        metadata = {"source": "loop", "step": i, "parents": {}, "run_id": f"run-{i // 10}"}
        expected = parent if i % 2 else NO_EXPECTATION
        ops.append(PutOp({"configurable": conf}, checkpoint, metadata, new, expected))
        parent = cid
    return ops


def _steps(thread: str) -> list[list[Any]]:
    """A run's submissions: per checkpoint after the first, its task's writes (some to
    special channels) and then the checkpoint."""
    puts = _chain(thread)
    steps: list[list[Any]] = [[puts[0]]]
    for i, op in enumerate(puts[1:], 1):
        conf = {**op.config["configurable"], "checkpoint_id": puts[i - 1].checkpoint["id"]}
        writes = [("n1", i), ("s", "text"), ("__error__", "boom")] if i % 5 == 0 else [("n1", i)]
        if i % 7 == 0:  # all special: rows that replace (in a mixed call they are regular)
            writes = [("__interrupt__", "stop"), ("__error__", "boom")]
        steps.append(
            [WritesOp({"configurable": conf}, writes, f"task-{i}", "~__pregel_pull, step"), op]
        )
    return steps


def _one_by_one(core: SqliteCore, conn: sqlite3.Connection, ops: list, seq: int) -> list:
    return [core.native_item(conn, op, seq + i + 1, TARGET, False) for i, op in enumerate(ops)]


def _together(
    core: SqliteCore, conn: sqlite3.Connection, ops: Any, seq: int, want_result: bool = False
) -> list:
    items: list[tuple] = []
    core.native_items(conn, ops, seq, TARGET, want_result, items)
    return items


def _spy(core: SqliteCore) -> list:
    """The ops of each `native_item` (general path) call on `core` from now on."""
    calls: list = []
    original = core.native_item

    def record(conn, op, seq, target, want_result):  # type: ignore[no-untyped-def]
        calls.append(op)
        return original(conn, op, seq, target, want_result)

    core.native_item = record  # type: ignore[method-assign]
    return calls


def _pending(core: SqliteCore) -> list:
    return [(key, seq, state) for key, (seq, state) in core._pending.items()]


def _run_both(tmp_path, steps: list[list[Any]], spy: list | None = None) -> tuple[list, list, list]:
    """The items of `steps` from `native_items` on one saver and from the general path on
    a twin, and the states queued (the same on both); `spy` collects the ops
    `native_items` left to the general path."""
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as a,
        SqliteSaver.from_conn_string(str(tmp_path / "b.db")) as b,
    ):
        calls = _spy(a._core)
        got, want, seq = [], [], 0
        try:
            for ops in steps:
                got.append(_together(a._core, a.conn, ops, seq))
                want.append(_one_by_one(b._core, b.conn, ops, seq))
                seq += len(ops)
        finally:
            if spy is not None:
                spy.extend(calls)
        states = _pending(a._core)
        assert states == _pending(b._core)
        return got, want, states


def test_items_are_what_the_general_path_makes(tmp_path) -> None:
    spy: list = []
    got, want, states = _run_both(tmp_path, _steps("t"), spy)
    # each item: its rows (record bytes included), the prepared step the fallback runs,
    # its fence and dependency; and (above) the version states queued for its children
    assert got == want
    assert spy == []  # (every op of a usual run was taken natively)
    puts = [item for step in got for item in step if item[0] == "put"]
    writes = [item for step in got for item in step if item[0] == "writes"]
    assert len(writes) == len(got) - 1 and len(puts) == len(got)
    assert any(item[3] for item in writes)  # special rows
    assert any(item[2] for item in puts)  # fenced
    assert all(item[6] is not None for item in puts[1:])  # depends on the queued parent
    assert any(item[5] for item in puts)  # blob rows (large values)
    assert any(item[4][4] for item in puts)  # records against a skip-delta base
    state = states[-1][2]  # (the chain's last: a delta with inline values)
    assert state.depth > 0 and state.inline and state.base_id


def test_records_of_a_run_read_back_as_written(tmp_path) -> None:
    """The records it encodes (dict key orders kept from parent to child: see
    `sqlcodec::inline_values`) decode to the checkpoints that were put (through
    `submit`: a future per op, given the op's config)."""
    path = str(tmp_path / "r.db")
    ops = _chain("r")
    with SqliteSaver.from_conn_string(path) as saver:
        writer = saver.shared_writer()
        for op in ops:
            op.expected_head = NO_EXPECTATION
            config = writer.submit(op).result(timeout=10)
            assert config == codec.config_of("r", "", op.checkpoint["id"])
    with SqliteSaver.from_conn_string(path) as reader:
        for op in ops:
            cid = op.checkpoint["id"]
            got = reader.get_tuple({"configurable": {"thread_id": "r", "checkpoint_id": cid}})
            assert got is not None
            assert got.checkpoint == dict(op.checkpoint), cid
            assert got.metadata["run_id"] == op.metadata["run_id"]


class _Other(JsonPlusSerializer):
    """A serializer that is not the default one (even as a subclass)."""


@pytest.mark.parametrize(
    "change",
    [
        "thread_id_not_str",  # `str(thread_id)` there
        "op_subclass",
        "checkpoint_not_dict",
        "metadata_left_to_json",
    ],
)
def test_what_it_does_not_take_goes_the_general_way(tmp_path, change: str) -> None:
    steps = _steps("c")[:4]
    ops = steps[2]  # [writes, put]
    if change == "thread_id_not_str":
        for op in (s for step in steps for s in step):
            op.config = {"configurable": {**op.config["configurable"], "thread_id": 42}}
    elif change == "op_subclass":

        class Put(PutOp):
            __slots__ = ()

        put = ops[1]
        ops[1] = Put(put.config, put.checkpoint, put.metadata, put.new_versions, put.expected_head)
    elif change == "checkpoint_not_dict":

        class Checkpoint(dict):
            pass

        ops[1].checkpoint = Checkpoint(ops[1].checkpoint)
    else:

        class Level(enum.IntEnum):
            HIGH = 2

        ops[1].metadata = {**ops[1].metadata, "level": Level.HIGH}
    spy: list = []
    got, want, _ = _run_both(tmp_path, steps, spy)
    assert got == want
    if change == "thread_id_not_str":
        assert len(spy) == sum(len(step) for step in steps)
    else:
        assert spy == [ops[1]]


@pytest.mark.parametrize(
    "change",
    ["value_not_serializable", "metadata_not_json", "writes_not_serializable", "writes_no_id"],
)
def test_what_cannot_be_stored_is_named_by_the_general_path(tmp_path, change: str) -> None:
    steps = _steps("e")[:4]
    ops = steps[2]
    if change == "value_not_serializable":
        ops[1].checkpoint["channel_values"]["n1"] = object()
        ops[1].new_versions["n1"] = ops[1].checkpoint["channel_versions"]["n1"]
        bad, match = ops[1], "channel 'n1'"
    elif change == "metadata_not_json":
        ops[1].metadata = {**ops[1].metadata, "when": datetime.date(2026, 11, 30)}
        bad, match = ops[1], "'when'"
    elif change == "writes_not_serializable":
        ops[0].writes = [("n1", object())]
        bad, match = ops[0], "'n1'"
    else:
        ops[0].config = {"configurable": {"thread_id": "e"}}
        bad, match = ops[0], "checkpoint_id"
    spy: list = []
    with pytest.raises((TypeError, ValueError), match=match):
        _run_both(tmp_path, steps, spy)
    assert spy == [bad]


def test_another_serializer_takes_the_general_path(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "o.db")) as saver:
        core = SqliteCore(_Other())
        assert core._items is None
        seen = _spy(core)
        ops = _steps("o")[0] + _steps("o")[1]
        items = _together(core, saver.conn, ops, 0)
        assert seen == ops and [item[0] for item in items] == ["put", "writes", "put"]


def test_a_parent_state_not_known_is_read_from_the_file(tmp_path) -> None:
    """A put whose parent state was committed and then dropped from the cache: it is read
    from the database into the cache, and the put is then made natively."""
    steps = _steps("p")[:5]
    with SqliteSaver.from_conn_string(str(tmp_path / "p.db")) as saver:
        writer = saver.shared_writer()
        for op in (o for step in steps[:3] for o in step):
            writer.submit(op).result(timeout=10)
        core = saver._core
        core.forget()
        core._pending.clear()
        seen = _spy(core)
        ops = steps[3] + steps[4]
        items = _together(core, saver.conn, ops, 100)
        assert seen == []
        assert [item[1] for item in items] == [101, 102, 103, 104]
        assert items[1][6] is None and items[3][6] == 102  # (queued: only the second parent)
        # the same as the general path makes with the states read from the file
        core.forget()
        core._pending.clear()
        want = _one_by_one(core, saver.conn, ops, 100)
        assert items == want


def test_a_parent_not_stored_at_all_takes_the_general_path(tmp_path) -> None:
    """A parent id nothing knows of: the general path stores a full record."""
    op = _chain("n")[1]  # (its parent, the chain's first put, is never stored)
    with SqliteSaver.from_conn_string(str(tmp_path / "n.db")) as saver:
        core = saver._core
        seen = _spy(core)
        items = _together(core, saver.conn, [op], 0)
        assert seen == [op]
        assert items[0][7][3] == op.config["configurable"]["checkpoint_id"]
        assert core._pending[("n", "", op.checkpoint["id"])][1].depth == 0


def test_an_open_transaction_takes_the_general_path(tmp_path) -> None:
    steps = _steps("w")[:2]
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        core, conn = saver._core, saver.conn
        calls = _spy(core)
        items = _together(core, conn, steps[0], 0, want_result=True)
        assert calls == [] and items[0][-1] == codec.config_of(
            "w", "", steps[0][0].checkpoint["id"]
        )
        core._txn_states = {}
        try:
            _together(core, conn, steps[1], 1)
        finally:
            core._txn_states = None
        assert calls == steps[1]


def test_plain_puts_keep_no_expectation(tmp_path) -> None:
    ops = list(_chain("x")[:3])
    for op in ops:
        op.expected_head = NO_EXPECTATION
    got, want, _ = _run_both(tmp_path, [[op] for op in ops])
    assert got == want
    assert all(item[2] is False and item[3] is None for step in got for item in step)


def test_any_sequence_of_ops(tmp_path) -> None:
    steps = _steps("s")[:3]
    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        sink = FailureSink()
        writer = saver.shared_writer()
        writer.submit_many(tuple(op for step in steps for op in step), sink)  # (a tuple)
        writer.flush(timeout=10)
        assert sink.error is None
        got = saver.get_tuple({"configurable": {"thread_id": "s"}})
        assert got is not None and got.checkpoint["id"] == steps[-1][-1].checkpoint["id"]


def test_a_native_serde_check_is_exact() -> None:
    assert codec.native_serde(JsonPlusSerializer())
    assert not codec.native_serde(_Other())
