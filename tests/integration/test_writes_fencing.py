"""Fenced pending writes between two real processes: a run that lost its thread while a
task was in flight (a stalled process) cannot store that task's writes once another
process moved the thread on, on SQLite (sync and async savers, the native group-commit
writer) and Postgres. The stalled run gets CheckpointConflictError; the checkpoint it
ran from keeps no write of it (the one that finished while its step's other task still
ran would otherwise have been committed at once, and applied by a later resume or replay
from that checkpoint)."""

from __future__ import annotations

import json
import operator
import subprocess
import sys
from itertools import pairwise
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict
from warpgraph.graph import END, START, StateGraph

from tests._subproc import child_env
from tests.integration.test_fencing import run_and_report

PY = sys.executable

# The stalled run: resumes the thread at its head (both tasks pending); "fast" says
# "ready" and waits for a line, "slow" stays in flight until after fast's writes were
# handed to the saver. Prints "won" or "conflict <json>".
STALLED = r"""
import asyncio, json, operator, sys, threading, time
from typing import Annotated
from typing_extensions import TypedDict
from warpgraph.graph import END, START, StateGraph
from warpgraph.errors import CheckpointConflictError

kind, target, durability, driver = sys.argv[1:5]
fast_done = threading.Event()

class S(TypedDict):
    log: Annotated[list, operator.add]

def fast(state):
    print("ready", flush=True)
    sys.stdin.readline()
    fast_done.set()
    return {"log": ["A-fast"]}

def slow(state):
    fast_done.wait(60)
    time.sleep(1.0)
    return {"log": ["A-slow"]}

if kind == "sqlite":
    from warpgraph.checkpoint.sqlite import SqliteSaver as Saver
else:
    from warpgraph.checkpoint.postgres import PostgresSaver as Saver
with Saver.from_conn_string(target) as saver:
    g = StateGraph(S)
    g.add_node("fast", fast)
    g.add_node("slow", slow)
    g.add_edge(START, "fast")
    g.add_edge(START, "slow")
    g.add_edge("fast", END)
    g.add_edge("slow", END)
    graph = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "w"}}
""" + run_and_report("[e.thread_id, e.expected, e.actual]")


class S(TypedDict):
    log: Annotated[list, operator.add]


def _graph(saver: Any, **compile_kw: Any) -> Any:
    g = StateGraph(S)
    g.add_node("fast", lambda s: {"log": ["B-fast"]})
    g.add_node("slow", lambda s: {"log": ["B-slow"]})
    g.add_edge(START, "fast")
    g.add_edge(START, "slow")
    g.add_edge("fast", END)
    g.add_edge("slow", END)
    return g.compile(checkpointer=saver, **compile_kw)


def _stalled_run_loses_its_writes(kind: str, target: str, saver: Any, durability: str, driver: str):
    config = {"configurable": {"thread_id": "w"}}
    _graph(saver, interrupt_before=["fast", "slow"]).invoke({"log": ["start"]}, config)
    head = saver.get_tuple(config).checkpoint["id"]
    proc = subprocess.Popen(
        [PY, "-c", STALLED, kind, target, durability, driver],
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        line = proc.stdout.readline().strip()
        assert line == b"ready", proc.stderr.read().decode()[-3000:]
        # meanwhile, this process takes the thread over (new input) and finishes
        out = _graph(saver).invoke({"log": ["B"]}, config)
        proc.stdin.write(b"go\n")
        proc.stdin.flush()
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr.decode()[-3000:]
    assert stdout.decode().startswith("conflict "), (stdout, stderr.decode()[-3000:])
    thread, expected, actual = json.loads(stdout.decode().split(" ", 1)[1])
    final = saver.get_tuple(config)
    assert (thread, expected) == ("w", head) and actual != head
    assert final.checkpoint["channel_values"]["log"] == out["log"]
    assert not any(v.startswith("A") for v in out["log"])
    # nothing of the stalled run: its fast task's writes were rejected, not stored
    at_head = saver.get_tuple({"configurable": {"thread_id": "w", "checkpoint_id": head}})
    assert [w for w in at_head.pending_writes if str(w[2]).find("A-") >= 0] == []
    history = list(saver.list(config))
    for newer, older in pairwise(history):
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]
    for t in history:
        assert not any("A-" in str(w[2]) for w in t.pending_writes)


@pytest.mark.parametrize(
    "durability,driver",
    [("sync", "sync"), ("async", "sync"), ("sync", "async"), ("async", "async")],
)
def test_stalled_process_on_sqlite(tmp_path, durability: str, driver: str) -> None:
    from warpgraph.checkpoint.sqlite import SqliteSaver

    path = str(tmp_path / "w.db")
    with SqliteSaver.from_conn_string(path) as saver:
        _stalled_run_loses_its_writes("sqlite", path, saver, durability, driver)


@pytest.mark.parametrize("durability,driver", [("sync", "sync"), ("async", "async")])
def test_stalled_process_on_postgres(pg_fresh_dsn: str, durability: str, driver: str) -> None:
    from warpgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_fresh_dsn) as saver:
        saver.setup()
        _stalled_run_loses_its_writes("postgres", pg_fresh_dsn, saver, durability, driver)
