"""Async against sync, warpgraph against LangGraph, on the graphs of `graphs.py`.

For each case (chain, loop, fan-out; without a saver and with InMemorySaver) it times
`invoke` and `ainvoke` on both libraries in one process, turns alternating, and prints the
medians, the ratios warpgraph/LangGraph for sync and for async, and async ratio / sync ratio
(issue 17's target: within 1.2). Async is timed twice: on the same graph (sync node and
path functions, each of which both libraries run on a worker thread under `ainvoke`: two
thread hops per step, which cost ~100 µs each on a small VM whatever the engine) and on the
same graph built with coroutine functions ("async fn"), which run on the event loop.

    PYTHONPATH=python:tests:benches .venv/bin/python benches/bench_async_ratio.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

from differential.libs import get_lib
from graphs import chain, fanout, loop

CASES = {
    "chain100": lambda lib, saver: chain(lib, saver, 100),
    "loop1000": lambda lib, saver: loop(lib, saver, 1000),
    "fanout100": lambda lib, saver: fanout(lib, saver, 100),
}
_threads = itertools.count()
MODES = ("sync", "async", "async fn")


def _config(saver: str) -> dict:
    cfg: dict = {"recursion_limit": 5000}
    if saver == "memory":
        cfg["configurable"] = {"thread_id": f"ratio-{next(_threads)}"}
    return cfg


class _CoroutineLib:
    """`lib` whose StateGraph wraps every node and path function in a coroutine function."""

    def __init__(self, lib: Any) -> None:
        self._lib = lib

        class Graph(lib.StateGraph):  # type: ignore[name-defined,misc]
            def add_node(self, name: str, fn: Any, **kw: Any) -> Any:
                return super().add_node(name, _coroutine(fn), **kw)

            def add_conditional_edges(self, source: str, path: Any, *a: Any, **kw: Any) -> Any:
                return super().add_conditional_edges(source, _coroutine(path), *a, **kw)

        self.StateGraph = Graph

    def __getattr__(self, name: str) -> Any:
        return getattr(self._lib, name)


def _coroutine(fn: Any) -> Any:
    async def call(state: Any) -> Any:
        return fn(state)

    return call


def _timers(lib_name: str, case: str, saver: str, aio: asyncio.AbstractEventLoop) -> tuple:
    lib = get_lib(lib_name)
    graph, inp, expected, _, _ = CASES[case](
        lib, lib.InMemorySaver() if saver == "memory" else None
    )
    agraph, *_ = CASES[case](_CoroutineLib(lib), lib.InMemorySaver() if saver == "memory" else None)

    def sync() -> float:
        t = time.perf_counter()
        out = graph.invoke(inp, _config(saver))
        dt = time.perf_counter() - t
        assert out == expected, (lib_name, case, out)
        return dt

    def timed_async(g: Any) -> Callable[[], float]:
        def asyn() -> float:
            t = time.perf_counter()
            out = aio.run_until_complete(g.ainvoke(inp, _config(saver)))
            dt = time.perf_counter() - t
            assert out == expected, (lib_name, case, out)
            return dt

        return asyn

    return sync, timed_async(graph), timed_async(agraph)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--turns", type=int, default=7)
    p.add_argument("--case", action="append")
    args = p.parse_args()
    aio = asyncio.new_event_loop()
    rows = []
    for case in args.case or CASES:
        for saver in ("none", "memory"):
            timers = {
                (lib, mode): fn
                for lib in ("warpgraph", "langgraph")
                for mode, fn in zip(MODES, _timers(lib, case, saver, aio))
            }
            times: dict = {k: [] for k in timers}
            for k, fn in timers.items():  # warm-up
                fn()
            for _ in range(args.turns):
                for k, fn in timers.items():
                    times[k].append(fn())
            med = {k: statistics.median(v) for k, v in times.items()}
            ratios = {m: med["warpgraph", m] / med["langgraph", m] for m in MODES}
            rows.append((case, saver, med, ratios))
    print(
        "ratios are warpgraph time / LangGraph time; a/s = that async ratio / the sync one\n"
        f"{'case':<11}{'saver':<8}{'wg sync':>10}{'wg async':>10}{'wg a-fn':>10}"
        f"{'lg sync':>10}{'lg async':>10}{'lg a-fn':>10}"
        f"{'ratio s':>9}{'ratio a':>9}{'a/s':>7}{'ratio afn':>10}{'afn/s':>7}"
    )
    for case, saver, med, r in rows:
        ms = {k: f"{v * 1e3:.2f}ms" for k, v in med.items()}
        cells = "".join(f"{ms[lib, m]:>10}" for lib in ("warpgraph", "langgraph") for m in MODES)
        print(
            f"{case:<11}{saver:<8}{cells}{r['sync']:>9.4f}{r['async']:>9.4f}"
            f"{r['async'] / r['sync']:>7.2f}{r['async fn']:>10.4f}{r['async fn'] / r['sync']:>7.2f}"
        )
    aio.close()


if __name__ == "__main__":
    main()
