"""Graph runs on SQLite savers: the cost a saver adds to a super-step.

Run timed:   pytest benches/bench_graph_savers.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_graph_savers.py   (--benchmark-disable: each case once,
             results checked against LangGraph's engine; no timed assertions)
A/B:         PYTHONPATH=benches .venv/bin/python benches/bench_graph_savers.py  (the sides
             take turns in one process: ratios that a noisy machine drifts less; `_ab`)

The graph: one node looping STEPS times over a 10-key state (5 ints, 5 ~20-char strings),
bumping one int per step; every round is a fresh thread, so each round stores STEPS + 2
checkpoints (input, __start__ step, STEPS loop steps) and STEPS + 1 tasks' writes.
Cases (group "step"):
* `nosaver`: warpgraph's engine without a checkpointer.
* `sqlite_sync`: warpgraph's engine + warpgraph's SqliteSaver, durability "sync".
* `floor`: the raw sqlite3 floor for the same bytes the saver received during one run
  (serialized with the same serializer, plain INSERTs, one transaction per super-step: the
  step's writes and checkpoint), replayed without the engine. Target: sqlite_sync within
  1.2x of nosaver + floor.
* `langgraph_sync` / `langgraph_nosaver`: the same graph on LangGraph's engine with
  LangGraph's SqliteSaver (durability "sync") and without a saver.
Group "durable" (synchronous=FULL, every commit fsyncs the WAL): warpgraph's SqliteSaver
with durability "sync" vs "async" (the saver's shared group-commit writer); checkpoints/s =
(STEPS + 2) / time per run. Target: async >= 5x sync.

Timing: each benchmark round is a block of consecutive runs (`RUNS_PER_ROUND`; the reported
time is per run). In WAL mode SQLite copies the log back into the database every ~1000
pages written (a checkpoint, with an fsync), inside whichever commit crosses the mark: a
single-run round would leave that work out of the median for most runs, in proportion to
how many pages a side writes (the floor writes whole states, warpgraph only changed
values). A block spans several of them, so the median is the sustained cost.
"""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest
from bench_sqlite_saver import Floor, _connect
from graphs import TEN_KEYS_INPUT, TenKeys
from warpgraph.checkpoint._sql import PutOp
from warpgraph.checkpoint.sqlite import SqliteSaver

STEPS = 20
RUNS_PER_ROUND = 10  # see the module doc (Timing)
ROUNDS = 15


def _timed(benchmark: Any, fn: Any, runs: int = RUNS_PER_ROUND) -> Any:
    """`fn`'s time per call over rounds of `runs` consecutive calls; its last result."""
    return benchmark.pedantic(fn, rounds=ROUNDS, iterations=runs, warmup_rounds=1)


def build(lib: str) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    g = graph_mod.StateGraph(TenKeys)
    g.add_node("step", lambda s: {"n0": s["n0"] + 1})
    g.add_edge(graph_mod.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s["n0"] < STEPS else graph_mod.END)
    return g


INPUT = TEN_KEYS_INPUT
EXPECTED = {**INPUT, "n0": STEPS}


def _config() -> dict:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


def _record_batches(saver: SqliteSaver) -> list:
    """One run's put_batch calls as (writes ops, put op) pairs (the floor replays them)."""
    batches: list = []
    orig = saver.put_batch

    def recorder(ops: list, **kw: Any) -> Any:
        batches.append(list(ops))
        return orig(ops, **kw)

    saver.put_batch = recorder  # type: ignore[method-assign]
    try:
        build("warpgraph").compile(checkpointer=saver).invoke(INPUT, _config(), durability="sync")
    finally:
        del saver.put_batch
    return batches


def _floor_run(floor: Floor, batches: list) -> int:
    """Replay one run's batches on the floor under a fresh thread id; returns transactions."""
    thread = uuid.uuid4().hex
    n = 0
    for ops in batches:
        put = next(op for op in ops if isinstance(op, PutOp))
        writes = [op for op in ops if not isinstance(op, PutOp)]
        conf = {**put.config["configurable"], "thread_id": thread}
        if writes:
            w = writes[0]
            floor.step(
                {
                    "configurable": {
                        **conf,
                        "checkpoint_id": w.config["configurable"]["checkpoint_id"],
                    }
                },
                w.writes,
                w.task_id,
                put.checkpoint,
                put.metadata,
                put.new_versions,
            )
        else:
            floor.put({"configurable": conf}, put.checkpoint, put.metadata, put.new_versions)
        n += 1
    return n


STEP_CASES = ["nosaver", "sqlite_sync", "floor", "langgraph_sync", "langgraph_nosaver"]


def _checkpointed_runs(benchmark: Any, lib: str, saver: Any) -> None:
    """Timed durability="sync" runs of `lib`'s graph on `saver`, checked."""
    graph = build(lib).compile(checkpointer=saver)

    def run() -> Any:
        config = _config()
        return graph.invoke(INPUT, config, durability="sync"), config

    out, config = _timed(benchmark, run)
    assert out == EXPECTED
    assert len(list(saver.list(config))) == STEPS + 2


@pytest.mark.parametrize("case", STEP_CASES)
def test_graph_step(benchmark: Any, tmp_path: Any, case: str) -> None:
    benchmark.group = "step"
    benchmark.extra_info.update({"case": case, "steps": STEPS})
    path = str(tmp_path / "g.db")
    if case == "nosaver":
        graph = build("warpgraph").compile()
        out = _timed(benchmark, lambda: graph.invoke(INPUT))
        assert out == EXPECTED
    elif case == "langgraph_nosaver":
        graph = build("langgraph").compile()
        out = _timed(benchmark, lambda: graph.invoke(INPUT))
        assert out == EXPECTED
    elif case == "sqlite_sync":
        with SqliteSaver.from_conn_string(path) as saver:
            _checkpointed_runs(benchmark, "warpgraph", saver)
    elif case == "langgraph_sync":
        from langgraph.checkpoint.sqlite import SqliteSaver as RefSaver

        conn = _connect(path)
        _checkpointed_runs(benchmark, "langgraph", RefSaver(conn))
        conn.close()
    else:  # floor
        with SqliteSaver.from_conn_string(str(tmp_path / "rec.db")) as rec:
            batches = _record_batches(rec)
        assert len(batches) == STEPS + 2  # input checkpoint, then one batch per step
        floor = Floor(_connect(path))
        transactions = _timed(benchmark, lambda: _floor_run(floor, batches))
        assert transactions == len(batches)
        rows = floor.conn.execute("SELECT count(*) FROM floor_checkpoints").fetchone()[0]
        assert rows % (STEPS + 2) == 0 and rows > 0


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_durable_checkpoint_rate(benchmark: Any, tmp_path: Any, durability: str) -> None:
    benchmark.group = "durable"
    benchmark.extra_info.update(
        {"case": f"sqlite_{durability}", "checkpoints_per_round": STEPS + 2}
    )
    with SqliteSaver.from_conn_string(str(tmp_path / "d.db"), synchronous="FULL") as saver:
        graph = build("warpgraph").compile(checkpointer=saver)

        def run() -> Any:
            config = _config()
            return graph.invoke(INPUT, config, durability=durability), config

        out, config = _timed(benchmark, run)
        assert out == EXPECTED
        # the run's end waited for its writer: everything is stored when invoke returns
        with SqliteSaver.from_conn_string(str(tmp_path / "d.db")) as reader:
            assert len(list(reader.list(config))) == STEPS + 2


def _ab(turns: int = 30) -> None:
    """The step and durable ratios with the sides taking turns in one process (so a slow
    phase of the shared machine hits them alike; pytest-benchmark times one case after
    another): `PYTHONPATH=benches .venv/bin/python benches/bench_graph_savers.py`. Each
    turn runs every side for `RUNS_PER_ROUND` runs; prints each side's median ms per run,
    and the medians (and ranges) of the ratios taken within each turn."""
    import statistics
    import tempfile
    import time
    from contextlib import ExitStack
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp())
    with ExitStack() as stack:

        def saver(name: str, **kw: Any) -> SqliteSaver:
            return stack.enter_context(SqliteSaver.from_conn_string(str(tmp / name), **kw))

        batches = _record_batches(saver("rec.db"))
        floor = Floor(_connect(str(tmp / "floor.db")))
        nosaver = build("warpgraph").compile()
        step = build("warpgraph").compile(checkpointer=saver("step.db"))
        d_sync = build("warpgraph").compile(checkpointer=saver("ds.db", synchronous="FULL"))
        d_async = build("warpgraph").compile(checkpointer=saver("da.db", synchronous="FULL"))
        sides = {
            "nosaver": lambda: nosaver.invoke(INPUT),
            "sqlite_sync": lambda: step.invoke(INPUT, _config(), durability="sync"),
            "floor": lambda: _floor_run(floor, batches),
            "durable_sync": lambda: d_sync.invoke(INPUT, _config(), durability="sync"),
            "durable_async": lambda: d_async.invoke(INPUT, _config(), durability="async"),
        }
        times: dict[str, list[float]] = {n: [] for n in sides}
        for turn in range(turns + 1):
            for name, fn in sides.items():
                t0 = time.perf_counter()
                for _ in range(RUNS_PER_ROUND):
                    fn()
                if turn:  # (the first turn warms up)
                    times[name].append((time.perf_counter() - t0) / RUNS_PER_ROUND)
    for name, ts in times.items():
        print(f"{name:14} {statistics.median(ts) * 1e3:7.3f} ms per run")
    t = times
    ratios = {
        "step: sqlite_sync / (floor + nosaver), target <= 1.2": [
            s / (f + n) for s, f, n in zip(t["sqlite_sync"], t["floor"], t["nosaver"])
        ],
        "durable: sync / async, target >= 5": [
            s / a for s, a in zip(t["durable_sync"], t["durable_async"])
        ],
    }
    for name, rs in ratios.items():
        print(f"{name}: {statistics.median(rs):.2f} ({min(rs):.2f}-{max(rs):.2f})")


if __name__ == "__main__":
    _ab()
