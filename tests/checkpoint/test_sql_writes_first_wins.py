"""`put_writes` of a task that already has writes at a checkpoint: the first write at each
`(task_id, idx)` stays (a re-run task must not change what was recorded), except that a
call whose writes are ALL special (idx < 0: errors, interrupts, resume values) replaces
the rows it names, as LangGraph's SQL savers do (a special write in a mixed call, like a
task's later RESUME next to regular writes, does not replace the first one). Checked on
every path an SQL saver stores writes by: plain calls, `put_batch` transactions, the
per-run and the shared group-commit writers (Python and native), and the async twins.
(LangGraph's InMemorySaver, like warpgraph's, replaces special writes in any call.)"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqliteSaver
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint._sql import PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._native import NativeGroupCommitWriter

FIRST = [("a", 1), ("b", 2), ("__error__", "first error")]
AGAIN = [("a", 10), ("b", 20), ("c", 30), ("__error__", "second error"), ("__resume__", "r2")]
# all special: replaces the rows it names
SPECIAL = [("__error__", "third error"), ("__interrupt__", "i3")]


def _checkpoint(cid: str) -> dict:
    return {
        "v": 4,
        "id": cid,
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"n": 1},
        "channel_versions": {"n": 1},
        "versions_seen": {},
        "updated_channels": ["n"],
    }


def _ops(thread: str) -> tuple[PutOp, list[WritesOp]]:
    cid = str(uuid.uuid4())
    put = PutOp(
        {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}, _checkpoint(cid), {}, {"n": 1}
    )
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}}
    return put, [WritesOp(cfg, w, "task-1") for w in (FIRST, AGAIN, SPECIAL, AGAIN)]


def _expected() -> list[tuple]:
    """What LangGraph's SqliteSaver keeps for the same calls."""
    ref = RefSqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    cfg = ref.put(
        {"configurable": {"thread_id": "r", "checkpoint_ns": ""}},
        _checkpoint(str(uuid.uuid4())),
        {},
        {"n": 1},
    )
    for w in (FIRST, AGAIN, SPECIAL, AGAIN):
        ref.put_writes(cfg, w, "task-1")
    return sorted(ref.get_tuple(cfg).pending_writes)


def _pending(saver, put: PutOp) -> list[tuple]:
    cfg = {"configurable": {**put.config["configurable"], "checkpoint_id": put.checkpoint["id"]}}
    return sorted(saver.get_tuple(cfg).pending_writes)


def test_the_reference_replaces_only_in_an_all_special_call():
    got = {c: v for _, c, v in _expected()}
    assert got == {
        "a": 1,
        "b": 2,
        "c": 30,
        "__error__": "third error",
        "__interrupt__": "i3",
        "__resume__": "r2",
    }


def _plain(saver, put, writes):
    saver.put(put.config, put.checkpoint, put.metadata, put.new_versions)
    for w in writes:
        saver.put_writes(w.config, w.writes, w.task_id)


def _batch_each(saver, put, writes):
    saver.put_batch([put, writes[0]])
    for w in writes[1:]:
        saver.put_batch([w])


def _batch_one(saver, put, writes):
    saver.put_batch([put, *writes])  # the same task twice in one transaction


def _run_writer(writer, items_per_submit):
    sink = FailureSink()
    for items in items_per_submit:
        writer.submit_many(items, sink)
    writer.flush()
    assert sink.error is None


def _own_writer(saver, put, writes):
    with saver.writer() as writer:
        _run_writer(writer, [[put, writes[0]], *([w] for w in writes[1:])])


def _shared_writer(saver, put, writes):
    writer = saver.shared_writer()
    if FAST_PATHS:
        assert isinstance(writer, NativeGroupCommitWriter)
    _run_writer(writer, [[put, writes[0]], *([w] for w in writes[1:])])


def _shared_writer_one_batch(saver, put, writes):
    _run_writer(saver.shared_writer(), [[put, *writes]])


def _python_shared_writer(saver, put, writes):
    writer = saver.shared_writer()
    assert not isinstance(writer, NativeGroupCommitWriter)
    _run_writer(writer, [[put, writes[0]], *([w] for w in writes[1:])])


PATHS = {
    "plain": _plain,
    "batch_each": _batch_each,
    "batch_one": _batch_one,
    "own_writer": _own_writer,
    "shared_writer": _shared_writer,
    "shared_writer_one_batch": _shared_writer_one_batch,
}


@pytest.mark.parametrize("path", list(PATHS))
def test_sqlite_keeps_the_first_regular_write(tmp_path, path):
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        put, writes = _ops("t")
        PATHS[path](saver, put, writes)
        assert _pending(saver, put) == _expected()


def test_sqlite_python_shared_writer_keeps_the_first_regular_write(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_SQLITE_NATIVE_WRITER", "0")
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        put, writes = _ops("t")
        _python_shared_writer(saver, put, writes)
        assert _pending(saver, put) == _expected()


def test_sqlite_memory_database_keeps_the_first_regular_write():
    with SqliteSaver.from_conn_string(":memory:") as saver:  # (its shared writer: Python's)
        paths = {**PATHS, "shared_writer": _python_shared_writer}
        for name, path in paths.items():
            put, writes = _ops(name)
            path(saver, put, writes)
            assert _pending(saver, put) == _expected(), name


def test_async_sqlite_keeps_the_first_regular_write(tmp_path):
    from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async def main():
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
            put, writes = _ops("p")
            await saver.aput(put.config, put.checkpoint, put.metadata, put.new_versions)
            for w in writes:
                await saver.aput_writes(w.config, w.writes, w.task_id)
            put2, writes2 = _ops("b")
            await saver.aput_batch([put2, writes2[0]])
            for w in writes2[1:]:
                await saver.aput_batch([w])
            out = []
            for p in (put, put2):
                cfg = {
                    "configurable": {
                        **p.config["configurable"],
                        "checkpoint_id": p.checkpoint["id"],
                    }
                }
                out.append(sorted((await saver.aget_tuple(cfg)).pending_writes))
            return out

    for got in asyncio.run(main()):
        assert got == _expected()


def test_postgres_keeps_the_first_regular_write(pg_dsn):
    from warpgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        for name in ("plain", "batch_each", "batch_one"):
            put, writes = _ops(f"pg-{name}-{uuid.uuid4()}")
            PATHS[name](saver, put, writes)
            assert _pending(saver, put) == _expected(), name


def test_memory_saver_replaces_special_writes_in_any_call_like_langgraphs():
    """LangGraph's InMemorySaver (unlike its SQL savers) replaces a special write even in a
    mixed call; warpgraph's keeps the same rows."""
    from langgraph.checkpoint.memory import InMemorySaver as RefMemorySaver
    from warpgraph.checkpoint.memory import InMemorySaver

    got = []
    for saver in (RefMemorySaver(), InMemorySaver()):
        put, writes = _ops("m")
        _plain(saver, put, writes)
        got.append(_pending(saver, put))
    assert got[0] == got[1]
    assert {c: v for _, c, v in got[1]}["__resume__"] == "r2"
    assert {c: v for _, c, v in got[1]}["__error__"] == "second error"
