"""How a run hands its checkpoints and writes to the saver (warpgraph.pregel._persist):
durability "sync" commits a step's checkpoint with the last-finishing task's writes in one
`put_batch`, while tasks that finish earlier are committed at once (so a crash or an error
mid-step never re-runs them); durability "async" goes through the saver's group-commit
writer, in order, flushed at the run's end. Every result and history is compared with
LangGraph's engine on its own saver."""

from __future__ import annotations

import asyncio
import importlib
import operator
import subprocess
import sys
import threading
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefMemory
from typing_extensions import TypedDict
from warpgraph.checkpoint._sql import PutOp
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from tests._subproc import child_env

PY = sys.executable
ENV = child_env()


class S(TypedDict):
    log: Annotated[list, operator.add]


def chain(lib: str, n: int = 3) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(S)
    prev = graph_mod.START
    for i in range(n):
        g.add_node(f"n{i}", lambda s, i=i: {"log": [i]})
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, graph_mod.END)
    return g


def _tree(graph: Any, config: dict) -> list:
    history = list(graph.get_state_history(config))
    pos = {h.config["configurable"]["checkpoint_id"]: i for i, h in enumerate(history)}
    return [
        (
            h.values,
            h.next,
            h.metadata["source"],
            h.metadata["step"],
            pos.get((h.parent_config or {}).get("configurable", {}).get("checkpoint_id")),
            sorted((t.name, repr(t.error)) for t in h.tasks),
        )
        for h in history
    ]


def _describe_ops(ops: list) -> list:
    return [
        ("put", op.metadata.get("step"))
        if isinstance(op, PutOp)
        else ("writes", [v for c, v in op.writes if c == "log"])
        for op in ops
    ]


def _record(saver: Any, attr: str, calls: list) -> None:
    """Record every `attr` call's items (kind, task's logged values) on the instance."""
    orig = getattr(saver, attr)
    describe = _describe_ops

    if asyncio.iscoroutinefunction(orig):

        async def arecorder(ops: list, **kw: Any) -> Any:
            calls.append(describe(ops))
            return await orig(ops, **kw)

        setattr(saver, attr, arecorder)
    else:

        def recorder(ops: list, **kw: Any) -> Any:
            calls.append(describe(ops))
            return orig(ops, **kw)

        setattr(saver, attr, recorder)


# --- durability "sync": one transaction per step ----------------------------------------
def _sync_steps(saver: Any) -> tuple:
    calls: list = []
    _record(saver, "put_batch", calls)
    graph = chain("warpgraph").compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "s"}}
    out = graph.invoke({"log": ["in"]}, config, durability="sync")
    return calls, out, _tree(graph, config)


def _reference_chain(durability: str = "sync") -> tuple:
    graph = chain("langgraph").compile(checkpointer=RefMemory())
    config = {"configurable": {"thread_id": "s"}}
    return graph.invoke({"log": ["in"]}, config, durability=durability), _tree(graph, config)


@pytest.mark.fast_paths
def test_sync_durability_commits_each_step_in_one_batch(tmp_path) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        calls, out, tree = _sync_steps(saver)
    # input checkpoint, then per step: the task's writes + the step's checkpoint
    assert calls == [
        [("put", -1)],
        [("writes", [["in"]]), ("put", 0)],
        [("writes", [[0]]), ("put", 1)],
        [("writes", [[1]]), ("put", 2)],
        [("writes", [[2]]), ("put", 3)],
    ]
    assert (out, tree) == _reference_chain()


def _failing_chain(lib: str, n: int, fail_at: int) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(S)
    prev = graph_mod.START
    for i in range(n):

        def node(s: S, i: int = i) -> dict:
            if i == fail_at:
                raise ValueError(f"node {i} fails")
            return {"log": [i]}

        g.add_node(f"n{i}", node)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, graph_mod.END)
    return g


@pytest.mark.fast_paths
@pytest.mark.parametrize("durability", ["sync", "async"])
@pytest.mark.parametrize("fail_at", [None, 3])
def test_lone_steps_give_a_batching_saver_what_the_drivers_would(
    tmp_path, monkeypatch, durability: str, fail_at: int | None
) -> None:
    """Steps of one plain task run inside the step machine (pregel/_lone.py) with a
    batching or group-commit session too: the saver gets the same batches, in the same
    order, as on the general path (the runner), a failing node included; the history
    equals LangGraph's."""
    import warpgraph.pregel._loop as loop_mod
    from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite
    from warpgraph.pregel._runner import PregelRunner

    ticks: list = []
    tick = PregelRunner.tick
    monkeypatch.setattr(
        PregelRunner, "tick", lambda self, *a, **k: ticks.append(1) or tick(self, *a, **k)
    )

    def run(lib: str, saver: Any) -> tuple:
        calls: list = []
        if lib == "warpgraph" and durability == "sync":
            _record(saver, "put_batch", calls)
        elif lib == "warpgraph":  # the group-commit writer takes one op per submit
            writer = saver.shared_writer()
            submit = writer.submit
            monkeypatch.setattr(writer, "submit", lambda op: calls.append(op) or submit(op))
        graph = _failing_chain(lib, 6, -1 if fail_at is None else fail_at).compile(
            checkpointer=saver
        )
        config = {"configurable": {"thread_id": "lone"}}
        try:
            out = graph.invoke({"log": ["in"]}, config, durability=durability)
        except ValueError as exc:
            out = repr(exc)
        return calls, out, _tree(graph, config)

    lone_ok = loop_mod.lone_steps_ok
    results = []
    for lone in (True, False):
        monkeypatch.setattr(loop_mod, "lone_steps_ok", lone_ok if lone else lambda loop: False)
        ticks.clear()
        with SqliteSaver.from_conn_string(str(tmp_path / f"{lone}.db")) as saver:
            results.append(run("warpgraph", saver))
        results.append(len(ticks))
    (lone_calls, lone_out, lone_tree), lone_ticks, general, general_ticks = results
    if durability == "async":  # submitted ops: their kind, step and task writes
        lone_calls = _describe_ops(lone_calls)
        general = (_describe_ops(general[0]), *general[1:])
    assert lone_ticks <= 1 < general_ticks  # the lone path did run the steps
    assert (lone_calls, lone_out, lone_tree) == general
    with RefSqlite.from_conn_string(str(tmp_path / "ref.db")) as ref:
        assert run("langgraph", ref)[1:] == (lone_out, lone_tree)


@pytest.mark.fast_paths
def test_sync_durability_on_postgres_is_one_batch_per_step(pg_dsn: str) -> None:
    from warpgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        saver.delete_thread("s")
        calls, out, tree = _sync_steps(saver)
    assert [[kind for kind, _ in c] for c in calls] == [["put"]] + [["writes", "put"]] * 4
    assert (out, tree) == _reference_chain()


@pytest.mark.fast_paths
def test_exit_durability_saves_once_in_one_batch(tmp_path) -> None:
    calls: list = []
    with SqliteSaver.from_conn_string(str(tmp_path / "e.db")) as saver:
        _record(saver, "put_batch", calls)
        graph = chain("warpgraph").compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "s"}}
        out = graph.invoke({"log": ["in"]}, config, durability="exit")
        tree = _tree(graph, config)
    assert calls == [[("put", 3)]]
    assert (out, tree) == _reference_chain("exit")


# --- a parallel step: early finishers are committed at once -----------------------------
def fan(lib: str, slow: Any, fail: Any = None) -> Any:
    """START -> (a, b, slow) in one step -> join."""
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(S)

    def node(name: str) -> Any:
        def run(state: S) -> dict:
            if name == "slow":
                slow()
            if fail is not None:
                fail(name)
            return {"log": [name]}

        return run

    for name in ("a", "b", "slow"):
        g.add_node(name, node(name))
        g.add_edge(graph_mod.START, name)
    g.add_node("join", lambda s: {"log": ["join"]})
    g.add_edge(["a", "b", "slow"], "join")
    return g


@pytest.mark.fast_paths
def test_early_finishers_are_committed_before_the_step_ends(tmp_path) -> None:
    calls: list = []
    both = threading.Event()
    with SqliteSaver.from_conn_string(str(tmp_path / "f.db")) as saver:
        _record(saver, "put_batch", calls)
        recorded = saver.put_batch

        def put_batch(ops: list, **kw: Any) -> Any:
            out = recorded(ops, **kw)
            done = [vals for c in calls for kind, vals in c if kind == "writes"]
            if [["a"]] in done and [["b"]] in done:
                both.set()
            return out

        saver.put_batch = put_batch
        # "slow" only finishes once a's and b's writes are committed (deadlock guard only)
        slow = lambda: assert_(both.wait(30))
        graph = fan("warpgraph", slow).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "f"}}
        out = graph.invoke({"log": []}, config, durability="sync")
        tree = _tree(graph, config)
    step1 = next(c for c in calls if ("put", 1) in c)
    assert step1 == [("writes", [["slow"]]), ("put", 1)]  # the last finisher rides along
    ref = fan("langgraph", lambda: None).compile(checkpointer=RefMemory())
    want = ref.invoke({"log": []}, config, durability="sync")
    assert (sorted(out["log"]), tree[0][0]["log"][-1]) == (sorted(want["log"]), "join")
    assert [t[2:5] for t in tree] == [t[2:5] for t in _tree(ref, config)]


def assert_(ok: bool) -> None:
    assert ok


@pytest.mark.fast_paths
async def test_async_driver_commits_early_finishers_at_once(tmp_path) -> None:
    calls: list = []
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "af.db")) as saver:
        _record(saver, "aput_batch", calls)

        graph_mod = importlib.import_module("warpgraph.graph")
        g = graph_mod.StateGraph(S)

        async def fast(state: S) -> dict:
            return {"log": ["fast"]}

        async def slow(state: S) -> dict:
            for _ in range(3000):  # until fast's writes are committed (deadlock guard only)
                if any(("writes", [["fast"]]) in c for c in calls):
                    break
                await asyncio.sleep(0.01)
            return {"log": ["slow"]}

        g.add_node("fast", fast)
        g.add_node("slow", slow)
        g.add_edge(graph_mod.START, "fast")
        g.add_edge(graph_mod.START, "slow")
        graph = g.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "af"}}
        out = await graph.ainvoke({"log": []}, config, durability="sync")
    assert sorted(out["log"]) == ["fast", "slow"]
    assert [("writes", [["fast"]])] in calls
    assert [("writes", [["slow"]]), ("put", 1)] in calls


# --- crash safety: finished tasks are not re-run on resume -------------------------------
def _error_mid_step(lib: str, saver: Any, durability: str) -> tuple:
    runs: list = []
    boom = {"armed": True}

    others = threading.Barrier(3)  # b fails once a and slow are running (all started)

    def fail(name: str) -> None:
        runs.append(name)
        if boom["armed"]:
            others.wait(30)
            if name == "b":
                boom["armed"] = False
                raise ValueError("b failed")

    graph = fan(lib, lambda: None, fail).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "e"}}
    with pytest.raises(ValueError, match="b failed"):
        graph.invoke({"log": []}, config, durability=durability)
    final = graph.invoke(None, config, durability=durability)
    return sorted(runs), sorted(final["log"]), [t[2:] for t in _tree(graph, config)]


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_a_failing_task_does_not_rerun_finished_ones(tmp_path, durability: str) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite

    with SqliteSaver.from_conn_string(str(tmp_path / "x.db")) as saver:
        got = _error_mid_step("warpgraph", saver, durability)
    with RefSqlite.from_conn_string(str(tmp_path / "ref.db")) as ref:
        want = _error_mid_step("langgraph", ref, durability)
    assert got == want
    assert got[0] == ["a", "b", "b", "slow"]  # a (and slow) ran once, b again


CRASHER = r"""
import operator, os, sys, time
from typing import Annotated
from typing_extensions import TypedDict
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.graph import END, START, StateGraph


path, log_path, crash, durability = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]

class S(TypedDict):
    log: Annotated[list, operator.add]

def node(name):
    def run(state):
        with open(log_path, "a") as f:
            f.write(name + "\n")
        if name == "b" and crash:
            # die once a's writes are in the file (seen through another connection)
            with SqliteSaver.from_conn_string(path) as other:
                for _ in range(3000):
                    t = other.get_tuple({"configurable": {"thread_id": "k"}})
                    if t and any(v == ["a"] for _, c, v in t.pending_writes):
                        os._exit(3)
                    time.sleep(0.01)
            os._exit(4)
        return {"log": [name]}
    return run

g = StateGraph(S)
for name in ("a", "b"):
    g.add_node(name, node(name))
    g.add_edge(START, name)
g.add_node("join", node("join"))
g.add_edge(["a", "b"], "join")
g.add_edge("join", END)
with SqliteSaver.from_conn_string(path) as saver:
    graph = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "k"}}
    out = graph.invoke({"log": ["in"]} if crash else None, config, durability=durability)
    print(sorted(out["log"]))
"""


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_killed_process_resumes_without_rerunning_finished_tasks(tmp_path, durability) -> None:
    db, log = str(tmp_path / "k.db"), str(tmp_path / "runs.log")
    runs_of = [
        subprocess.run(
            [PY, "-c", CRASHER, db, log, crash, durability],
            check=False,
            env=ENV,
            capture_output=True,
            timeout=120,
        )
        for crash in ("1", "0")  # (the second run starts once the first one has ended)
    ]
    crashed, resumed = runs_of
    assert crashed.returncode == 3, crashed.stderr.decode()[-2000:]
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    assert resumed.stdout.decode().strip() == str(sorted(["in", "a", "b", "join"]))
    with open(log) as f:
        runs = f.read().split()
    assert sorted(runs) == ["a", "b", "b", "join"]  # a ran once; b again after the crash


# --- durability "async": group commit -----------------------------------------------------
def loop_graph(lib: str) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(S)
    g.add_node("step", lambda s: {"log": [len(s["log"])]})
    g.add_edge(graph_mod.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if len(s["log"]) < 30 else graph_mod.END)
    return g


@pytest.mark.fast_paths
def test_async_durability_uses_group_commit_in_order(tmp_path) -> None:
    path = str(tmp_path / "g.db")
    config = {"configurable": {"thread_id": "g"}}
    writers: list = []
    violations: list = []
    stop = threading.Event()

    def reader() -> None:
        # a checkpoint must never be visible before the writes of the tasks it applied
        with SqliteSaver.from_conn_string(path) as other:
            while not stop.is_set():
                t = other.get_tuple(config)
                if t is not None and t.parent_config is not None:
                    parent = other.get_tuple(t.parent_config)
                    if not parent.pending_writes:
                        violations.append(t.metadata["step"])

    with SqliteSaver.from_conn_string(path) as saver:
        make = saver._new_shared_writer
        saver._new_shared_writer = lambda: writers.append(make()) or writers[-1]
        graph = loop_graph("warpgraph").compile(checkpointer=saver)
        th = threading.Thread(target=reader)
        th.start()
        try:
            out = graph.invoke({"log": []}, config, durability="async")
        finally:
            stop.set()
            th.join()
        tree = _tree(graph, config)
    ref = loop_graph("langgraph").compile(checkpointer=RefMemory())
    assert (out, tree) == (ref.invoke({"log": []}, config), _tree(ref, config))
    assert violations == []
    assert len(writers) == 1 and writers[0].batches >= 1
    assert not writers[0].alive  # leaving the saver's context stopped its shared writer


def _interrupted(lib: str, saver: Any, durability: str) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")
    g = graph_mod.StateGraph(S)
    g.add_node("ask", lambda s: {"log": [types.interrupt("q?")]})
    g.add_edge(graph_mod.START, "ask")
    return g.compile(checkpointer=saver), types


@pytest.mark.parametrize("durability", ["async", "sync", "exit"])
def test_interrupt_flushes_everything_before_returning(tmp_path, durability: str) -> None:
    path = str(tmp_path / "i.db")
    config = {"configurable": {"thread_id": "i"}}
    with SqliteSaver.from_conn_string(path) as saver:
        graph, _ = _interrupted("warpgraph", saver, durability)
        out = graph.invoke({"log": ["x"]}, config, durability=durability)
        with SqliteSaver.from_conn_string(path) as other:  # what another process sees now
            seen = _tree(_interrupted("warpgraph", other, durability)[0], config)
            final = _interrupted("warpgraph", other, durability)[0].invoke(
                _interrupted("warpgraph", other, durability)[1].Command(resume="yes"), config
            )
    ref, types = _interrupted("langgraph", RefMemory(), durability)
    want = ref.invoke({"log": ["x"]}, config, durability=durability)
    assert out["log"] == want["log"]
    assert [i.value for i in out["__interrupt__"]] == [i.value for i in want["__interrupt__"]]
    assert seen == _tree(ref, config)
    assert final == ref.invoke(types.Command(resume="yes"), config)


@pytest.mark.parametrize("saver_cls", ["SqliteSaver", "AsyncSqliteSaver"])
async def test_async_driver_with_group_commit(tmp_path, saver_cls: str) -> None:
    config = {"configurable": {"thread_id": "ag"}}
    path = str(tmp_path / "ag.db")
    if saver_cls == "SqliteSaver":
        with SqliteSaver.from_conn_string(path) as saver:
            graph = loop_graph("warpgraph").compile(checkpointer=saver)
            out = await graph.ainvoke({"log": []}, config, durability="async")
    else:
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            graph = loop_graph("warpgraph").compile(checkpointer=saver)
            out = await graph.ainvoke({"log": []}, config, durability="async")
    with SqliteSaver.from_conn_string(path) as saver:
        tree = _tree(loop_graph("warpgraph").compile(checkpointer=saver), config)
    ref = loop_graph("langgraph").compile(checkpointer=RefMemory())
    assert (out, tree) == (await ref.ainvoke({"log": []}, config), _tree(ref, config))


def test_stopping_a_stream_early_keeps_what_was_produced(tmp_path) -> None:
    config = {"configurable": {"thread_id": "st"}}
    results = []
    for lib, saver_ctx in (
        ("warpgraph", SqliteSaver.from_conn_string(str(tmp_path / "st.db"))),
        ("langgraph", None),
    ):
        saver = RefMemory() if saver_ctx is None else saver_ctx.__enter__()
        graph = chain(lib, 4).compile(checkpointer=saver)
        for i, _ in enumerate(graph.stream({"log": []}, config, durability="sync")):
            if i == 1:
                break
        results.append([t[2:4] for t in _tree(graph, config)])
        if saver_ctx is not None:
            saver_ctx.__exit__(None, None, None)
    assert results[0] == results[1]


def _subgraphs(lib: str) -> Any:
    """Three parallel Send tasks, each calling a two-step subgraph (nested runs)."""
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")
    sub = graph_mod.StateGraph(S)
    sub.add_node("x", lambda s: {"log": ["x"]})
    sub.add_node("y", lambda s: {"log": ["y"]})
    sub.add_edge(graph_mod.START, "x")
    sub.add_edge("x", "y")
    child = sub.compile()
    g = graph_mod.StateGraph(S)
    g.add_node("call", lambda s: {"log": child.invoke({"log": s["log"]})["log"]})
    g.add_conditional_edges(
        graph_mod.START, lambda s: [types.Send("call", {"log": [i]}) for i in range(3)], ["call"]
    )
    return g


@pytest.mark.fast_paths
@pytest.mark.parametrize("driver", ["sync", "async"])
async def test_nested_runs_share_the_root_runs_writer(tmp_path, driver: str) -> None:
    config = {"configurable": {"thread_id": "n"}}
    writers: list = []
    with SqliteSaver.from_conn_string(str(tmp_path / "n.db")) as saver:
        make = saver._new_shared_writer
        saver._new_shared_writer = lambda: writers.append(make()) or writers[-1]
        graph = _subgraphs("warpgraph").compile(checkpointer=saver)
        if driver == "sync":
            out = graph.invoke({"log": []}, config, durability="async")
        else:
            out = await graph.ainvoke({"log": []}, config, durability="async")
        tree = _tree(graph, config)
        namespaces = {
            t.config["configurable"]["checkpoint_ns"]
            for t in saver.list(None)
            if t.config["configurable"]["thread_id"] == "n"
        }
    ref = _subgraphs("langgraph").compile(checkpointer=RefMemory())
    want = ref.invoke({"log": []}, config, durability="async")
    assert sorted(map(str, out["log"])) == sorted(map(str, want["log"]))
    assert [t[2:5] for t in tree] == [t[2:5] for t in _tree(ref, config)]
    assert len(writers) == 1 and not writers[0].alive
    ref_namespaces = {
        t.config["configurable"]["checkpoint_ns"] for t in ref.checkpointer.list(None)
    }
    assert len(namespaces) == len(ref_namespaces) == 4  # the root's + one per subgraph call


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_a_value_that_cannot_be_serialized_stops_the_run_and_keeps_what_was_saved(
    tmp_path, durability: str
) -> None:
    class Opaque:
        pass

    g = chain("warpgraph", 2)
    g.add_node("bad", lambda s: {"log": [Opaque()]})
    g.add_edge("n1", "bad")
    config = {"configurable": {"thread_id": "t"}}
    with SqliteSaver.from_conn_string(str(tmp_path / "s.db")) as saver:
        graph = g.compile(checkpointer=saver)
        with pytest.raises(TypeError, match="Opaque"):
            graph.invoke({"log": []}, config, durability=durability)
        saved = graph.get_state(config)
        if durability == "exit":  # nothing is written before the run's end
            assert saved.values == {}
        else:  # the steps before the failing one are kept, resumable
            assert saved.values == {"log": [0, 1]} and saved.next == ("bad",)
