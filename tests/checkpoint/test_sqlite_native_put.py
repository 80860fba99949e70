"""`SqliteCore.native_put`: a put prepared, encoded and turned into rows in one native
crossing (`_core.sqlite_put`) for the native writer. It must give exactly what the
general path gives (`prepare`, then `put_rows`), and leave to that path whatever it does
not handle itself."""

from __future__ import annotations

import datetime
import sqlite3
import uuid
from typing import Any

import pytest
from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, codec
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.sqlite import SqliteSaver


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


def _general(core: Any, conn: sqlite3.Connection, op: PutOp) -> tuple:
    step = core.prepare(op)
    return (step, *core.put_rows(conn, step))


def test_it_gives_what_the_general_path_gives(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "p.db")) as saver:
        core, conn = saver._core, saver.conn
        for op in _chain("t"):
            got = core.native_put(conn, op)
            assert got is not None
            want = _general(core, conn, op)
            assert got[0] == want[0]  # the prepared step (what the fallback runs)
            assert got[1] == want[1]  # the checkpoint row, record bytes included
            assert got[2] == want[2]  # the blob rows (inline values left out)
            assert got[3] == want[3]  # the version state remembered for its children
            core._remember(tuple(got[0][:3]), got[3])
        # (the chain did use deltas, inline values and blob rows)
        assert got[3].depth > 0 and got[3].inline and got[3].base_id
        assert any(_general(core, conn, op)[2] for op in _chain("u"))


def test_records_of_a_run_read_back_as_written(tmp_path) -> None:
    """The records it encodes (dict key orders kept from parent to child: see
    `sqlcodec::inline_values`) decode to the checkpoints that were put."""
    path = str(tmp_path / "r.db")
    ops = _chain("r")
    with SqliteSaver.from_conn_string(path) as saver:
        writer = saver.shared_writer()
        for op in ops:
            op.expected_head = NO_EXPECTATION
            writer.submit(op).result(timeout=10)
    with SqliteSaver.from_conn_string(path) as reader:
        for op in ops:
            cid = op.checkpoint["id"]
            got = reader.get_tuple({"configurable": {"thread_id": "r", "checkpoint_id": cid}})
            assert got is not None
            want = dict(op.checkpoint)
            assert got.checkpoint == want, cid
            assert got.metadata["run_id"] == op.metadata["run_id"]


class _Other(JsonPlusSerializer):
    """A serializer that is not the default one (even as a subclass)."""


@pytest.mark.parametrize(
    "change",
    [
        "metadata_not_json",  # a metadata value left to the json module
        "value_not_serializable",  # the general path names the channel
        "checkpoint_not_dict",
        "other_serializer",
    ],
)
def test_what_it_does_not_handle_goes_the_general_way(tmp_path, change: str) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "g.db")) as saver:
        core, conn = saver._core, saver.conn
        op = _chain("g")[0]
        if change == "metadata_not_json":
            op.metadata = {**op.metadata, "when": datetime.date(2026, 11, 30)}
        elif change == "value_not_serializable":
            op.checkpoint["channel_values"]["n1"] = object()
            op.new_versions["n1"] = op.checkpoint["channel_versions"]["n1"]
        elif change == "checkpoint_not_dict":

            class Checkpoint(dict):
                pass

            op.checkpoint = Checkpoint(op.checkpoint)
        else:
            core = type(core)(_Other())
        assert core.native_put(conn, op) is None
        if change == "value_not_serializable":
            with pytest.raises(TypeError, match="channel 'n1'"):
                core.prepare(op)
        elif change == "metadata_not_json":
            with pytest.raises(TypeError, match="when"):
                core.prepare(op)
        else:
            assert core.prepare(op)[2] == op.checkpoint["id"]


def test_a_native_serde_check_is_exact() -> None:
    assert codec.native_serde(JsonPlusSerializer())
    assert not codec.native_serde(_Other())
