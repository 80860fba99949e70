"""`get_graph()` without langchain-core (nor pydantic, nor the reference): a child interpreter
that cannot import them draws a graph with warpgraph's own Graph class; its JSON, Mermaid
and edges equal what the reference draws (computed here, with langchain-core) for the same
graph."""

from __future__ import annotations

import json

from tests._subproc import run_python

BUILD = r"""
import operator
from typing import Annotated, Literal
from typing_extensions import TypedDict

def build(lib):
    graph_mod = __import__(f"{lib}.graph", fromlist=["StateGraph"])
    types = __import__(f"{lib}.types", fromlist=["Command"])
    StateGraph, START, END = graph_mod.StateGraph, graph_mod.START, graph_mod.END

    class S(TypedDict):
        log: Annotated[list, operator.add]

    def node(state):
        return {}

    def hop(state) -> types.Command[Literal["b", "done"]]:
        return types.Command(goto="b")

    inner = StateGraph(S)
    inner.add_node("x", node)
    inner.add_node("y", node)
    inner.add_edge(START, "x")
    inner.add_conditional_edges("x", lambda s: "y", {"go": "y", "stop": END})
    g = StateGraph(S)
    g.add_node("a", hop)
    g.add_node("b", node, metadata={"kind": "tool"})
    g.add_node("done", inner.compile())
    g.add_edge(START, "a")
    g.add_edge("b", "a")
    return g.compile(interrupt_before=["b"])

def drawings(lib):
    app = build(lib)
    out = {}
    for xray in (False, True):
        drawn = app.get_graph(xray=xray)
        out[str(xray)] = {
            "json": drawn.to_json(),
            "mermaid": drawn.draw_mermaid(),
            "plain": drawn.draw_mermaid(with_styles=False),
            "edges": [list(e) for e in drawn.edges],
            "class": type(drawn).__module__ + "." + type(drawn).__name__,
        }
    return out
"""

CHILD = r"""
import json, sys
from importlib.abc import MetaPathFinder

BLOCKED = {"langchain_core", "langsmith", "langgraph", "pydantic"}

class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked: {name}")
        return None

sys.meta_path.insert(0, Block())
exec(sys.argv[1])
result = drawings("warpgraph")
assert not any(m.split(".")[0] in BLOCKED for m in sys.modules), "a blocked module loaded"
print(json.dumps(result))
"""


def _built() -> dict:
    """BUILD's names, compiled without this module's `from __future__ import annotations`
    (the child runs it the same way)."""
    namespace: dict = {}
    exec(compile(BUILD, "<build>", "exec", dont_inherit=True), namespace)  # noqa: S102
    return namespace


def test_own_graph_without_langchain_matches_reference() -> None:
    namespace = _built()
    expected = namespace["drawings"]("langgraph")
    proc = run_python(CHILD, BUILD)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    for xray, drawn in got.items():
        assert drawn.pop("class") == "warpgraph.pregel._drawing.Graph"
        ref = expected[xray]
        ref.pop("class")
        assert drawn == json.loads(json.dumps(ref)), xray


def test_with_langchain_get_graph_is_langchains_graph() -> None:
    namespace = _built()
    from langchain_core.runnables.graph import Graph

    app = namespace["build"]("warpgraph")
    drawn = app.get_graph()
    assert isinstance(drawn, Graph)
    data = drawn.nodes["a"].data
    assert type(data).__module__ == "langgraph._internal._runnable"
    assert data.invoke({"log": []}).goto == "b"  # the stand-in runs the node


def test_runnables_that_are_not_langchains_are_described_as_runnables() -> None:
    """A node class built on warpgraph's RunnableCallable outside warpgraph (LangGraph's
    prebuilt ToolNode running on warpgraph) shows as a runnable of its own import path."""
    from warpgraph._internal._runnable import RunnableCallable
    from warpgraph.pregel._drawing import Graph, to_public

    tool_node = type("ToolNode", (RunnableCallable,), {"__module__": "langgraph.prebuilt.x"})
    own = Graph()
    own.add_node(tool_node(lambda x: x), "tools")
    own.add_node(RunnableCallable(lambda x: x), "plain")
    expected = {
        "nodes": [
            {
                "id": "tools",
                "type": "runnable",
                "data": {"id": ["langgraph", "prebuilt", "x", "ToolNode"], "name": "tools"},
            },
            {
                "id": "plain",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "plain",
                },
            },
        ],
        "edges": [],
    }
    assert own.to_json() == expected
    assert to_public(own).to_json() == expected
