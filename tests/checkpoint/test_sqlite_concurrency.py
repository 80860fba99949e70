"""Several threads and processes on one SQLite file: no "database is locked", and write
fencing keeps one thread's history linear when two processes race on it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from itertools import pairwise

import pytest
from warpgraph.checkpoint._sql import CheckpointConflictError
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from tests._subproc import child_env

PY = sys.executable
ENV = child_env()

WORKER = r"""
import sys
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.sqlite import SqliteSaver
path, thread, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with SqliteSaver.from_conn_string(path) as s:
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    for i in range(n):
        cp = {"v": 4, "id": str(uuid6()), "ts": "", "channel_values": {"x": i, "pad": "p" * 2000},
              "channel_versions": {"x": i + 1, "pad": i + 1}, "versions_seen": {"n": {"x": i}}}
        config = s.put(config, cp, {"step": i}, {"x": i + 1, "pad": i + 1})
        s.put_writes(config, [("x", i), ("y", i)], "task")
        assert s.get_tuple(config).checkpoint["channel_values"]["x"] == i
        list(s.list({"configurable": {"thread_id": thread}}, limit=3))
print("ok")
"""

RACER = r"""
import sys
from warpgraph.checkpoint._sql import CheckpointConflictError
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.sqlite import SqliteSaver
path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
wins = conflicts = 0
with SqliteSaver.from_conn_string(path) as s:
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    base = {"configurable": {"thread_id": "shared", "checkpoint_ns": ""}}
    while wins < n:
        head = s.get_tuple(base)
        head_id = head.checkpoint["id"] if head else None
        config = head.config if head else base
        cp = {"v": 4, "id": str(uuid6()), "ts": "", "channel_values": {"who": name},
              "channel_versions": {"who": str(uuid6())}, "versions_seen": {}}
        try:
            s.put(config, cp, {"who": name}, cp["channel_versions"], expected_head=head_id)
            wins += 1
        except CheckpointConflictError:
            conflicts += 1
print(wins, conflicts)
"""


def _numbered(i: int) -> dict:
    """Checkpoint i of a thread: id f"{i:08d}", channel x = i at version i + 1."""
    return {
        "v": 4,
        "id": f"{i:08d}",
        "ts": "",
        "channel_values": {"x": i},
        "channel_versions": {"x": i + 1},
        "versions_seen": {},
    }


def test_threads_and_a_second_process_never_see_database_is_locked(tmp_path) -> None:
    path = str(tmp_path / "shared.db")
    with SqliteSaver.from_conn_string(path):
        pass
    procs = [
        subprocess.Popen(
            [PY, "-c", WORKER, path, f"proc-{i}", "60"],
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(2)
    ]
    errors: list[BaseException] = []

    def run(thread: str) -> None:
        try:
            with SqliteSaver.from_conn_string(path) as s:
                config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
                for i in range(60):
                    config = s.put(config, _numbered(i), {"step": i}, {"x": i + 1})
                    s.put_writes(config, [("x", i)], "task")
                    list(s.list(None, limit=5))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    shared = SqliteSaver.from_conn_string(path)
    with shared as one_saver:  # one saver used by several threads at once

        def run_shared(thread: str) -> None:
            try:
                config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
                for i in range(60):
                    config = one_saver.put(config, _numbered(i), {}, {"x": i + 1})
                    assert one_saver.get_tuple(config).checkpoint["channel_values"] == {"x": i}
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(f"thr-{i}",)) for i in range(3)]
        threads += [threading.Thread(target=run_shared, args=(f"shr-{i}",)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    outs = [p.communicate() for p in procs]
    assert errors == []
    assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-2000:] for o in outs]
    with SqliteSaver.from_conn_string(path) as s:
        for thread in ["proc-0", "proc-1", "thr-0", "shr-2"]:
            assert len(list(s.list({"configurable": {"thread_id": thread}}))) == 60


def test_fencing_keeps_history_linear_with_two_racing_processes(tmp_path) -> None:
    path = str(tmp_path / "race.db")
    with SqliteSaver.from_conn_string(path):
        pass
    n = 150
    procs = [
        subprocess.Popen(
            [PY, "-c", RACER, path, name, str(n)],
            env=ENV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in ("a", "b")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == b"ready"
    for p in procs:
        p.stdin.write(b"go\n")
        p.stdin.flush()
    outs = [p.communicate() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-2000:] for o in outs]
    conflicts = sum(int(o[0].split()[1]) for o in outs)
    print("fencing conflicts:", conflicts)
    with SqliteSaver.from_conn_string(path) as s:
        history = list(s.list({"configurable": {"thread_id": "shared"}}))
    assert len(history) == 2 * n
    # linear: each checkpoint's parent is the one right before it, no parent has 2 children
    for newer, older in pairwise(history):
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]
    assert history[-1].parent_config is None
    assert {t.metadata["who"] for t in history} == {"a", "b"}


async def test_async_saver_basics_and_sync_calls_from_the_loop(tmp_path) -> None:
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as s:
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        cp = {
            "v": 4,
            "id": "1",
            "ts": "",
            "channel_values": {"a": [1]},
            "channel_versions": {"a": 1},
            "versions_seen": {},
        }
        out = await s.aput(cfg, cp, {"source": "input"}, {"a": 1}, expected_head=None)
        await s.aput_writes(out, [("a", 2)], "task")
        tup = await s.aget_tuple(cfg)
        assert tup.checkpoint["channel_values"] == {"a": [1]}
        assert tup.pending_writes == [("task", "a", 2)]
        # the sync API runs on the saver's worker thread, so it works on the loop thread too
        assert s.get_tuple(cfg) == tup
        assert [t.checkpoint["id"] async for t in s.alist(None, filter={"source": "input"})] == [
            "1"
        ]
        with pytest.raises(CheckpointConflictError):
            await s.aput(cfg, {**cp, "id": "2"}, {}, {}, expected_head=None)
        with s.writer() as writer:
            fut = writer.put(out, {**cp, "id": "3"}, {}, {})
            assert (await asyncio.wrap_future(fut))["configurable"]["checkpoint_id"] == "3"
        assert (await s.aget_tuple(cfg)).checkpoint["id"] == "3"


async def test_async_saver_accepts_an_aiosqlite_connection() -> None:
    aiosqlite = pytest.importorskip("aiosqlite")
    async with aiosqlite.connect(":memory:") as conn:
        s = AsyncSqliteSaver(conn)
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        cp = {
            "v": 4,
            "id": "1",
            "ts": "",
            "channel_values": {"a": 1},
            "channel_versions": {"a": 1},
            "versions_seen": {},
        }
        await s.aput(cfg, cp, {}, {"a": 1})
        assert (await s.aget_tuple(cfg)).checkpoint["channel_values"] == {"a": 1}
        with pytest.raises(asyncio.InvalidStateError, match="different thread"):
            s.get_tuple(cfg)
        got = await asyncio.to_thread(s.get_tuple, cfg)
        assert got.checkpoint["id"] == "1"


async def test_async_saver_opens_an_aiosqlite_connection_not_yet_awaited(tmp_path) -> None:
    """LangGraph's saver takes `aiosqlite.connect(path)` without `await` and opens it on
    first use; so does ours, and a closed connection still says it is closed."""
    aiosqlite = pytest.importorskip("aiosqlite")
    from typing import TypedDict

    from warpgraph.graph import StateGraph

    class S(TypedDict):
        n: int

    conn = aiosqlite.connect(str(tmp_path / "db.sqlite"))  # not awaited
    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.set_entry_point("inc")
    graph = builder.compile(checkpointer=AsyncSqliteSaver(conn))
    cfg = {"configurable": {"thread_id": "t"}}
    assert await graph.ainvoke({"n": 1}, cfg) == {"n": 2}
    assert (await graph.aget_state(cfg)).values == {"n": 2}
    await conn.close()
    with pytest.raises(ValueError, match="Connection closed"):
        await graph.ainvoke({"n": 1}, cfg)


def test_bad_connection_types_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="sqlite3.Connection"):
        SqliteSaver("path.db")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="aiosqlite.Connection"):
        AsyncSqliteSaver(object())


@pytest.mark.parametrize("via", ["put", "put_batch", "writer"])
def test_an_expected_head_in_the_config_fences_every_write_path(tmp_path, via: str) -> None:
    """CONFIG_KEY_EXPECTED_HEAD in a put's config is the same expectation as the
    `expected_head=` argument, whichever path the put takes."""
    from warpgraph.checkpoint._sql import CONFIG_KEY_EXPECTED_HEAD, PutOp

    def cfg(**extra: object) -> dict:
        return {"configurable": {"thread_id": "t", "checkpoint_ns": "", **extra}}

    def put(config: dict, cp: dict) -> dict:
        if via == "put":
            return saver.put(config, cp, {}, {"x": cp["channel_versions"]["x"]})
        op = PutOp(config, cp, {}, {"x": cp["channel_versions"]["x"]})
        if via == "put_batch":
            return saver.put_batch([op])[0]
        writer = saver.writer()
        try:
            return writer.submit(op).result()
        finally:
            writer.close()

    with SqliteSaver.from_conn_string(str(tmp_path / "f.db")) as saver:
        first = put(cfg(**{CONFIG_KEY_EXPECTED_HEAD: None}), _numbered(0))
        head = first["configurable"]["checkpoint_id"]
        with pytest.raises(CheckpointConflictError):  # the thread is not empty any more
            put(cfg(**{CONFIG_KEY_EXPECTED_HEAD: None}), _numbered(1))
        second = put(cfg(**{CONFIG_KEY_EXPECTED_HEAD: head}), _numbered(2))
        assert [t.config for t in saver.list(cfg())] == [second, first]
