"""Engines and savers mix both ways. Complements tests/checkpoint (LangGraph's engine on
warpgraph's savers, and cross-engine threads on warpgraph's SQLite / Postgres savers) with:
warpgraph's engine on LangGraph's own savers (memory, SQLite, Postgres; sync and async) and
on a third-party saver, and a thread started by one engine and resumed by the other on one
SQLite file through LangGraph's SqliteSaver. Expected results: LangGraph's engine on
LangGraph's saver running the same thing."""

from __future__ import annotations

import importlib
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver as RefBase
from langgraph.checkpoint.memory import InMemorySaver as RefMemory
from langgraph.checkpoint.sqlite import SqliteSaver as RefSqlite
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as RefAsyncSqlite
from warpgraph.checkpoint.base import as_langgraph_saver
from warpgraph.checkpoint.sqlite import SqliteSaver

from tests.checkpoint.test_sqlite_interop import (
    State,
    _history,
    _plain,
    _reference,
    _run,
    build,
)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_warpgraph_engine_on_langgraph_sqlite_saver(tmp_path, durability: str) -> None:
    with RefSqlite.from_conn_string(str(tmp_path / "ref.db")) as saver:
        got = _run("warpgraph", saver, durability)
    assert got == _reference(durability)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_warpgraph_engine_on_langgraph_memory_saver(durability: str) -> None:
    assert _run("warpgraph", RefMemory(), durability) == _reference(durability)


def test_warpgraph_engine_on_langgraph_postgres_saver(pg_dsn: str) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver as RefPostgres

    with RefPostgres.from_conn_string(pg_dsn) as saver:
        saver.setup()
        saver.delete_thread("t1")
        got = _run("warpgraph", saver)
        saver.delete_thread("t1")
        want = _run("langgraph", saver)
    assert got == want == _reference()


async def _arun(lib: str, saver: Any) -> Any:
    types = importlib.import_module(f"{lib}.types")
    graph = build(lib).compile(checkpointer=saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    first = await graph.ainvoke({"items": []}, config)
    state = await graph.aget_state(config)
    final = await graph.ainvoke(types.Command(resume="yes"), config)
    history = [
        (s.values, s.next, s.metadata.get("source"), s.metadata.get("step"))
        async for s in graph.aget_state_history(config)
    ]
    return _plain((first, state.next, final, history))


async def test_warpgraph_engine_async_on_langgraph_async_sqlite_saver(tmp_path) -> None:
    async with RefAsyncSqlite.from_conn_string(str(tmp_path / "a.db")) as saver:
        got = await _arun("warpgraph", saver)
        want = await _arun("langgraph", saver)
    assert got == want


async def test_warpgraph_engine_async_on_langgraph_async_postgres_saver(pg_dsn: str) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as RefAsyncPostgres

    async with RefAsyncPostgres.from_conn_string(pg_dsn) as saver:
        await saver.setup()
        got = await _arun("warpgraph", saver)
        want = await _arun("langgraph", saver)
    assert got == want


class ThirdPartySaver(RefBase):
    """A saver from another package: LangGraph's interface only, no task_path argument,
    no warpgraph extension (it delegates storage to a LangGraph InMemorySaver)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = RefMemory()
        self.calls: list[str] = []

    def get_tuple(self, config: dict) -> Any:
        self.calls.append("get_tuple")
        return self.inner.get_tuple(config)

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        return self.inner.list(config, **kwargs)

    def put(self, config: dict, checkpoint: Any, metadata: Any, new_versions: Any) -> dict:
        self.calls.append("put")
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config: dict, writes: Sequence[tuple[str, Any]], task_id: str) -> None:
        self.calls.append("put_writes")
        self.inner.put_writes(config, writes, task_id)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_warpgraph_engine_on_a_third_party_saver(durability: str) -> None:
    ours, theirs = ThirdPartySaver(), ThirdPartySaver()
    assert _run("warpgraph", ours, durability) == _run("langgraph", theirs, durability)
    assert ours.calls.count("put") == theirs.calls.count("put")
    assert ours.calls.count("put_writes") == theirs.calls.count("put_writes")


def _move_thread(tmp_path: Any, first: str, second: str) -> tuple:
    path = str(tmp_path / f"{first}-{second}.db")
    config = {"configurable": {"thread_id": "t1"}}
    with RefSqlite.from_conn_string(path) as s:
        started = _plain(build(first).compile(checkpointer=s).invoke({"items": []}, config))
    with RefSqlite.from_conn_string(path) as s:  # as another process would
        graph = build(second).compile(checkpointer=s)
        types = importlib.import_module(f"{second}.types")
        pending = graph.get_state(config)
        final = _plain(graph.invoke(types.Command(resume="yes"), config))
        history = _history(graph, config)
    return started, pending.next, final, history


@pytest.mark.parametrize("first,second", [("langgraph", "warpgraph"), ("warpgraph", "langgraph")])
def test_thread_moves_between_engines_on_langgraph_sqlite_file(tmp_path, first, second) -> None:
    started, pending_next, final, history = _move_thread(tmp_path, first, second)
    ref = _reference()
    assert (started, pending_next, final) == (ref[0], tuple(ref[1]), ref[3])
    assert history == ref[4]


def _interrupted_sends(lib: str) -> Any:
    """Sends to "work", which interrupts: the interrupted checkpoint has pending sends."""
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")

    def work(state: dict) -> dict:
        return {"items": [(state["items"][0], types.interrupt(state["items"][0]))]}

    g = graph_mod.StateGraph(State)
    g.add_node("start", lambda s: {"items": ["s"]})
    g.add_node("work", work)
    g.add_edge(graph_mod.START, "start")
    g.add_conditional_edges(
        "start",
        lambda s: [types.Send("work", {"items": [i], "answer": ""}) for i in range(3)],
        ["work"],
    )
    g.add_edge("work", graph_mod.END)
    return g


def test_warpgraph_resumes_sends_interrupted_under_langgraph(tmp_path) -> None:
    """The interrupted checkpoint's pending sends were stored by LangGraph's engine: the
    warpgraph run must rebuild those Send tasks to resume them."""
    from langgraph.types import Command as RefCommand
    from warpgraph.types import Command

    config = {"configurable": {"thread_id": "t"}}
    results = []
    for second in ("warpgraph", "langgraph"):
        path = str(tmp_path / f"sends-{second}.db")
        with RefSqlite.from_conn_string(path) as s:
            ref_graph = _interrupted_sends("langgraph").compile(checkpointer=s)
            ref_graph.invoke({"items": []}, config)
            ids = {i.value: i.id for i in ref_graph.get_state(config).interrupts}
        with RefSqlite.from_conn_string(path) as s:
            graph = _interrupted_sends(second).compile(checkpointer=s)
            cmd = Command if second == "warpgraph" else RefCommand
            resume = {iid: f"r{value}" for value, iid in ids.items()}
            results.append(_plain(graph.invoke(cmd(resume=resume), config)))
    assert results[0] == results[1]
    assert sorted(results[0]["items"][1:]) == [[0, "r0"], [1, "r1"], [2, "r2"]]


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_thread_moves_between_engines_on_warpgraph_sqlite_file_with_fencing(
    tmp_path, durability: str
) -> None:
    """warpgraph runs fence their puts, LangGraph's runs (through the adapter) do not: a
    thread alternating between them stays one linear history."""
    path = str(tmp_path / "alt.db")
    config = {"configurable": {"thread_id": "t1"}}
    engines = ["warpgraph", "langgraph", "warpgraph"]
    outs = []
    with SqliteSaver.from_conn_string(path) as s:
        for i, lib in enumerate(engines):
            graph = build(lib).compile(
                checkpointer=s if lib == "warpgraph" else as_langgraph_saver(s)
            )
            types = importlib.import_module(f"{lib}.types")
            inp = {"items": []} if i == 0 else types.Command(resume=f"r{i}")
            outs.append(_plain(graph.invoke(inp, config, durability=durability)))
        history = list(s.list(config))
    ref = RefSqlite(sqlite3.connect(":memory:", check_same_thread=False))
    want = []
    graph = build("langgraph").compile(checkpointer=ref)
    from langgraph.types import Command

    for i in range(3):
        inp = {"items": []} if i == 0 else Command(resume=f"r{i}")
        want.append(_plain(graph.invoke(inp, config, durability=durability)))
    assert outs == want
    for newer, older in pairwise(history):
        assert newer.parent_config["configurable"]["checkpoint_id"] == older.checkpoint["id"]
