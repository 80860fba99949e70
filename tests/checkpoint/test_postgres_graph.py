"""Graphs on the Postgres savers give what LangGraph gives on its own InMemorySaver:
LangGraph's runtime (through `as_langgraph_saver`) and warpgraph's runtime, sync and async,
and a thread started by one engine is resumed by the other on the same database."""

from __future__ import annotations

import importlib
import operator
import uuid
from typing import Annotated, Any

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("langgraph.graph")
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from typing_extensions import TypedDict
from warpgraph.checkpoint.base import as_langgraph_saver
from warpgraph.checkpoint.postgres import PostgresSaver
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver


class State(TypedDict):
    items: Annotated[list, operator.add]
    answer: str


def _lib(name: str) -> Any:
    mods = {m: importlib.import_module(f"{name}.{m}") for m in ("graph", "types")}

    class Lib:
        StateGraph = mods["graph"].StateGraph
        START = mods["graph"].START
        END = mods["graph"].END
        Send = mods["types"].Send
        Command = mods["types"].Command
        interrupt = staticmethod(mods["types"].interrupt)

    return Lib


def build(lib: Any) -> Any:
    def fan_out(state: State) -> list:
        return [lib.Send("work", {"items": [i], "answer": ""}) for i in range(3)]

    def ask(state: State) -> dict:
        return {"answer": lib.interrupt({"question": "ok?", "n": len(state["items"])})}

    g = lib.StateGraph(State)
    g.add_node("start", lambda s: {"items": ["s"]})
    g.add_node("work", lambda s: {"items": [s["items"][0] * 10]})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "start")
    g.add_conditional_edges("start", fan_out, ["work"])
    g.add_edge("work", "ask")
    g.add_edge("ask", lib.END)
    return g


def _plain(value: Any) -> Any:
    """Interrupt ids hash random checkpoint ids: compare values only."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", _plain(value.value))
    return value


def _history(graph: Any, config: dict) -> list:
    return [
        (
            snap.values,
            snap.next,
            snap.metadata.get("source"),
            snap.metadata.get("step"),
            [(t.name, [i.value for i in t.interrupts]) for t in snap.tasks],
        )
        for snap in graph.get_state_history(config)
    ]


def _run(lib: Any, saver: Any) -> Any:
    graph = build(lib).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    first = graph.invoke({"items": []}, config)
    state = graph.get_state(config)
    final = graph.invoke(lib.Command(resume="yes"), config)
    return _plain(
        (first, state.next, [i.value for i in state.interrupts], final, _history(graph, config))
    )


@pytest.fixture(scope="module")
def expected() -> Any:
    return _run(_lib("langgraph"), RefSaver())


@pytest.fixture
def saver(pg_dsn: str):
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as s:
        s.setup()
        yield s


def test_langgraph_runtime_on_postgres_saver(saver: PostgresSaver, expected: Any) -> None:
    assert _run(_lib("langgraph"), as_langgraph_saver(saver)) == expected


def test_warpgraph_runtime_on_postgres_saver(saver: PostgresSaver, expected: Any) -> None:
    assert _run(_lib("warpgraph"), saver) == expected


async def test_async_runs_on_async_postgres_saver(pg_dsn: str) -> None:
    ref_lib, wg_lib = _lib("langgraph"), _lib("warpgraph")
    ref = build(ref_lib).compile(checkpointer=RefSaver())
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        await saver.setup()
        for lib, cp in ((wg_lib, saver), (ref_lib, as_langgraph_saver(saver))):
            graph = build(lib).compile(checkpointer=cp)
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            got = [await graph.ainvoke({"items": []}, config)]
            got.append(await graph.ainvoke(lib.Command(resume="r"), config))
            want = [await ref.ainvoke({"items": []}, config)]
            want.append(await ref.ainvoke(ref_lib.Command(resume="r"), config))
            assert _plain(got) == _plain(want)
            assert (await graph.aget_state(config)).values == (await ref.aget_state(config)).values


@pytest.mark.parametrize("first,second", [("warpgraph", "langgraph"), ("langgraph", "warpgraph")])
def test_thread_started_by_one_engine_resumed_by_the_other(
    saver: PostgresSaver, expected: Any, first: str, second: str
) -> None:
    def compiled(name: str) -> Any:
        lib = _lib(name)
        cp = saver if name == "warpgraph" else as_langgraph_saver(saver)
        return lib, build(lib).compile(checkpointer=cp)

    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    _, g1 = compiled(first)
    out1 = g1.invoke({"items": []}, config)
    lib2, g2 = compiled(second)
    state = g2.get_state(config)
    final = g2.invoke(lib2.Command(resume="yes"), config)
    got = _plain(
        (out1, state.next, [i.value for i in state.interrupts], final, _history(g2, config))
    )
    assert got == expected
