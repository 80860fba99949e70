"""The `warpgraph bench` workloads under pytest-benchmark: the very definitions the command
runs (`warpgraph._cli.bench.workloads`), on each library and on InMemorySaver / SQLite.

Run: `pytest benches/bench_cli_workloads.py --benchmark-enable` (the command's quick sizes,
a fresh thread per round). With --benchmark-disable (the default addopts) each case runs
once at a tiny size as a test of the definitions on both libraries. `warpgraph bench
--compare langgraph` is the better A/B (a worker process, alternating turns); this file
gives pytest-benchmark's statistics of the same work. No timed asserts.
"""

from __future__ import annotations

import itertools

import pytest
from warpgraph._cli.bench.lib import load_lib
from warpgraph._cli.bench.savers import open_saver
from warpgraph._cli.bench.workloads import WORKLOADS

TINY = 3


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize("workload", list(WORKLOADS))
@pytest.mark.parametrize("lib_name", ["langgraph", "warpgraph"])
def test_workload(benchmark, request, tmp_path, lib_name, workload, saver):
    spec = WORKLOADS[workload]
    enabled = not request.config.getoption("benchmark_disable")
    size = spec.quick_size if enabled else max(TINY, spec.min_size)
    threads = itertools.count()
    with open_saver(lib_name, saver, str(tmp_path)) as handle:
        prepared = spec.prepare(load_lib(lib_name), handle, size, "sync")
        result = benchmark.pedantic(
            lambda: prepared.run(f"t{next(threads)}"), rounds=5, iterations=1, warmup_rounds=1
        )
    assert set(result.metrics) == set(spec.metrics)
    assert all(units > 0 and seconds > 0 for units, seconds in result.metrics.values())
