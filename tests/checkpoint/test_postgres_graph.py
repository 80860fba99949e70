"""Graphs on the Postgres savers give what LangGraph gives on its own InMemorySaver:
LangGraph's runtime (through `as_langgraph_saver`) and warpgraph's runtime, sync and async,
and a thread started by one engine is resumed by the other on the same database.
The graph and its helpers are test_sqlite_interop's."""

from __future__ import annotations

import importlib
import uuid
from typing import Any

import pytest

pytest.importorskip("psycopg")
pytest.importorskip("langgraph.graph")
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from langgraph.types import Command as RefCommand
from warpgraph.checkpoint.base import as_langgraph_saver
from warpgraph.checkpoint.postgres import PostgresSaver
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from .test_sqlite_interop import _history, _plain, _run, build


def _thread() -> dict:
    return {"configurable": {"thread_id": uuid.uuid4().hex}}


@pytest.fixture(scope="module")
def expected() -> Any:
    return _run("langgraph", RefSaver(), thread_id=uuid.uuid4().hex)


@pytest.fixture
def saver(pg_dsn: str):
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as s:
        s.setup()
        yield s


def test_langgraph_runtime_on_postgres_saver(saver: PostgresSaver, expected: Any) -> None:
    assert _run("langgraph", as_langgraph_saver(saver), thread_id=uuid.uuid4().hex) == expected


def test_warpgraph_runtime_on_postgres_saver(saver: PostgresSaver, expected: Any) -> None:
    assert _run("warpgraph", saver, thread_id=uuid.uuid4().hex) == expected


async def test_async_runs_on_async_postgres_saver(pg_dsn: str) -> None:
    ref = build("langgraph").compile(checkpointer=RefSaver())
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        await saver.setup()
        for lib, cp in (("warpgraph", saver), ("langgraph", as_langgraph_saver(saver))):
            command = importlib.import_module(f"{lib}.types").Command
            graph = build(lib).compile(checkpointer=cp)
            config = _thread()
            got = [await graph.ainvoke({"items": []}, config)]
            got.append(await graph.ainvoke(command(resume="r"), config))
            want = [await ref.ainvoke({"items": []}, config)]
            want.append(await ref.ainvoke(RefCommand(resume="r"), config))
            assert _plain(got) == _plain(want)
            assert (await graph.aget_state(config)).values == (await ref.aget_state(config)).values


@pytest.mark.parametrize("first,second", [("warpgraph", "langgraph"), ("langgraph", "warpgraph")])
def test_thread_started_by_one_engine_resumed_by_the_other(
    saver: PostgresSaver, expected: Any, first: str, second: str
) -> None:
    def compiled(lib: str) -> Any:
        cp = saver if lib == "warpgraph" else as_langgraph_saver(saver)
        return build(lib).compile(checkpointer=cp)

    config = _thread()
    out1 = compiled(first).invoke({"items": []}, config)
    g2 = compiled(second)
    state = g2.get_state(config)
    final = g2.invoke(importlib.import_module(f"{second}.types").Command(resume="yes"), config)
    got = _plain(
        (out1, state.next, [i.value for i in state.interrupts], final, _history(g2, config))
    )
    assert got == expected
