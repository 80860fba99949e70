"""langchain-core is installed here, yet importing warpgraph and running a plain graph never
imports it (it costs more than warpgraph's whole import); the moment langchain-core's
modules are imported, by anyone, warpgraph's classes become their types: `Command` a
`ToolOutputMixin`, the runnables and compiled graphs `Runnable`s."""

from __future__ import annotations

import json

import pytest

from tests._subproc import run_python

pytest.importorskip("langchain_core")

PLAIN_RUN = r"""
import json, operator, sys
from typing import Annotated, TypedDict

import warpgraph.graph, warpgraph.types, warpgraph.func, warpgraph.channels
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph
from warpgraph.types import Command, interrupt

class S(TypedDict):
    log: Annotated[list, operator.add]

def ask(s):
    return {"log": [interrupt("which?")]}

g = StateGraph(S)
g.add_node("a", lambda s: {"log": ["a"]})
g.add_node("ask", ask)
g.add_edge(START, "a")
g.add_edge("a", "ask")
g.add_edge("ask", END)
app = g.compile(checkpointer=InMemorySaver())
cfg = {"configurable": {"thread_id": "t"}}
app.invoke({"log": []}, cfg)
out = list(app.stream(Command(resume="b"), cfg, stream_mode=["updates", "values"]))
state = app.get_state(cfg)
print(json.dumps({
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("langchain_core", "pydantic")),
    "log": state.values["log"],
}))
"""


def test_importing_and_running_a_plain_graph_leaves_langchain_core_unimported() -> None:
    proc = run_python(PLAIN_RUN)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["log"] == ["a", "b"]
    assert got["loaded"] == []


LINKS = r"""
import json, sys
from warpgraph.types import Command
from warpgraph.graph import StateGraph
from warpgraph.pregel import Pregel
before = "langchain_core" in sys.modules

class Sub(Command):  # a subclass made before langchain-core arrives follows its base
    pass

from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.runnables import Runnable

g = StateGraph(dict)
g.add_node("a", lambda s: s)
g.set_entry_point("a")
app = g.compile()
print(json.dumps({
    "before": before,
    "command": isinstance(Command(goto="x"), ToolOutputMixin),
    "sub": isinstance(Sub(), ToolOutputMixin),
    "mro": [c.__name__ for c in Command.__mro__],
    "graph_runnable": isinstance(app, Runnable) and isinstance(app, Pregel),
    "or": type(app | (lambda x: x)).__name__,
    "eq": Command(goto="x") == Command(goto="x"),
}))
"""


def test_langchain_core_imported_later_links_warpgraph_classes() -> None:
    proc = run_python(LINKS)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["before"] is False
    assert got["command"] is True and got["sub"] is True
    assert got["mro"] == ["Command", "ToolOutputMixin", "Generic", "object"]
    assert got["graph_runnable"] is True
    assert got["or"] == "RunnableSequence"
    assert got["eq"] is True


LOADED_FIRST = r"""
import json
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.runnables import Runnable
from warpgraph.types import Command
from warpgraph.graph import StateGraph
g = StateGraph(dict)
g.add_node("a", lambda s: s)
g.set_entry_point("a")
print(json.dumps([isinstance(Command(), ToolOutputMixin), isinstance(g.compile(), Runnable)]))
"""


def test_langchain_core_imported_first_links_at_once() -> None:
    proc = run_python(LOADED_FIRST)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [True, True]
