"""WARPGRAPH_FAST_PATHS=0 (read once at import) routes every run through the general path
and changes nothing observable: the same results and the same saved checkpoints, on the
in-memory and the SQLite saver, in a child process with the switch off and one with it on
(the suite itself runs a second time with it off: Makefile `test-python`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests._subproc import run_python

CHILD = r"""
import json, operator, sys, tempfile
from typing import Annotated, TypedDict

from warpgraph import _core
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._native import native_writer_for
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel import _lone, _persist

sys.path.insert(0, sys.argv[1])
from differential.normalize import Normalizer


class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]


lone_calls = []
real_lone = _lone.lone_steps


def counting(loop):
    lone_calls.append(1)
    return real_lone(loop)


_lone.lone_steps = counting
import warpgraph.pregel._loop as _loop_mod
_loop_mod.lone_steps = counting

modes = []
real_init = _persist.SaverSession.__init__


def spy(self, *a, **k):
    real_init(self, *a, **k)
    modes.append(self.mode)


_persist.SaverSession.__init__ = spy


def graph(saver):
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"n": s["n"] * 2, "log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=saver)


out = {"fast_paths": FAST_PATHS}
hits = _core._envelope_cache_hits()
with tempfile.TemporaryDirectory() as d:
    with SqliteSaver.from_conn_string(d + "/s.db") as sql:
        out["native_writer"] = native_writer_for(sql, 8) is not None
        for name, saver in (("memory", InMemorySaver()), ("sqlite", sql)):
            g = graph(saver)
            cfg = {"configurable": {"thread_id": name}}
            results = [g.invoke({"n": i, "log": []}, cfg, durability=dur)
                       for i, dur in enumerate(("async", "sync", "exit"))]
            rows = [(t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(cfg)]
            out[name] = Normalizer()({"results": results, "rows": rows})
out["lone_steps"] = len(lone_calls)
out["modes"] = sorted(set(modes))
out["envelope_hits"] = _core._envelope_cache_hits() - hits
print(json.dumps(out, default=repr))
"""


def _child(switch: str) -> dict:
    tests = str(Path(__file__).resolve().parents[1])
    old = os.environ.get("WARPGRAPH_FAST_PATHS")
    os.environ["WARPGRAPH_FAST_PATHS"] = switch
    try:
        proc = run_python(CHILD, tests)
    finally:
        if old is None:
            del os.environ["WARPGRAPH_FAST_PATHS"]
        else:
            os.environ["WARPGRAPH_FAST_PATHS"] = old
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def both() -> tuple[dict, dict]:
    return _child("1"), _child("0")


def test_the_switch_turns_every_fast_path_off(both):
    fast, general = both
    assert fast["fast_paths"] is True and general["fast_paths"] is False
    assert fast["lone_steps"] > 0 and general["lone_steps"] == 0
    assert {"batch", "writer"} <= set(fast["modes"]) and general["modes"] == ["plain"]
    if sys.platform.startswith("linux"):
        assert fast["native_writer"] is True
    assert general["native_writer"] is False
    assert general["envelope_hits"] == 0


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
def test_results_and_saved_checkpoints_are_the_same(both, saver):
    fast, general = both
    assert fast[saver]["results"] == general[saver]["results"]
    assert len(fast[saver]["rows"]) == 9
    assert fast[saver]["rows"] == general[saver]["rows"]
