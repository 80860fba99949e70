"""Same graphs on warpgraph and the reference in one run (groups put them side by side).

With --benchmark-disable (the default addopts) every case runs once as a test and checks the
output against first principles and against the reference. No timed assertions.
"""

import itertools

import pytest
from differential.libs import get_lib, warpgraph_import_error
from graphs import CASES

_threads = itertools.count()
_reference_outputs: dict = {}


def _saver(lib, saver: str):
    return lib.InMemorySaver() if saver == "memory" else None


def _config(saver: str) -> dict:
    cfg: dict = {"recursion_limit": 5000}
    if saver == "memory":
        cfg["configurable"] = {"thread_id": f"bench-{next(_threads)}"}
    return cfg


def _reference_output(case: str, saver: str):
    key = (case, saver)
    if key not in _reference_outputs:
        lib = get_lib("langgraph")
        graph, inp, _, _, _ = CASES[case](lib, _saver(lib, saver))
        _reference_outputs[key] = graph.invoke(inp, _config(saver))
    return _reference_outputs[key]


@pytest.mark.parametrize("lib_name", ["langgraph", "warpgraph"])
@pytest.mark.parametrize("saver", ["none", "memory"])
@pytest.mark.parametrize("case", list(CASES))
def test_bench(benchmark, case, saver, lib_name):
    if lib_name == "warpgraph" and (err := warpgraph_import_error()) is not None:
        pytest.skip(f"warpgraph not importable yet ({err})")
    lib = get_lib(lib_name)
    graph, inp, expected, units, unit_name = CASES[case](lib, _saver(lib, saver))
    benchmark.group = f"{case}-{saver}"
    benchmark.extra_info.update(
        lib=lib_name, case=case, saver=saver, units=units, unit_name=unit_name
    )
    out = benchmark(lambda: graph.invoke(inp, _config(saver)))
    assert out == expected
    assert out == _reference_output(case, saver)
