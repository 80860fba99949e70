"""Write fencing of graph runs: two runs appending to one thread can never both succeed
(other processes on one SQLite file / one Postgres database, or threads in this process);
the loser gets CheckpointConflictError and history stays linear. Time travel, forks and
state updates from old checkpoints are not conflicts, and savers without fencing
(InMemorySaver, LangGraph's) behave exactly as under LangGraph's engine."""

from __future__ import annotations

import asyncio
import importlib
import json
import operator
import sqlite3
import subprocess
import sys
import threading
from itertools import pairwise
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from warpgraph.errors import CheckpointConflictError

from tests._subproc import child_env
from tests.integration.test_persistence_wiring import _tree as history_tree

PY = sys.executable
ENV = child_env()


def run_and_report(fields: str) -> str:
    """The end of a racing child program (inside its saver's `with`, `graph`, `config`,
    `durability` and `driver` set): run the graph; print "won", or "conflict" and the
    JSON of `fields` (an expression of the CheckpointConflictError `e`)."""
    return f"""    try:
        if driver == "async":
            asyncio.run(graph.ainvoke(None, config, durability=durability))
        else:
            graph.invoke(None, config, durability=durability)
        print("won", flush=True)
    except CheckpointConflictError as e:
        print("conflict", json.dumps({fields}), flush=True)
"""


# One racer: resumes the shared thread (interrupted before "work"); its "work" node says
# "ready" and waits for "go", so both racers have loaded the same head before either
# writes. Prints "won" or "conflict <json>".
RACER = r"""
import asyncio, json, operator, sys
from typing import Annotated
from typing_extensions import TypedDict
from warpgraph.graph import END, START, StateGraph
from warpgraph.errors import CheckpointConflictError


kind, target, name, durability, driver = sys.argv[1:6]

class S(TypedDict):
    log: Annotated[list, operator.add]

def work(state):
    print("ready", flush=True)
    sys.stdin.readline()
    return {"log": [name]}

if kind == "sqlite":
    from warpgraph.checkpoint.sqlite import SqliteSaver as Saver
else:
    from warpgraph.checkpoint.postgres import PostgresSaver as Saver
with Saver.from_conn_string(target) as saver:
    g = StateGraph(S)
    g.add_node("work", work)
    g.add_node("more", lambda s: {"log": [name + "!"]})
    g.add_edge(START, "work")
    g.add_edge("work", "more")
    g.add_edge("more", END)
    graph = g.compile(checkpointer=saver, interrupt_before=["work"])
    config = {"configurable": {"thread_id": "shared"}}
""" + run_and_report("[e.thread_id, e.checkpoint_ns, e.expected, e.actual, str(e)]")


class S(TypedDict):
    log: Annotated[list, operator.add]


def build(lib: str, name: str = "seed", gate: Any = None) -> Any:
    """START -> work -> more -> END; `gate(name)` runs inside work (to pause a run)."""
    graph_mod = importlib.import_module(f"{lib}.graph")

    def work(state: S) -> dict:
        if gate is not None:
            gate(name)
        return {"log": [name]}

    g = graph_mod.StateGraph(S)
    g.add_node("work", work)
    g.add_node("more", lambda s: {"log": [name + "!"]})
    g.add_edge(graph_mod.START, "work")
    g.add_edge("work", "more")
    g.add_edge("more", graph_mod.END)
    return g


def _linear(history: list) -> None:
    """Newest first: each checkpoint's parent is the next older one (no forks)."""
    for newer, older in pairwise(history):
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]
    assert history[-1].parent_config is None


def _race(kind: str, target: str, saver: Any, durability: str, driver: str) -> None:
    config = {"configurable": {"thread_id": "shared"}}
    seed = build("warpgraph").compile(checkpointer=saver, interrupt_before=["work"])
    seed.invoke({"log": ["start"]}, config)
    head = saver.get_tuple(config).checkpoint["id"]
    procs = [
        subprocess.Popen(
            [PY, "-c", RACER, kind, target, name, durability, driver],
            env=ENV,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in ("a", "b")
    ]
    try:
        for p in procs:  # both runs loaded the head and are inside "work"
            assert p.stdout.readline().strip() == b"ready", p.stderr.read().decode()[-2000:]
        for p in procs:
            p.stdin.write(b"go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0], [o[1].decode()[-2000:] for o in outs]
    lines = [o[0].decode().strip() for o in outs]
    won = [n for n, line in zip("ab", lines) if line == "won"]
    lost = [line for line in lines if line.startswith("conflict ")]
    assert len(won) == 1 and len(lost) == 1, lines
    winner = won[0]
    thread, ns, expected, actual, message = json.loads(lost[0].split(" ", 1)[1])
    history = list(saver.list(config))
    _linear(history)
    ids = [t.checkpoint["id"] for t in history]
    assert (thread, ns, expected) == ("shared", "", head)
    assert actual in ids
    if kind == "sqlite":  # Postgres may report the head its statement's snapshot saw
        assert actual != head
    assert "'shared'" in message and head in message and actual in message
    state = saver.get_tuple(config)
    assert state.checkpoint["channel_values"]["log"] == ["start", winner, winner + "!"]
    # the winner's steps follow the seed's checkpoints, nothing of the loser's in between
    assert [t.metadata["step"] for t in history] == (
        [2, 0, -1] if durability == "exit" else [2, 1, 0, -1]
    )
    if durability == "sync" and FAST_PATHS:
        # the loser's step (writes + checkpoint) was one transaction (put_batch); with the
        # fast paths off its task's writes went first, each fenced only against the head
        # both runs still saw, so either run's writes may stand there (first wins)
        parent = saver.get_tuple(
            {"configurable": {**config["configurable"], "checkpoint_id": head}}
        )
        assert [v for _, c, v in parent.pending_writes if c == "log"] == [[winner]]


@pytest.mark.parametrize(
    "durability,driver",
    [("sync", "sync"), ("async", "sync"), ("exit", "sync"), ("sync", "async"), ("async", "async")],
)
def test_two_processes_on_one_sqlite_thread(tmp_path, durability: str, driver: str) -> None:
    path = str(tmp_path / "race.db")
    with SqliteSaver.from_conn_string(path) as saver:
        _race("sqlite", path, saver, durability, driver)


@pytest.mark.parametrize(
    "durability,driver", [("sync", "sync"), ("exit", "sync"), ("async", "async")]
)
def test_two_processes_on_one_postgres_thread(
    pg_fresh_dsn: str, durability: str, driver: str
) -> None:
    from warpgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_fresh_dsn) as saver:
        saver.setup()
        _race("postgres", pg_fresh_dsn, saver, durability, driver)


# --- the same race between two threads of this process --------------------------------
class _Pause:
    """Pauses run "A" inside its work node until run "B" has finished."""

    def __init__(self) -> None:
        self.a_inside = threading.Event()
        self.b_done = threading.Event()

    def __call__(self, name: str) -> None:
        if name == "A":
            self.a_inside.set()
            assert self.b_done.wait(60)


def _interleave(lib: str, saver: Any, durability: str = "sync") -> tuple:
    """Run A starts and pauses in step 1; run B runs the same thread start to end; then A
    continues. Returns (A's outcome, B's output, the thread's history as (values, step))."""
    pause = _Pause()
    config = {"configurable": {"thread_id": "t"}}
    graph_a = build(lib, "A", pause).compile(checkpointer=saver)
    graph_b = build(lib, "B", pause).compile(checkpointer=saver)
    result: list = []

    def run_a() -> None:
        try:
            result.append(("ok", graph_a.invoke({"log": ["a0"]}, config, durability=durability)))
        except CheckpointConflictError as e:
            result.append(("conflict", e))

    t = threading.Thread(target=run_a)
    t.start()
    assert pause.a_inside.wait(60)
    try:
        out_b = graph_b.invoke({"log": ["b0"]}, config, durability=durability)
    except CheckpointConflictError as e:
        out_b = e
    finally:
        pause.b_done.set()
        t.join(60)
    history = [(h.values, h.metadata["step"]) for h in graph_b.get_state_history(config)]
    return result[0], out_b, history


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_threads_in_one_process_conflict_on_warpgraph_sqlite(tmp_path, durability: str) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
        (_, out_a), out_b, history = _interleave("warpgraph", saver, durability)
        tuples = list(saver.list({"configurable": {"thread_id": "t"}}))
    _linear(tuples)
    outcomes = [out_a, out_b]
    conflicts = [o for o in outcomes if isinstance(o, CheckpointConflictError)]
    assert len(conflicts) == 1
    err = conflicts[0]
    assert err.thread_id == "t" and err.checkpoint_ns == ""
    assert err.actual in {t.checkpoint["id"] for t in tuples}
    winner = "B" if err is out_a else "A"
    assert tuples[0].checkpoint["channel_values"]["log"][-2:] == [winner, winner + "!"]
    if durability != "async":
        # A's input checkpoint (sync) or nothing (exit) was stored before B started: B wins
        assert err is out_a and out_b["log"][-2:] == ["B", "B!"]
        assert err.actual == tuples[0].checkpoint["id"]
        assert all("A" not in values["log"] for values, _ in history)


@pytest.mark.parametrize("saver_kind", ["memory", "langgraph-memory", "langgraph-sqlite"])
def test_savers_without_fencing_behave_as_under_langgraph(saver_kind: str) -> None:
    """No fencing: both runs append (history forks), exactly as LangGraph's engine does."""

    def make(lib: str) -> Any:
        if saver_kind == "langgraph-sqlite":
            from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite

            return RefSqlite(sqlite3.connect(":memory:", check_same_thread=False))
        mod = "langgraph" if saver_kind.startswith("langgraph") else lib
        return importlib.import_module(f"{mod}.checkpoint.memory").InMemorySaver()

    got = _interleave("warpgraph", make("warpgraph"))
    want = _interleave("langgraph", make("langgraph"))
    assert got[0][0] == "ok" and got == want


@pytest.mark.parametrize("durability", ["sync", "async"])
async def test_async_runs_conflict_on_async_sqlite_saver(tmp_path, durability: str) -> None:
    config = {"configurable": {"thread_id": "t"}}
    a_inside, b_done = asyncio.Event(), asyncio.Event()

    async def gate_a(state: S) -> dict:
        a_inside.set()
        await b_done.wait()
        return {"log": ["A"]}

    from warpgraph.graph import END, START, StateGraph

    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as saver:
        graphs = {}
        for name in ("A", "B"):
            g = StateGraph(S)
            g.add_node("work", gate_a if name == "A" else (lambda s: {"log": ["B"]}))
            g.add_edge(START, "work")
            g.add_edge("work", END)
            graphs[name] = g.compile(checkpointer=saver)
        run_a = asyncio.ensure_future(
            graphs["A"].ainvoke({"log": ["a0"]}, config, durability=durability)
        )
        await a_inside.wait()
        outcomes = []
        try:
            outcomes.append(
                await graphs["B"].ainvoke({"log": ["b0"]}, config, durability=durability)
            )
        except CheckpointConflictError as e:
            outcomes.append(e)
        b_done.set()
        try:
            outcomes.append(await run_a)
        except CheckpointConflictError as e:
            outcomes.append(e)
        history = [t async for t in saver.alist(config)]
    _linear(history)
    conflicts = [o for o in outcomes if isinstance(o, CheckpointConflictError)]
    assert len(conflicts) == 1
    assert conflicts[0].actual == history[-1 if durability == "async" else 0].checkpoint["id"] or (
        conflicts[0].actual in {t.checkpoint["id"] for t in history}
    )
    if durability == "sync":  # A's input checkpoint was committed before A's node ran
        assert outcomes[0] == {"log": ["a0", "b0", "B"]} and conflicts[0] is outcomes[1]
        assert conflicts[0].actual == history[0].checkpoint["id"]


# --- time travel, forks and updates are not conflicts ------------------------------------
def _tree(graph: Any, config: dict) -> list:
    """The thread's history with ids replaced by their position (newest first), without
    the tasks (`test_persistence_wiring._tree`'s last element)."""
    return [entry[:5] for entry in history_tree(graph, config)]


def _has_update_state() -> bool:
    from warpgraph.pregel.main import Pregel

    return hasattr(Pregel, "update_state")


_HAS_UPDATE_STATE = _has_update_state()  # (update_state is being built elsewhere)


def _time_travel(lib: str, saver: Any) -> tuple:
    config = {"configurable": {"thread_id": "tt"}}
    graph = build(lib, "x").compile(checkpointer=saver)
    first = graph.invoke({"log": ["in"]}, config)
    old = [h.config for h in graph.get_state_history(config)][-2]  # the input checkpoint
    replay = graph.invoke(None, old)  # replay from an old checkpoint
    fork = graph.invoke({"log": ["fork"]}, old)  # new input from an old checkpoint
    after_update = None
    if _HAS_UPDATE_STATE:
        updated = graph.update_state(old, {"log": ["upd"]})
        after_update = graph.invoke(None, updated)
    again = graph.invoke({"log": ["again"]}, config)  # the latest head still extends
    return first, replay, fork, after_update, again, _tree(graph, config)


def test_time_travel_forks_and_updates_work_like_langgraph(tmp_path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver as RefMemory

    with SqliteSaver.from_conn_string(str(tmp_path / "tt.db")) as saver:
        got = _time_travel("warpgraph", saver)
    assert got == _time_travel("langgraph", RefMemory())


def test_subgraph_namespaces_are_fenced_and_run_like_langgraph(tmp_path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver as RefMemory

    def run(lib: str, saver: Any) -> Any:
        graph_mod = importlib.import_module(f"{lib}.graph")
        types = importlib.import_module(f"{lib}.types")
        sub = graph_mod.StateGraph(S)
        sub.add_node("inner", lambda s: {"log": [types.interrupt("q")]})
        sub.add_edge(graph_mod.START, "inner")
        g = graph_mod.StateGraph(S)
        g.add_node("child", sub.compile())
        g.add_node("after", lambda s: {"log": ["after"]})
        g.add_edge(graph_mod.START, "child")
        g.add_edge("child", "after")
        graph = g.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "s"}}
        first = graph.invoke({"log": ["in"]}, config)
        final = graph.invoke(types.Command(resume="yes"), config)
        return first["log"], final, _tree(graph, config)

    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        got = run("warpgraph", saver)
    assert got == run("langgraph", RefMemory())


def test_conflict_error_class_is_shared_and_picklable() -> None:
    import pickle

    from warpgraph.checkpoint import _sql
    from warpgraph.checkpoint import sqlite as sqlite_mod

    assert _sql.CheckpointConflictError is CheckpointConflictError
    assert sqlite_mod.CheckpointConflictError is CheckpointConflictError
    assert issubclass(CheckpointConflictError, RuntimeError)
    err = pickle.loads(pickle.dumps(CheckpointConflictError("t", "ns", "a", "b")))
    assert (err.thread_id, err.checkpoint_ns, err.expected, err.actual) == ("t", "ns", "a", "b")
    assert str(err) == (
        "Checkpoint conflict on thread 't' (namespace 'ns'): expected head checkpoint 'a' "
        "but the latest is 'b'; another run wrote to this thread concurrently."
    )
