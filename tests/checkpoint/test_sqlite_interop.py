"""Engines on warpgraph's SQLite savers: LangGraph's engine (through `as_langgraph_saver`)
behaves exactly as on LangGraph's own SqliteSaver, and a thread interrupted under one
engine resumes under the other on the same SQLite file. `build`, `_plain`, `_history` and
`_run` are shared with test_postgres_graph."""

from __future__ import annotations

import importlib
import operator
import sqlite3
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as RefAsyncSqliteSaver
from typing_extensions import TypedDict
from warpgraph.checkpoint.base import as_langgraph_saver
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


class State(TypedDict):
    items: Annotated[list, operator.add]
    answer: str


def build(lib: str):
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")

    def fan_out(state: State) -> list:
        return [types.Send("work", {"items": [i], "answer": ""}) for i in range(3)]

    def work(state: State) -> dict[str, Any]:
        return {"items": [state["items"][0] * 10]}

    def ask(state: State) -> dict[str, Any]:
        return {"answer": types.interrupt({"question": "ok?", "n": len(state["items"])})}

    g = graph_mod.StateGraph(State)
    g.add_node("start", lambda s: {"items": ["s"]})
    g.add_node("work", work)
    g.add_node("ask", ask)
    g.add_edge(graph_mod.START, "start")
    g.add_conditional_edges("start", fan_out, ["work"])
    g.add_edge("work", "ask")
    g.add_edge("ask", graph_mod.END)
    return g


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", _plain(value.value))
    return value


def _history(graph: Any, config: dict) -> list:
    return _plain(
        [
            (
                s.values,
                s.next,
                s.metadata.get("source"),
                s.metadata.get("step"),
                [(t.name, [i.value for i in t.interrupts]) for t in s.tasks],
            )
            for s in graph.get_state_history(config)
        ]
    )


def _run(lib: str, saver: Any, durability: str = "async", thread_id: str = "t1") -> tuple:
    """(first result, next, interrupt values, final result, history): interrupt, resume."""
    types = importlib.import_module(f"{lib}.types")
    graph = build(lib).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    first = graph.invoke({"items": []}, config, durability=durability)
    state = graph.get_state(config)
    final = graph.invoke(types.Command(resume="yes"), config, durability=durability)
    return _plain(
        (first, state.next, [i.value for i in state.interrupts], final, _history(graph, config))
    )


def _reference(durability: str = "async") -> tuple:
    ref = RefSqliteSaver(sqlite3.connect(":memory:", check_same_thread=False))
    return _run("langgraph", ref, durability)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_langgraph_engine_on_warpgraph_sqlite_saver_matches_reference(tmp_path, durability) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "lg.db")) as ours:
        got = _run("langgraph", as_langgraph_saver(ours), durability)
        stored = ours.get_tuple({"configurable": {"thread_id": "t1"}})
    assert got == _reference(durability)
    assert stored.checkpoint["channel_values"]["answer"] == "yes"


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_warpgraph_engine_on_warpgraph_sqlite_saver_matches_reference(tmp_path, durability) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "wg.db")) as ours:
        got = _run("warpgraph", ours, durability)
    assert got == _reference(durability)


async def test_langgraph_engine_async_on_warpgraph_async_saver(tmp_path) -> None:
    from langgraph.types import Command

    async with (
        AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.db")) as ours,
        RefAsyncSqliteSaver.from_conn_string(":memory:") as ref,
    ):
        results = []
        for saver in (as_langgraph_saver(ours), ref):
            graph = build("langgraph").compile(checkpointer=saver)
            config = {"configurable": {"thread_id": "a"}}
            first = await graph.ainvoke({"items": []}, config)
            final = await graph.ainvoke(Command(resume="r"), config)
            history = [(s.values, s.next) async for s in graph.aget_state_history(config)]
            results.append(_plain((first, final, history)))
        assert results[0] == results[1]


@pytest.mark.parametrize("first,second", [("langgraph", "warpgraph"), ("warpgraph", "langgraph")])
def test_thread_started_by_one_engine_resumes_under_the_other(tmp_path, first, second) -> None:
    path = str(tmp_path / "shared.db")
    config = {"configurable": {"thread_id": "t1"}}

    def saver_for(lib: str, s: SqliteSaver) -> Any:
        return as_langgraph_saver(s) if lib == "langgraph" else s

    with SqliteSaver.from_conn_string(path) as s:
        graph = build(first).compile(checkpointer=saver_for(first, s))
        started = _plain(graph.invoke({"items": []}, config))
    with SqliteSaver.from_conn_string(path) as s:  # a new process would do the same
        graph = build(second).compile(checkpointer=saver_for(second, s))
        types = importlib.import_module(f"{second}.types")
        pending = graph.get_state(config)
        final = _plain(graph.invoke(types.Command(resume="yes"), config))
        history = _history(graph, config)
    ref = _reference()
    assert started == ref[0]
    assert pending.next == tuple(ref[1])
    assert final == ref[3]
    assert history == ref[4]


@pytest.mark.parametrize("lib", ["langgraph", "warpgraph"])
def test_prune_keep_latest_keeps_what_a_pending_interrupt_needs(tmp_path, lib) -> None:
    types = importlib.import_module(f"{lib}.types")
    config = {"configurable": {"thread_id": "t1"}}
    with SqliteSaver.from_conn_string(str(tmp_path / "p.db")) as s:
        graph = build(lib).compile(checkpointer=s if lib == "warpgraph" else as_langgraph_saver(s))
        graph.invoke({"items": []}, config)
        before = _plain(graph.get_state(config))
        assert len(list(s.list(config))) > 1
        s.prune(["t1"], strategy="keep_latest")
        assert len(list(s.list(config))) == 1
        assert _plain(graph.get_state(config)) == before
        assert graph.get_state(config).next == ("ask",)
        final = _plain(graph.invoke(types.Command(resume="yes"), config))
    assert final == _reference()[3]
