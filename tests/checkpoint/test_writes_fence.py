"""Fenced `put_writes`: a task's writes carry the head their run expects (`expected_head=`,
`WritesOp.expected_head`) and are stored only while that is still the head of their
thread/ns, exactly like fenced puts (CheckpointConflictError otherwise, nothing stored).
One scenario, run on every write path: the sync and async SQLite and Postgres savers
(single calls, all-or-nothing batches - Postgres: one merged statement or a pipeline -
and per-op batches) and SQLite's group-commit writers (Python and native)."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from typing import Any

import pytest
from warpgraph.checkpoint._sql import CheckpointConflictError, PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


def _cp(n: int) -> dict:
    return {
        "v": 4,
        "id": str(uuid6()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"n": n},
        "channel_versions": {"n": n},
        "versions_seen": {},
        "updated_channels": ["n"],
    }


class Calls:
    """The saver's sync or async methods behind one awaitable interface."""

    def __init__(self, saver: Any, is_async: bool) -> None:
        self.saver, self.is_async = saver, is_async

    async def __call__(self, name: str, *args: Any, **kw: Any) -> Any:
        fn = getattr(self.saver, ("a" + name) if self.is_async else name)
        out = fn(*args, **kw)
        return await out if inspect.isawaitable(out) else out


async def scenario(call: Calls, thread: str) -> None:
    def cfg(cid: str | None = None, ns: str = "") -> dict:
        conf = {"thread_id": thread, "checkpoint_ns": ns}
        return {"configurable": {**conf, "checkpoint_id": cid} if cid else conf}

    async def writes_of(cid: str, ns: str = "") -> list:
        return sorted((await call("get_tuple", cfg(cid, ns))).pending_writes)

    cp1, cp2 = _cp(1), _cp(2)
    c1, c2 = cp1["id"], cp2["id"]
    await call("put", cfg(), cp1, {}, {"n": 1}, expected_head=None)
    await call("put_writes", cfg(c1), [("a", "ok")], "t1", expected_head=c1)
    await call("put", cfg(c1), cp2, {}, {"n": 2}, expected_head=c1)

    # a run that lost the thread (still expecting c1): rejected, regular or special writes
    for writes in ([("a", "stale")], [("__error__", "stale")], [("a", 1), ("b", 2)]):
        with pytest.raises(CheckpointConflictError) as info:
            await call("put_writes", cfg(c1), writes, "t2", expected_head=c1)
        err = info.value
        assert (err.thread_id, err.checkpoint_ns, err.expected, err.actual) == (thread, "", c1, c2)
    assert await writes_of(c1) == [("t1", "a", "ok")]
    # time travel (writes for an older checkpoint by the run holding the head) and
    # unfenced writes (LangGraph's contract) are stored
    await call("put_writes", cfg(c1), [("a", "fork")], "t3", expected_head=c2)
    await call("put_writes", cfg(c1), [("a", "plain")], "t4")
    assert await writes_of(c1) == [("t1", "a", "ok"), ("t3", "a", "fork"), ("t4", "a", "plain")]
    # a writes op expecting the wrong head of another namespace is checked against that one
    child = _cp(0)
    await call("put", cfg(ns="sub"), child, {}, {"n": 0}, expected_head=None)
    with pytest.raises(CheckpointConflictError):
        await call("put_writes", cfg(child["id"], "sub"), [("a", 1)], "t", expected_head=c2)
    await call("put_writes", cfg(child["id"], "sub"), [("a", 1)], "t", expected_head=child["id"])

    # all-or-nothing batches: a step's writes ride with its checkpoint (one statement on
    # Postgres), writes after a put expect that put's id
    cp3, cp4, cp5 = _cp(3), _cp(4), _cp(5)
    c3, c4, c5 = cp3["id"], cp4["id"], cp5["id"]
    await call(
        "put_batch",
        [
            WritesOp(cfg(c2), [("a", "w2")], "t5", "", c2),
            WritesOp(cfg(c2), [("b", "w2")], "t6", "", c2),
            PutOp(cfg(c2), cp3, {}, {"n": 3}, expected_head=c2),
            WritesOp(cfg(c3), [("a", "w3")], "t7", "", c3),
        ],
    )
    assert await writes_of(c2) == [("t5", "a", "w2"), ("t6", "b", "w2")]
    assert await writes_of(c3) == [("t7", "a", "w3")]
    stale_batches = [
        [WritesOp(cfg(c3), [("a", "x")], "t8", "", c2)],  # stale writes alone
        [  # a stale writes op before a good put: nothing of the batch is stored
            WritesOp(cfg(c3), [("a", "x")], "t8", "", c2),
            PutOp(cfg(c3), cp4, {}, {"n": 4}, expected_head=c3),
        ],
        [  # writes after the put must expect the put's id
            PutOp(cfg(c3), cp4, {}, {"n": 4}, expected_head=c3),
            WritesOp(cfg(c4), [("a", "x")], "t8", "", c3),
        ],
        [  # two puts on one namespace (a pipeline on Postgres), the last writes stale
            WritesOp(cfg(c3), [("a", "x")], "t8", "", c3),
            PutOp(cfg(c3), cp4, {}, {"n": 4}, expected_head=c3),
            PutOp(cfg(c4), cp5, {}, {"n": 5}, expected_head=c4),
            WritesOp(cfg(c5), [("a", "x")], "t8", "", c4),
        ],
    ]
    for ops in stale_batches:
        with pytest.raises(CheckpointConflictError):
            await call("put_batch", ops)
        assert (await call("get_tuple", cfg())).checkpoint["id"] == c3
        assert await writes_of(c3) == [("t7", "a", "w3")]
    # the same pipeline with every fence holding
    await call(
        "put_batch",
        [
            WritesOp(cfg(c3), [("a", "p3")], "t9", "", c3),
            PutOp(cfg(c3), cp4, {}, {"n": 4}, expected_head=c3),
            WritesOp(cfg(c4), [("a", "p4")], "t9", "", c4),
            PutOp(cfg(c4), cp5, {}, {"n": 5}, expected_head=c4),
            WritesOp(cfg(c5), [("a", "p5")], "t9", "", c5),
        ],
    )
    assert [await writes_of(c) for c in (c4, c5)] == [[("t9", "a", "p4")], [("t9", "a", "p5")]]
    # per-op outcomes: only the stale op fails
    got = await call(
        "put_batch",
        [
            WritesOp(cfg(c5), [("b", "ok")], "u10", "", c5),
            WritesOp(cfg(c5), [("b", "stale")], "u11", "", c4),
            WritesOp(cfg(c5), [("c", "ok")], "u12", "", c5),
        ],
        return_exceptions=True,
    )
    assert got[0] is None and got[2] is None and isinstance(got[1], CheckpointConflictError)
    assert await writes_of(c5) == [("t9", "a", "p5"), ("u10", "b", "ok"), ("u12", "c", "ok")]


def test_sqlite_saver(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        asyncio.run(scenario(Calls(saver, False), "t"))


async def test_async_sqlite_saver(tmp_path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        await scenario(Calls(saver, True), "t")


def test_postgres_saver(pg_dsn: str) -> None:
    from warpgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        asyncio.run(scenario(Calls(saver, False), f"wf-{uuid.uuid4()}"))


async def test_async_postgres_saver(pg_dsn: str) -> None:
    from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        await saver.setup()
        await scenario(Calls(saver, True), f"wf-{uuid.uuid4()}")


def test_merged_postgres_batches_check_each_namespace_once() -> None:
    """One statement: a step's writes ride on its put's check; writes without a put share
    the first one's; what cannot share one check goes to the pipeline (None)."""
    from warpgraph.checkpoint.postgres._put import merged_fences

    def c(ns: str = "", cid: str = "c1") -> dict:
        return {"configurable": {"thread_id": "t", "checkpoint_ns": ns, "checkpoint_id": cid}}

    cp = _cp(1)
    w = WritesOp(c(), [("a", 1)], "x", "", "c1")
    assert merged_fences([w, PutOp(c(), cp, {}, {}, "c1"), WritesOp(c(), [("a", 1)], "y")]) == [
        False,
        True,
        False,
    ]
    assert merged_fences([w, WritesOp(c(), [("a", 1)], "y", "", "c1")]) == [True, False]
    assert merged_fences([w, WritesOp(c("sub"), [("a", 1)], "y", "", "s1")]) == [True, True]
    assert merged_fences([WritesOp(c(), [], "e", "", "c0"), w]) == [False, True]
    assert merged_fences([w, WritesOp(c(), [("a", 1)], "y", "", "c0")]) is None
    assert merged_fences([w, PutOp(c(), cp, {}, {}, "c0")]) is None
    assert merged_fences([PutOp(c(), cp, {}, {}, "c1"), WritesOp(c(), [("a", 1)], "y")]) == [
        True,
        False,
    ]
    after = WritesOp(c(cid=cp["id"]), [("a", 1)], "y", "", cp["id"])
    assert merged_fences([PutOp(c(), cp, {}, {}, "c1"), after]) == [True, False]


@pytest.mark.parametrize(
    "native", [False, pytest.param(True, marks=pytest.mark.fast_paths)]
)  # (the native writer is a fast path)
def test_group_commit_writers(tmp_path, native: bool) -> None:
    path = str(tmp_path / "gc.db")
    with SqliteSaver.from_conn_string(path) as saver:
        writer = saver.shared_writer() if native else saver.writer()
        assert (type(writer).__name__ == "NativeGroupCommitWriter") == native
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        cp1, cp2 = _cp(1), _cp(2)
        c1 = {"configurable": {**cfg["configurable"], "checkpoint_id": cp1["id"]}}
        writer.put(cfg, cp1, {}, {"n": 1}, expected_head=None).result(30)
        writer.put_writes(c1, [("a", "ok")], "t1", expected_head=cp1["id"]).result(30)
        writer.put(c1, cp2, {}, {"n": 2}, expected_head=cp1["id"]).result(30)
        with pytest.raises(CheckpointConflictError) as info:
            writer.put_writes(c1, [("a", "stale")], "t2", expected_head=cp1["id"]).result(30)
        assert (info.value.expected, info.value.actual) == (cp1["id"], cp2["id"])
        # a run's ops in one transaction with a sink: the stale one alone fails (the
        # native writer rolls back and runs the batch through the saver's general path)
        sink = FailureSink()
        with saver.lock:  # everything queued before the writer can commit
            writer.submit_many(
                [
                    WritesOp(c1, [("a", "fork")], "t3", "", cp2["id"]),
                    WritesOp(c1, [("a", "stale")], "t4", "", cp1["id"]),
                    WritesOp(c1, [("a", "plain")], "t5"),
                ],
                sink,
            )
        writer.flush(30)
        assert isinstance(sink.error, CheckpointConflictError)
        assert saver.get_tuple(c1).pending_writes == [
            ("t1", "a", "ok"),
            ("t3", "a", "fork"),
            ("t5", "a", "plain"),
        ]
        if not native:
            writer.close()
