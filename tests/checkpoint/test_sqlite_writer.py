"""The saver-owned group-commit writer: runs with durability "async" on one SQLite saver share
one long-lived writer; each run waits for (and sees the errors of) its own commits only; the
writer stops on `close_writer()`, on the context exit and when the saver is collected.

Results are compared with LangGraph's engine running the same graph on its InMemorySaver."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import importlib
import sqlite3
import threading
import time
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefMemory
from typing_extensions import TypedDict
from warpgraph.checkpoint._sql import CheckpointConflictError
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from tests._subproc import run_python

STEPS = 6


class S(TypedDict):
    n: int
    tag: str


def _graph(lib: str, gate: Any = None) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(S)

    def step(s: S) -> dict:
        if gate is not None and s["n"] == 2:
            gate(s["tag"])  # both runs are mid-flight here
        return {"n": s["n"] + 1}

    g.add_node("step", step)
    g.add_edge(graph_mod.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < STEPS else graph_mod.END)
    return g


def _history(graph: Any, config: dict) -> list:
    return [(s.values, s.next, s.metadata["step"]) for s in graph.get_state_history(config)]


def _reference(thread: str, tag: str) -> tuple[dict, list]:
    graph = _graph("langgraph").compile(checkpointer=RefMemory())
    config = {"configurable": {"thread_id": thread}}
    out = graph.invoke({"n": 0, "tag": tag}, config, durability="async")
    return out, _history(graph, config)


def _counting(saver: Any) -> list:
    """Records every shared writer the saver creates (`_new_shared_writer`)."""
    made: list = []
    make = saver._new_shared_writer
    saver._new_shared_writer = lambda: made.append(make()) or made[-1]
    return made


def _run_both(graph: Any, runs: dict[str, str]) -> dict[str, Any]:
    """Invoke one run per thread id concurrently; returns each run's output or exception."""
    results: dict[str, Any] = {}

    def go(thread: str, tag: str) -> None:
        try:
            config = {"configurable": {"thread_id": thread}}
            results[thread] = graph.invoke({"n": 0, "tag": tag}, config, durability="async")
        except Exception as exc:  # noqa: BLE001 - compared below
            results[thread] = exc

    workers = [threading.Thread(target=go, args=item) for item in runs.items()]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return results


@pytest.mark.fast_paths
def test_runs_on_one_saver_share_one_writer(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "w.db")) as saver:
        made = _counting(saver)
        barrier = threading.Barrier(2)
        graph = _graph("warpgraph", gate=lambda tag: barrier.wait(timeout=30)).compile(
            checkpointer=saver
        )
        results = _run_both(graph, {"a": "A", "b": "B"})
        # a third, sequential run reuses the same writer (still running between runs)
        plain = _graph("warpgraph").compile(checkpointer=saver)
        out_c = plain.invoke(
            {"n": 0, "tag": "C"}, {"configurable": {"thread_id": "c"}}, durability="async"
        )
        assert len(made) == 1 and made[0] is saver.shared_writer()
        assert made[0].alive and made[0].batches >= 1
        for thread, tag, out in (("a", "A", results["a"]), ("b", "B", results["b"])):
            ref_out, ref_hist = _reference(thread, tag)
            assert out == ref_out
            assert _history(plain, {"configurable": {"thread_id": thread}}) == ref_hist
        assert (out_c, _history(plain, {"configurable": {"thread_id": "c"}})) == _reference(
            "c", "C"
        )
    assert not made[0].alive  # the context exit stopped it


@pytest.mark.fast_paths
def test_a_failed_commit_reaches_its_own_run_only(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "e.db")) as saver:
        made = _counting(saver)
        # every write of thread "bad" fails inside the writer's transaction (not when it
        # is serialized on the run's thread); a trigger in the database, which the native
        # writer's own connection sees too
        saver.conn.execute(
            "CREATE TRIGGER fail_bad BEFORE INSERT ON wg_writes "
            "WHEN NEW.thread_id = 'bad' BEGIN SELECT RAISE(ABORT, 'boom for bad'); END"
        )
        # the good run waits mid-flight until the bad one has failed (which may be at its
        # first write: the native writer commits while the runs go on), then goes on
        bad_ended = threading.Event()

        def gate(tag: str) -> None:
            if tag == "G":
                bad_ended.wait(timeout=30)

        graph = _graph("warpgraph", gate=gate).compile(checkpointer=saver)
        results: dict[str, Any] = {}
        good = threading.Thread(target=lambda: results.update(_run_both(graph, {"good": "G"})))
        good.start()
        try:
            results.update(_run_both(graph, {"bad": "X"}))
        finally:
            bad_ended.set()
            good.join()
        assert isinstance(results["bad"], sqlite3.IntegrityError)
        assert "boom for bad" in str(results["bad"])
        ref_out, ref_hist = _reference("good", "G")
        assert results["good"] == ref_out
        plain = _graph("warpgraph").compile(checkpointer=saver)
        assert _history(plain, {"configurable": {"thread_id": "good"}}) == ref_hist
        # the writer survived the failure and serves the next run
        saver.conn.execute("DROP TRIGGER fail_bad")
        out = plain.invoke(
            {"n": 0, "tag": "Z"}, {"configurable": {"thread_id": "z"}}, durability="async"
        )
        assert out == _reference("z", "Z")[0]
        assert len(made) == 1 and made[0].alive


def test_close_writer_stops_it_and_a_later_run_starts_a_new_one(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "c.db")) as saver:
        graph = _graph("warpgraph").compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "c1"}}
        graph.invoke({"n": 0, "tag": "T"}, config, durability="async")
        first = saver.shared_writer()
        saver.close_writer()
        assert first.closed and not first.alive
        config2 = {"configurable": {"thread_id": "c2"}}
        out = graph.invoke({"n": 0, "tag": "T"}, config2, durability="async")
        second = saver.shared_writer()
        assert second is not first and second.alive
        assert out == _reference("c2", "T")[0]
        assert _history(graph, config2) == _reference("c2", "T")[1]
    assert not second.alive


def test_a_collected_saver_stops_its_writer(tmp_path) -> None:
    conn = sqlite3.connect(str(tmp_path / "g.db"), check_same_thread=False, isolation_level=None)
    saver = SqliteSaver(conn)
    graph = _graph("warpgraph").compile(checkpointer=saver)
    graph.invoke({"n": 0, "tag": "T"}, {"configurable": {"thread_id": "g"}}, durability="async")
    writer = saver.shared_writer()
    assert writer.alive
    del saver, graph
    gc.collect()
    deadline = time.monotonic() + 60  # a wait, not a speed check: it must end at all
    while writer.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not writer.alive
    with SqliteSaver.from_conn_string(str(tmp_path / "g.db")) as reader:
        n = len(list(reader.list({"configurable": {"thread_id": "g"}})))
    assert n == len(_reference("g", "T")[1])
    conn.close()


def test_with_allowlist_clone_gets_its_own_writer(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        clone = saver.with_allowlist([("tests", "Thing")])
        assert clone is not saver
        assert clone.shared_writer() is not saver.shared_writer()
        assert clone.shared_writer() is clone.shared_writer()
        clone.close_writer()


@pytest.mark.fast_paths
@pytest.mark.parametrize("conn_kind", ["sqlite3", "aiosqlite"])
async def test_async_saver_runs_share_one_writer(tmp_path, conn_kind: str) -> None:
    path = str(tmp_path / "as.db")
    if conn_kind == "sqlite3":
        cm = AsyncSqliteSaver.from_conn_string(path)
        saver = await cm.__aenter__()
        aconn = None
    else:
        aiosqlite = pytest.importorskip("aiosqlite")
        aconn = await aiosqlite.connect(path)
        saver = AsyncSqliteSaver(aconn)
        await saver.setup()
    try:
        made = _counting(saver)
        graph = _graph("warpgraph").compile(checkpointer=saver)
        outs = await asyncio.gather(
            *(
                graph.ainvoke(
                    {"n": 0, "tag": t}, {"configurable": {"thread_id": t}}, durability="async"
                )
                for t in ("p", "q")
            )
        )
        assert len(made) == 1 and made[0].alive
        for t, out in zip(("p", "q"), outs):
            ref_out, ref_hist = _reference(t, t)
            assert out == ref_out
            hist = [
                (s.values, s.next, s.metadata["step"])
                async for s in graph.aget_state_history({"configurable": {"thread_id": t}})
            ]
            assert hist == ref_hist
    finally:
        if aconn is None:
            await cm.__aexit__(None, None, None)
        else:
            await asyncio.to_thread(saver.close_writer)
            await aconn.close()
    assert not made[0].alive


EXITING = r"""
import sqlite3, sys
from typing_extensions import TypedDict
from warpgraph.checkpoint._sql import CheckpointConflictError
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.graph import END, START, StateGraph

class S(TypedDict):
    n: int

g = StateGraph(S)
g.add_node("step", lambda s: {"n": s["n"] + 1})
g.add_edge(START, "step")
g.add_conditional_edges("step", lambda s: "step" if s["n"] < 5 else END)
saver = SqliteSaver(sqlite3.connect(sys.argv[1], check_same_thread=False, isolation_level=None))
app = g.compile(checkpointer=saver)
for t in ("x", "y"):
    app.invoke({"n": 0}, {"configurable": {"thread_id": t}}, durability="async")
assert saver.shared_writer().alive
print("done", flush=True)
# no close: interpreter exit must stop the (daemon) writer without hanging
"""


def test_interpreter_exit_with_a_running_writer(tmp_path) -> None:
    path = str(tmp_path / "x.db")
    proc = run_python(EXITING, path)
    assert proc.returncode == 0 and proc.stdout.strip() == "done", proc.stderr[-2000:]
    graph_mod = importlib.import_module("langgraph.graph")
    g = graph_mod.StateGraph(TypedDict("S", {"n": int}))
    g.add_node("step", lambda s: {"n": s["n"] + 1})
    g.add_edge(graph_mod.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n"] < 5 else graph_mod.END)
    ref = g.compile(checkpointer=RefMemory())
    with SqliteSaver.from_conn_string(path) as reader:
        for t in ("x", "y"):
            config = {"configurable": {"thread_id": t}}
            ref.invoke({"n": 0}, config, durability="async")
            ours = [
                (c.checkpoint["channel_values"], c.metadata["step"]) for c in reader.list(config)
            ]
            theirs = [
                (c.checkpoint["channel_values"], c.metadata["step"])
                for c in ref.checkpointer.list(config)
            ]
            assert ours == theirs


def _ops(kind: str) -> list[tuple]:
    """("put", thread, cp, parent id, expected head) / ("writes", thread, cid, writes, task)."""
    from warpgraph.checkpoint.base import uuid6

    ids = [str(uuid6()) for _ in range(6)]
    big = "x" * 500  # not inlined: has a blob row

    def cp(i: int, n: int) -> dict:
        return {
            "v": 4,
            "id": ids[i],
            "ts": "",
            "channel_values": {"n": n, "big": big},
            "channel_versions": {"n": n + 1, "big": 1},
            "versions_seen": {"node": {"n": n}},
        }

    ops = [
        ("put", "a", cp(0, 0), None, None),
        ("writes", "a", ids[0], [("n", 1), ("__error__", "e")], "t0"),
        ("put", "a", cp(1, 1), ids[0], ids[0]),
        ("writes", "a", ids[1], [("n", 2)], "t1"),
        ("put", "b", cp(2, 0), None, None),
        ("put", "a", cp(3, 2), ids[1], ids[1]),
    ]
    if kind == "conflict":  # stale head for "b", then a put that expects the real one
        ops += [("put", "b", cp(4, 1), ids[2], "stale"), ("put", "b", cp(5, 1), ids[2], ids[2])]
    elif kind == "duplicate":  # an id stored again (same batch), fenced on the head
        ops += [("put", "a", cp(1, 7), ids[0], ids[3])]
    return ops


def _apply_one_by_one(saver: SqliteSaver, ops: list[tuple]) -> list:
    out = []
    for op in ops:
        try:
            if op[0] == "put":
                _, thread, cp, parent, expected = op
                conf = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": parent}
                new = {k: 1 for k in cp["channel_versions"]} if parent is None else {"n": 1}
                out.append(
                    saver.put(
                        {"configurable": conf}, cp, {"i": len(out)}, new, expected_head=expected
                    )
                )
            else:
                _, thread, cid, writes, task = op
                conf = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}
                out.append(saver.put_writes({"configurable": conf}, writes, task))
        except Exception as exc:  # noqa: BLE001 - compared below
            out.append(type(exc))
    return out


def _as_items(ops: list[tuple]) -> list:
    from warpgraph.checkpoint._sql import PutOp, WritesOp

    items: list = []
    for i, op in enumerate(ops):
        if op[0] == "put":
            _, thread, cp, parent, expected = op
            conf = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": parent}
            new = {k: 1 for k in cp["channel_versions"]} if parent is None else {"n": 1}
            items.append(PutOp({"configurable": conf}, cp, {"i": i}, new, expected))
        else:
            _, thread, cid, writes, task = op
            conf = {"thread_id": thread, "checkpoint_ns": "", "checkpoint_id": cid}
            items.append(WritesOp({"configurable": conf}, writes, task, ""))
    return items


def _submit_in_one_batch(saver: SqliteSaver, ops: list[tuple], via: str) -> tuple[list, int]:
    """Results per op (futures) or [first failure's type or None] (`submit_many`'s sink)."""
    from warpgraph.checkpoint._sql.writer import FailureSink

    writer = saver.writer()
    sink = FailureSink()
    with saver.lock:  # the writer cannot commit until everything is queued
        if via == "futures":
            futures = [writer.submit(item) for item in _as_items(ops)]
        else:
            writer.submit_many(_as_items(ops), sink)
    writer.flush()
    writer.close()
    if via == "sink":
        return [None if sink.error is None else type(sink.error)], writer.batches
    out = [f.result() if f.exception() is None else type(f.exception()) for f in futures]
    return out, writer.batches


def _stored(saver: SqliteSaver) -> list:
    return [
        (t.config, t.parent_config, t.checkpoint, t.metadata, t.pending_writes)
        for thread in ("a", "b")
        for t in saver.list({"configurable": {"thread_id": thread}})
    ]


@pytest.mark.parametrize("via", ["futures", "sink"])
@pytest.mark.parametrize("kind", ["clean", "conflict", "duplicate"])
def test_a_batch_commits_like_one_by_one(tmp_path, kind: str, via: str) -> None:
    ops = _ops(kind)
    with (
        SqliteSaver.from_conn_string(str(tmp_path / "one.db")) as one,
        SqliteSaver.from_conn_string(str(tmp_path / "batch.db")) as batched,
    ):
        expected = _apply_one_by_one(one, ops)
        got, batches = _submit_in_one_batch(batched, ops, via)
        assert batches == 1
        if via == "sink":  # the sink keeps the first failure only
            failures = [r for r in expected if isinstance(r, type)]
            expected = [failures[0] if failures else None]
        assert got == expected
        if kind == "conflict":
            assert CheckpointConflictError in got
        assert _stored(batched) == _stored(one)


def test_submit_many_queues_nothing_when_a_value_cannot_be_serialized(tmp_path) -> None:
    from warpgraph.checkpoint._sql.writer import FailureSink

    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        items = _as_items(_ops("clean"))
        bad = dataclasses.replace(items[3], writes=[("n", object())])  # 2nd task's writes
        writer = saver.writer()
        sink = FailureSink()
        with pytest.raises(TypeError, match="n"):
            writer.submit_many([*items[:3], bad, *items[4:]], sink)
        writer.flush()
        assert sink.error is None and writer.batches == 0
        assert _stored(saver) == []  # nothing of the call was queued
        writer.submit_many(items, sink)  # the writer still serves
        writer.close()
        assert sink.error is None and writer.batches == 1
        assert len(_stored(saver)) == 4
