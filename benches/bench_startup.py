"""Start-up and memory: `import <lib>.graph` in a fresh interpreter, and the peak RSS of a
process that builds, compiles and runs a 1,000-node chain, LangGraph 1.2.24 against warpgraph.

Each figure is a whole child process, the two libraries taking turns (A B A B ...), so machine
drift hits both; medians and the per-pair ratio are printed. langchain-core is installed in
this environment: warpgraph must not import it (nor pydantic) for a plain graph, LangGraph does.

As a test:  pytest benches/bench_startup.py   (each child once; both libraries give the same
            result, warpgraph's import leaves langchain-core unloaded; no timed assertions)
A/B:        PYTHONPATH=benches .venv/bin/python benches/bench_startup.py [turns]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any

import pytest

LIBS = ("langgraph", "warpgraph")
NODES = 1000

IMPORT = r"""
import sys, time
t0 = time.perf_counter()
import {lib}.graph
dt = time.perf_counter() - t0
import json
print(json.dumps({{"seconds": dt,
                  "langchain_core": "langchain_core" in sys.modules,
                  "pydantic": "pydantic" in sys.modules}}))
"""

LARGE_GRAPH = r"""
import json, resource
from typing import TypedDict
from {lib}.graph import END, START, StateGraph

class S(TypedDict):
    n: int

def step(s):
    return {{"n": s["n"] + 1}}

g = StateGraph(S)
names = [f"n{{i}}" for i in range({nodes})]
for name in names:
    g.add_node(name, step)
g.add_edge(START, names[0])
for a, b in zip(names, names[1:]):
    g.add_edge(a, b)
g.add_edge(names[-1], END)
app = g.compile()
out = app.invoke({{"n": 0}}, {{"recursion_limit": {nodes} + 10}})
print(json.dumps({{"n": out["n"], "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}}))
"""


def _child(code: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _env() -> dict[str, str]:
    # tests/_subproc.py (benches/conftest.py puts tests/ on the path)
    from _subproc import child_env

    return child_env()


def import_once(lib: str) -> dict[str, Any]:
    return _child(IMPORT.format(lib=lib), _env())


def large_graph_once(lib: str) -> dict[str, Any]:
    return _child(LARGE_GRAPH.format(lib=lib, nodes=NODES), _env())


@pytest.mark.parametrize("lib", LIBS)
def test_import_is_light(lib: str) -> None:
    got = import_once(lib)
    assert got["seconds"] > 0
    if lib == "warpgraph":
        assert not got["langchain_core"] and not got["pydantic"], got


def test_large_graph_same_result_on_both() -> None:
    results = {lib: large_graph_once(lib) for lib in LIBS}
    assert results["warpgraph"]["n"] == results["langgraph"]["n"] == NODES
    assert all(r["peak_rss_kb"] > 0 for r in results.values())


def _ab(turns: int = 7) -> None:
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(turns):
        for lib in LIBS:
            figures.setdefault(("import ms", lib), []).append(import_once(lib)["seconds"] * 1e3)
            rss = large_graph_once(lib)["peak_rss_kb"] / 1024
            figures.setdefault((f"{NODES}-node peak RSS MB", lib), []).append(rss)
    for what in ("import ms", f"{NODES}-node peak RSS MB"):
        ref, ours = figures[(what, "langgraph")], figures[(what, "warpgraph")]
        ratios = [o / r for o, r in zip(ours, ref)]
        print(
            f"{what:24} langgraph {statistics.median(ref):7.1f}  warpgraph "
            f"{statistics.median(ours):7.1f}  warpgraph/langgraph {statistics.median(ratios):.2f} "
            f"({min(ratios):.2f}-{max(ratios):.2f})"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "tests"))
    _ab(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
