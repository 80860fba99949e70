"""`SqliteCore.native_items`: the native writer's items for a list of operations, the
usual ones made in one crossing (`_core.SqliteItems`). Each item, and each version
state it queues, must be exactly what `native_item` makes of that op; any op it does not
take itself goes to `native_item`, in order."""

from __future__ import annotations

import enum
import sqlite3
from typing import Any

import pytest
from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._store import SqliteCore

from tests.checkpoint.test_sqlite_native_put import _chain

TARGET = object()  # (a failure sink: items only carry it)


def _steps(thread: str) -> list[list[Any]]:
    """A run's submissions: per checkpoint after the first, its task's writes (one of
    them to a special channel) and then the checkpoint."""
    puts = _chain(thread)
    steps: list[list[Any]] = [[puts[0]]]
    for i, op in enumerate(puts[1:], 1):
        conf = {**op.config["configurable"], "checkpoint_id": puts[i - 1].checkpoint["id"]}
        writes = [("n1", i), ("s", "text"), ("__error__", "boom")] if i % 5 == 0 else [("n1", i)]
        steps.append(
            [WritesOp({"configurable": conf}, writes, f"task-{i}", "~__pregel_pull, step"), op]
        )
    return steps


def _one_by_one(core: SqliteCore, conn: sqlite3.Connection, ops: list, seq: int) -> list:
    return [core.native_item(conn, op, seq + i + 1, TARGET, False) for i, op in enumerate(ops)]


def _together(core: SqliteCore, conn: sqlite3.Connection, ops: list, seq: int) -> list:
    items: list[tuple] = []
    core.native_items(conn, ops, seq, TARGET, False, items)
    return items


def _spy(core: SqliteCore) -> list:
    """The (op, native) of each `native_item` call on `core` from now on."""
    calls: list = []
    original = core.native_item

    def record(conn, op, seq, target, want_result, native=True):  # type: ignore[no-untyped-def]
        calls.append((op, native))
        return original(conn, op, seq, target, want_result, native)

    core.native_item = record  # type: ignore[method-assign]
    return calls


def _pending(core: SqliteCore) -> list:
    return [(key, seq, state) for key, (seq, state) in core._pending.items()]


def _run_both(tmp_path, steps: list[list[Any]], spy: list | None = None) -> tuple[list, list]:
    """The items of `steps` from `native_items` on one saver and `native_item` on a twin,
    and the states each queued; `spy` collects the ops `native_items` left to Python."""
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as a,
        SqliteSaver.from_conn_string(str(tmp_path / "b.db")) as b,
    ):
        for saver in (a, b):
            saver.setup()
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
        assert _pending(a._core) == _pending(b._core)
        return got, want


def test_items_are_what_native_item_makes(tmp_path) -> None:
    spy: list = []
    got, want = _run_both(tmp_path, _steps("t"), spy)
    assert got == want
    assert spy == []  # (every op of a usual run was taken natively)
    kinds = [item[0] for step in got for item in step]
    assert kinds.count("writes") == len(got) - 1 and kinds.count("put") == len(got)
    assert any(item[3] for step in got for item in step if item[0] == "writes")  # special
    assert any(item[2] for step in got for item in step if item[0] == "put")  # fenced
    assert all(item[6] is not None for step in got[1:] for item in step if item[0] == "put")


@pytest.mark.parametrize(
    "change",
    [
        "thread_id_not_str",  # `str(thread_id)` there
        "op_subclass",
        "metadata_left_to_json",  # then no second native attempt
        "value_not_serializable",  # (named there)
        "writes_without_checkpoint_id",  # the error is named there
        "writes_not_serializable",
    ],
)
def test_what_it_does_not_take_goes_to_native_item(tmp_path, change: str) -> None:
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
    elif change == "value_not_serializable":
        ops[1].checkpoint["channel_values"]["n1"] = object()
        ops[1].new_versions["n1"] = ops[1].checkpoint["channel_versions"]["n1"]
    elif change == "metadata_left_to_json":

        class Level(enum.IntEnum):
            HIGH = 2

        ops[1].metadata = {**ops[1].metadata, "level": Level.HIGH}
    elif change == "writes_without_checkpoint_id":
        ops[0].config = {"configurable": {"thread_id": "c"}}
    else:
        ops[0].writes = [("n1", object())]
    spy: list = []
    if change.startswith("writes_") or change == "value_not_serializable":
        with pytest.raises((ValueError, TypeError), match="checkpoint_id|'n1'"):
            _run_both(tmp_path, steps, spy)
        bad = ops[1] if change == "value_not_serializable" else ops[0]
        assert spy == [(bad, change != "value_not_serializable")]
        return
    got, want = _run_both(tmp_path, steps, spy)
    assert got == want
    if change == "thread_id_not_str":
        assert len(spy) == sum(len(step) for step in steps)
    else:
        assert [op for op, _ in spy] == [ops[1]]
        assert spy[0][1] is (change != "metadata_left_to_json")


def test_a_parent_neither_cached_nor_queued_is_read_there(tmp_path) -> None:
    """A put whose parent state was committed and then dropped from the cache: Python
    reads it from the database; the ops after it are taken natively again."""
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
        assert seen == [(ops[1], True)]  # the put: its parent read from the file
        assert [item[1] for item in items] == [101, 102, 103, 104]
        assert items[3][6] == 102  # (depends on the put queued just before it)


def test_want_result_and_a_transaction_take_the_python_path(tmp_path) -> None:
    steps = _steps("w")[:2]
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        core, conn = saver._core, saver.conn
        calls = _spy(core)
        items: list[tuple] = []
        core.native_items(conn, steps[0], 0, TARGET, True, items)
        assert [op for op, _ in calls] == steps[0] and items[0][-1] is not None  # (its config)
        core._txn_states = {}
        core.native_items(conn, steps[1], 1, TARGET, False, items)
        assert [op for op, _ in calls] == steps[0] + steps[1]
        core._txn_states = None


def test_plain_puts_keep_no_expectation(tmp_path) -> None:
    ops = [op for op in _chain("e")[:3]]
    for op in ops:
        op.expected_head = NO_EXPECTATION
    got, want = _run_both(tmp_path, [[op] for op in ops])
    assert got == want
    assert all(item[2] is False and item[3] is None for step in got for item in step)


def test_any_sequence_of_ops(tmp_path) -> None:
    steps = _steps("s")[:3]
    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        writer = saver.shared_writer()
        sink_ops = tuple(op for step in steps for op in step)
        sink = FailureSink()
        writer.submit_many(sink_ops, sink)  # a tuple, as `submit_many` always took
        writer.flush(timeout=10)
        assert sink.error is None
        last = steps[-1][-1].checkpoint["id"]
        got = saver.get_tuple({"configurable": {"thread_id": "s"}})
        assert got is not None and got.checkpoint["id"] == last
