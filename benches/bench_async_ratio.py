"""Async against sync, warpgraph against LangGraph, on the graphs of `graphs.py`.

For each case (chain, loop, fan-out; without a saver and with InMemorySaver) it times
`invoke` and `ainvoke` on both libraries in one process, turns alternating, and prints the
medians, the ratios warpgraph/LangGraph for sync and for async, and async ratio / sync ratio
(issue 17's target: within 1.2).

    PYTHONPATH=python:tests:benches .venv/bin/python benches/bench_async_ratio.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import time

from differential.libs import get_lib
from graphs import chain, fanout, loop

CASES = {
    "chain100": lambda lib, saver: chain(lib, saver, 100),
    "loop1000": lambda lib, saver: loop(lib, saver, 1000),
    "fanout100": lambda lib, saver: fanout(lib, saver, 100),
}
_threads = itertools.count()


def _config(saver: str) -> dict:
    cfg: dict = {"recursion_limit": 5000}
    if saver == "memory":
        cfg["configurable"] = {"thread_id": f"ratio-{next(_threads)}"}
    return cfg


def _timers(lib_name: str, case: str, saver: str, aio: asyncio.AbstractEventLoop) -> tuple:
    lib = get_lib(lib_name)
    graph, inp, expected, _, _ = CASES[case](
        lib, lib.InMemorySaver() if saver == "memory" else None
    )

    def sync() -> float:
        t = time.perf_counter()
        out = graph.invoke(inp, _config(saver))
        dt = time.perf_counter() - t
        assert out == expected, (lib_name, case, out)
        return dt

    def asyn() -> float:
        t = time.perf_counter()
        out = aio.run_until_complete(graph.ainvoke(inp, _config(saver)))
        dt = time.perf_counter() - t
        assert out == expected, (lib_name, case, out)
        return dt

    return sync, asyn


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
                for mode, fn in zip(("sync", "async"), _timers(lib, case, saver, aio))
            }
            times: dict = {k: [] for k in timers}
            for k, fn in timers.items():  # warm-up
                fn()
            for _ in range(args.turns):
                for k, fn in timers.items():
                    times[k].append(fn())
            med = {k: statistics.median(v) for k, v in times.items()}
            r_sync = med["warpgraph", "sync"] / med["langgraph", "sync"]
            r_async = med["warpgraph", "async"] / med["langgraph", "async"]
            rows.append((case, saver, med, r_sync, r_async))
    print(
        f"{'case':<11}{'saver':<8}{'wg sync':>10}{'wg async':>10}{'lg sync':>10}{'lg async':>10}"
        f"{'ratio s':>9}{'ratio a':>9}{'a/s':>7}"
    )
    for case, saver, med, r_sync, r_async in rows:
        ms = {k: f"{v * 1e3:.2f}ms" for k, v in med.items()}
        print(
            f"{case:<11}{saver:<8}{ms['warpgraph', 'sync']:>10}{ms['warpgraph', 'async']:>10}"
            f"{ms['langgraph', 'sync']:>10}{ms['langgraph', 'async']:>10}"
            f"{r_sync:>9.4f}{r_async:>9.4f}{r_async / r_sync:>7.2f}"
        )
    aio.close()


if __name__ == "__main__":
    main()
