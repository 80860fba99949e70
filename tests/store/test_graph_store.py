"""A store given to `compile(store=)` reaches nodes as the `store` parameter, through
`get_store()` and as `runtime.store`, in subgraphs too, sync and async: the same graph on
LangGraph and on warpgraph leaves the same items and returns the same state."""

from __future__ import annotations

import asyncio
import importlib
import operator
from typing import Annotated, Any, Optional

import pytest
from typing_extensions import TypedDict

pytest.importorskip("langgraph.store.memory")


class State(TypedDict):
    n: int
    seen: Annotated[list, operator.add]


def _graph(lib: str, store: Any) -> Any:
    graph_mod = importlib.import_module(f"{lib}.graph")
    config_mod = importlib.import_module(f"{lib}.config")
    runtime_mod = importlib.import_module(f"{lib}.runtime")
    base = importlib.import_module(f"{lib}.store.base")
    BaseStore = base.BaseStore

    def by_param(state: State, *, store: BaseStore) -> dict:
        store.put(("mem", "param"), f"k{state['n']}", {"n": state["n"]})
        return {"n": state["n"] + 1, "seen": [len(store.search(("mem",)))]}

    def by_getter(state: State) -> dict:
        store = config_mod.get_store()
        store.put(("mem", "getter"), "k", {"n": state["n"]})
        return {"seen": [store.get(("mem", "param"), "k1").value["n"]]}

    def by_runtime(state: State, runtime: runtime_mod.Runtime) -> dict:
        runtime.store.put(("mem", "runtime"), "k", {"n": state["n"]})
        return {"seen": [len(runtime.store.list_namespaces())]}

    async def by_async(state: State, *, store: BaseStore) -> dict:
        await store.aput(("mem", "async"), "k", {"n": state["n"]})
        item = await store.aget(("mem", "async"), "k")
        return {"seen": [item.value["n"]]}

    sub = graph_mod.StateGraph(State)
    sub.add_node("inner", by_runtime)
    sub.add_edge(graph_mod.START, "inner")
    sub_graph = sub.compile()  # no store of its own: the parent's

    g = graph_mod.StateGraph(State)
    g.add_node("param", by_param)
    g.add_node("getter", by_getter)
    g.add_node("sub", sub_graph)
    g.add_node("async", by_async)
    g.add_edge(graph_mod.START, "param")
    g.add_edge("param", "getter")
    g.add_edge("getter", "sub")
    g.add_edge("sub", "async")
    return g.compile(store=store)


def _items(store: Any) -> list:
    out = []
    for ns in store.list_namespaces():
        out += [(tuple(r.namespace), r.key, r.value) for r in store.search(ns, limit=100)]
    return sorted(out)


def _run(lib: str) -> tuple:
    store = importlib.import_module(f"{lib}.store.memory").InMemoryStore()
    graph = _graph(lib, store)
    out = asyncio.run(graph.ainvoke({"n": 1, "seen": []}))
    return out, _items(store)


def test_store_reaches_nodes_like_langgraph() -> None:
    assert _run("warpgraph") == _run("langgraph")
    out, items = _run("warpgraph")
    # the subgraph returns the whole state: its `seen` is added to the parent's again
    assert out == {"n": 2, "seen": [1, 1, 1, 1, 3, 2]}
    assert [i[0] for i in items] == [
        ("mem", "async"),
        ("mem", "getter"),
        ("mem", "param"),
        ("mem", "runtime"),
    ]


def _optional_param(lib: str, resolved: bool) -> list:
    graph_mod = importlib.import_module(f"{lib}.graph")
    base = importlib.import_module(f"{lib}.store.base")
    memory = importlib.import_module(f"{lib}.store.memory")

    def node(state: State, store: base.BaseStore | None = None) -> dict:
        return {"seen": [store is None]}

    if resolved:  # a real `Optional[BaseStore]`, not this module's string annotation
        node.__annotations__["store"] = Optional[base.BaseStore]  # noqa: UP045
    g = graph_mod.StateGraph(State)
    g.add_node("node", node)
    g.add_edge(graph_mod.START, "node")
    return [
        g.compile().invoke({"n": 0, "seen": []})["seen"],
        g.compile(store=memory.InMemoryStore()).invoke({"n": 0, "seen": []})["seen"],
    ]


@pytest.mark.parametrize("resolved", [True, False])
def test_optional_store_parameter_like_langgraph(resolved: bool) -> None:
    ours = _optional_param("warpgraph", resolved)
    assert ours == _optional_param("langgraph", resolved)
    # injected only when the annotation is the type itself (LangGraph compares annotations)
    assert ours == ([[True], [False]] if resolved else [[True], [True]])


def test_a_langgraph_store_works_on_warpgraph() -> None:
    from langgraph.store.memory import InMemoryStore as LgStore

    store = LgStore()
    out = asyncio.run(_graph("warpgraph", store).ainvoke({"n": 1, "seen": []}))
    assert out == {"n": 2, "seen": [1, 1, 1, 1, 3, 2]}
    assert len(_items(store)) == 4
