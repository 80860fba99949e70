"""The functional API: an entrypoint calling 100 tasks, LangGraph 1.2.24 against warpgraph
in the same run.

Run timed:   pytest benches/bench_func_api.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_func_api.py   (--benchmark-disable: each case once, the
             results of both libraries compared; no timed assertions)
A/B:         PYTHONPATH=benches .venv/bin/python benches/bench_func_api.py  (the sides take
             turns in one process and the ratios are printed; target >= 10x each)

Cases (group = case, one benchmark per library):
* `parallel100`: a sync entrypoint starts 100 task calls, then gathers their results
  (no checkpointer).
* `sequential100`: a sync entrypoint calls 100 tasks one after another, each result
  feeding the next call (no checkpointer).
* `parallel100_memory`: `parallel100` on an InMemorySaver, a new thread per run (every
  call's result is saved as a pending write).
* `aparallel100`: an async entrypoint gathering 100 async task calls (`ainvoke`).
"""

from __future__ import annotations

import asyncio
import importlib
import statistics
import time
import uuid
from typing import Any

import pytest
from _ab import speedup

LIBS = ("langgraph", "warpgraph")
CASES = ("parallel100", "sequential100", "parallel100_memory", "aparallel100")
N = 100


def _graphs(lib: str) -> dict[str, Any]:
    func = importlib.import_module(f"{lib}.func")
    memory = importlib.import_module(f"{lib}.checkpoint.memory")

    @func.task
    def inc(x: int) -> int:
        return x + 1

    @func.task
    async def ainc(x: int) -> int:
        return x + 1

    def parallel(n: int) -> int:
        futures = [inc(i) for i in range(n)]
        return sum(f.result() for f in futures)

    def sequential(n: int) -> int:
        x = 0
        for _ in range(n):
            x = inc(x).result()
        return x

    async def aparallel(n: int) -> int:
        return sum(await asyncio.gather(*(ainc(i) for i in range(n))))

    return {
        "parallel100": func.entrypoint()(parallel),
        "sequential100": func.entrypoint()(sequential),
        "parallel100_memory": func.entrypoint(checkpointer=memory.InMemorySaver())(parallel),
        "aparallel100": func.entrypoint()(aparallel),
    }


class Side:
    """One library's graphs and a callable per case."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        self.graphs = _graphs(lib)
        self.loop = asyncio.new_event_loop()

    def run(self, case: str) -> Any:
        try:
            return self._run(case)
        except RuntimeError as exc:
            # LangGraph 1.2.24's sync task calls race now and then ("dictionary changed size
            # during iteration" in its runner's call path): that run is made again
            if self.lib != "langgraph" or "changed size during iteration" not in str(exc):
                raise
            return self._run(case)

    def _run(self, case: str) -> Any:
        graph = self.graphs[case]
        if case == "aparallel100":
            return self.loop.run_until_complete(graph.ainvoke(N))
        if case == "parallel100_memory":
            return graph.invoke(N, {"configurable": {"thread_id": str(uuid.uuid4())}})
        return graph.invoke(N)


EXPECTED = {
    "parallel100": N * (N + 1) // 2,
    "sequential100": N,
    "parallel100_memory": N * (N + 1) // 2,
    "aparallel100": N * (N + 1) // 2,
}

_SIDES: dict[str, Side] = {}


def _side(lib: str) -> Side:
    if lib not in _SIDES:
        _SIDES[lib] = Side(lib)
    return _SIDES[lib]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("case", CASES)
def test_func_api(benchmark: Any, case: str, lib: str) -> None:
    side = _side(lib)
    benchmark.group = f"func/{case}"
    benchmark.extra_info.update({"case": case, "lib": lib})
    got = benchmark(side.run, case)
    assert got == EXPECTED[case]


# --- A/B in one process -------------------------------------------------------------------
def _ab(turns: int = 15) -> None:
    """Each turn runs every case on both sides (a block of runs each); prints the median
    time per run and the median (range) of the per-turn ratios langgraph / warpgraph."""
    sides = {lib: Side(lib) for lib in LIBS}
    runs = {"parallel100": 10, "sequential100": 10, "parallel100_memory": 10, "aparallel100": 10}
    times: dict[tuple[str, str], list[float]] = {}
    for turn in range(turns + 1):
        for lib, side in sides.items():
            for case, n in runs.items():
                t0 = time.perf_counter()
                for _ in range(n):
                    got = side.run(case)
                spent = time.perf_counter() - t0
                assert got == EXPECTED[case], (lib, case, got)
                if turn:  # (the first turn warms up)
                    times.setdefault((case, lib), []).append(spent / n)
    for case in CASES:
        ref, ours = times[(case, "langgraph")], times[(case, "warpgraph")]
        print(
            f"{case:19} langgraph {statistics.median(ref) * 1e6:9.1f} µs  "
            f"warpgraph {statistics.median(ours) * 1e6:8.1f} µs  ratio {speedup(ref, ours)}"
        )


if __name__ == "__main__":
    _ab()
