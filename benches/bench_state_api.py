"""The state API: snapshot reads, updates, an interrupt round trip and a resume, on
InMemorySaver and SqliteSaver, LangGraph 1.2.24 against warpgraph in the same run.

Run timed:   pytest benches/bench_state_api.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_state_api.py   (--benchmark-disable: each case once, the
             results of both libraries compared; no timed assertions)
A/B:         PYTHONPATH=benches .venv/bin/python benches/bench_state_api.py  (the sides take
             turns in one process and the ratios are printed; target >= 10x each)

Cases (group = case/saver, one benchmark per library):
* `get_state`: `graph.get_state(config)` on a thread of 1,000 checkpoints (a 10-key state).
* `history10`: `list(graph.get_state_history(config, limit=10))` on that thread.
* `update_state`: `graph.update_state(config, {"n1": ...})` on that thread (a new
  checkpoint each, so the thread grows by each call: the other cases then read it).
* `interrupt_resume`: a new thread runs to a node that calls `interrupt()`, then
  `invoke(Command(resume=...))` finishes it (both invokes timed).
* `resume_crashed`: a 100-step loop whose node raised at step 98 (the run "crashed",
  its last step's writes and checkpoint lost) is resumed with `invoke(None, config)` to its
  end (only the resume is timed; the failed run is each round's setup).
"""

from __future__ import annotations

import importlib
import statistics
import time
import uuid
from typing import Any

import pytest
from _ab import case_side, same_answers, side_cache, speedup
from bench_sqlite_saver import _connect
from graphs import TEN_KEYS_INPUT, TenKeys

LIBS = ("langgraph", "warpgraph")
SAVERS = ("memory", "sqlite")
CASES = ("get_state", "history10", "update_state", "interrupt_resume", "resume_crashed")
THREAD_CHECKPOINTS = 1000  # input + __start__ step + loop steps
RESUME_STEPS = 100
CRASH_AT = 98


class State(TenKeys):
    limit: int
    fail_at: int


INPUT = TEN_KEYS_INPUT


class Crash(RuntimeError):
    """The node's stand-in for a killed process."""


def _loop(lib: str) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")

    def step(s: dict) -> dict:
        if s["n0"] + 1 == s["fail_at"] and not _RESUMING[0]:
            raise Crash(f"crash at step {s['n0'] + 1}")
        return {"n0": s["n0"] + 1}

    g = graph_mod.StateGraph(State)
    g.add_node("step", step)
    g.add_edge(graph_mod.START, "step")
    g.add_conditional_edges(
        "step", lambda s: "step" if s["n0"] < s["limit"] else graph_mod.END, ["step", graph_mod.END]
    )
    return g


def _asking(lib: str) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")

    def ask(s: dict) -> dict:
        return {"s0": types.interrupt("which?")}

    g = graph_mod.StateGraph(State)
    g.add_node("prep", lambda s: {"n0": s["n0"] + 1})
    g.add_node("ask", ask)
    g.add_node("done", lambda s: {"n1": s["n1"] + 1})
    g.add_edge(graph_mod.START, "prep")
    g.add_edge("prep", "ask")
    g.add_edge("ask", "done")
    g.add_edge("done", graph_mod.END)
    return g


def _saver(lib: str, kind: str, path: str) -> Any:
    """The library's own saver; both SQLite savers on the same connection settings (WAL,
    synchronous=NORMAL: what warpgraph's `from_conn_string` sets up)."""
    if kind == "memory":
        return importlib.import_module(f"{lib}.checkpoint.memory").InMemorySaver()
    conn = _connect(path)
    if lib == "langgraph":
        from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite

        return RefSqlite(conn)
    from warpgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(conn)
    saver.setup()
    return saver


def _config(thread: str | None = None) -> dict:
    return {"configurable": {"thread_id": thread or uuid.uuid4().hex}, "recursion_limit": 10_000}


class Side:
    """One library on one saver: the graphs and the 1,000-checkpoint thread."""

    def __init__(self, lib: str, kind: str, path: str) -> None:
        self.lib, self.kind = lib, kind
        self.saver = _saver(lib, kind, path)
        self.loop = _loop(lib).compile(checkpointer=self.saver)
        self.asking = _asking(lib).compile(checkpointer=self.saver)
        self.types = importlib.import_module(f"{lib}.types")
        self.long = _config("long")
        steps = THREAD_CHECKPOINTS - 2
        out = self.loop.invoke({**INPUT, "limit": steps, "fail_at": -1}, self.long)
        assert out["n0"] == steps
        self.updates = 0

    # --- the cases (each returns something to compare between the libraries) ----------
    def get_state(self) -> Any:
        snap = self.loop.get_state(self.long)
        return snap.values, snap.next, snap.metadata["step"]

    def history10(self) -> Any:
        return [
            (h.values["n0"], h.metadata["step"])
            for h in self.loop.get_state_history(self.long, limit=10)
        ]

    def update_state(self) -> Any:
        self.updates += 1
        cfg = self.loop.update_state(self.long, {"n1": self.updates})
        return "checkpoint_id" in cfg["configurable"]

    def interrupt_resume(self) -> Any:
        config = _config()
        first = self.asking.invoke({**INPUT, "limit": 0, "fail_at": -1}, config)
        final = self.asking.invoke(self.types.Command(resume="this"), config)
        return "__interrupt__" in first, final["s0"], final["n1"]

    def crashed(self) -> dict:
        """A thread whose run raised at step CRASH_AT of RESUME_STEPS (the round's setup)."""
        config = _config()
        try:
            self.loop.invoke({**INPUT, "limit": RESUME_STEPS, "fail_at": CRASH_AT}, config)
        except Crash:
            pass
        else:
            raise AssertionError("the run did not crash")
        return config

    def resume_crashed(self, config: dict) -> Any:
        _RESUMING[0] = True
        try:
            return self.loop.invoke(None, config)["n0"]
        finally:
            _RESUMING[0] = False

    def has(self, case: str) -> bool:
        return case != "update_state" or hasattr(self.loop, "update_state")


_RESUMING = [False]  # set while a crashed thread is resumed: the node does not fail then


# --- pytest-benchmark -------------------------------------------------------------------
sides = side_cache("state_api", Side)


_RESULTS: dict[tuple[str, str], dict[str, Any]] = {}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("case", CASES)
def test_state_api(benchmark: Any, sides: Any, case: str, kind: str, lib: str) -> None:
    side = case_side(benchmark, sides, case, kind, lib, "saver")
    if case == "resume_crashed":
        got = benchmark.pedantic(
            side.resume_crashed, setup=lambda: ((side.crashed(),), {}), rounds=15
        )
    else:
        got = benchmark(getattr(side, case))
    # both libraries give the same results (LangGraph runs first: parametrize order)
    if case == "update_state":
        assert got is True
        return
    same_answers(_RESULTS, (case, kind), lib, got)
    expected = {
        "get_state": lambda g: g[0]["n0"] == THREAD_CHECKPOINTS - 2 and g[1] == (),
        "history10": lambda g: len(g) == 10,
        "interrupt_resume": lambda g: g == (True, "this", 1),
        "resume_crashed": lambda g: g == RESUME_STEPS,
    }[case]
    assert expected(got), got


# --- A/B in one process -------------------------------------------------------------------
def _ab(turns: int = 15) -> None:
    """Each turn runs every case on every side (a block of calls each); prints the median
    time per call and the median (range) of the per-turn ratios langgraph / warpgraph."""
    import tempfile
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp())
    sides = {
        (lib, kind): Side(lib, kind, str(tmp / f"{lib}-{kind}.db"))
        for kind in SAVERS
        for lib in LIBS
    }
    calls = {
        "get_state": 50,
        "history10": 20,
        "update_state": 20,
        "interrupt_resume": 10,
        "resume_crashed": 3,
    }
    times: dict[tuple[str, str, str], list[float]] = {}
    for turn in range(turns + 1):
        for (lib, kind), side in sides.items():
            for case, n in calls.items():
                if not side.has(case):
                    continue
                if case == "resume_crashed":
                    spent = 0.0
                    for _ in range(n):
                        config = side.crashed()
                        t0 = time.perf_counter()
                        side.resume_crashed(config)
                        spent += time.perf_counter() - t0
                else:
                    fn = getattr(side, case)
                    t0 = time.perf_counter()
                    for _ in range(n):
                        fn()
                    spent = time.perf_counter() - t0
                if turn:  # (the first turn warms up)
                    times.setdefault((case, kind, lib), []).append(spent / n)
    for case in CASES:
        for kind in SAVERS:
            ref, ours = times.get((case, kind, "langgraph")), times.get((case, kind, "warpgraph"))
            if not ref or not ours:
                print(f"{case:17} {kind:7} (not run: warpgraph has no {case})")
                continue
            print(
                f"{case:17} {kind:7} langgraph {statistics.median(ref) * 1e6:9.1f} µs  "
                f"warpgraph {statistics.median(ours) * 1e6:8.1f} µs  ratio {speedup(ref, ours)}"
            )


if __name__ == "__main__":
    _ab()
