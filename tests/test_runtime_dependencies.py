"""warpgraph runs with only its wheel and ormsgpack: optional packages are never required.

A child interpreter blocks every import of the reference and the optional extras, then
imports the public modules and runs a checkpointed graph on the in-memory and SQLite savers.
"""

from __future__ import annotations

from tests._subproc import run_python

BLOCKED = (
    "langgraph",
    "langchain_core",
    "langsmith",
    "pydantic",
    "xxhash",
    "psycopg",
    "psycopg_pool",
    "aiosqlite",
    "cryptography",
    "numpy",
)

CHILD = r"""
import sys
from importlib.abc import MetaPathFinder

BLOCKED = set(sys.argv[1].split(","))

class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked optional dependency: {name}")
        return None

sys.meta_path.insert(0, Block())

import operator, tempfile, os
from typing import Annotated, TypedDict

import warpgraph
import warpgraph.channels, warpgraph.config, warpgraph.constants, warpgraph.errors
import warpgraph.runtime, warpgraph.types, warpgraph.checkpoint.serde.jsonplus
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.graph import END, START, MessagesState, StateGraph, add_messages
from warpgraph.types import Send

class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]

g = StateGraph(S)
g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
g.add_node("b", lambda s: {"log": ["b"]})
g.add_edge(START, "a")
g.add_conditional_edges("a", lambda s: [Send("b", s), Send("b", s)])
g.add_edge("b", END)
with tempfile.TemporaryDirectory() as tmp:
    with SqliteSaver.from_conn_string(os.path.join(tmp, "db.sqlite")) as sqlite_saver:
        for saver in (InMemorySaver(), sqlite_saver):
            graph = g.compile(checkpointer=saver)
            cfg = {"configurable": {"thread_id": "t"}}
            out = graph.invoke({"n": 1, "log": []}, cfg)
            assert out == {"n": 2, "log": ["a", "b", "b"]}, out
            assert len(list(graph.get_state_history(cfg))) == 4

msgs = add_messages([{"role": "user", "content": "hi"}], [{"role": "ai", "content": "yo"}])
assert [m["content"] for m in msgs] == ["hi", "yo"], msgs
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print("ok")
"""


def test_runs_without_optional_packages() -> None:
    proc = run_python(CHILD, ",".join(BLOCKED))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
