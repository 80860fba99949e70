"""Chunks a running node queues ("custom" writer, subgraph chunks) reach the consumer
while the node still runs, sync and async, as in LangGraph (where a chat model's tokens
stream live); the consumer stopping early still lets the step finish."""

from __future__ import annotations

import asyncio
import operator
import threading
from typing import Annotated, TypedDict

from warpgraph.graph import END, START, StateGraph
from warpgraph.types import StreamWriter


class S(TypedDict):
    k: Annotated[str, operator.add]


def _graph(gate: threading.Event, seen: list):
    def node(state: S, writer: StreamWriter) -> dict:
        writer("before")
        # the consumer saw "before" while this node runs: it sets the gate
        assert gate.wait(10), "the first chunk did not reach the consumer while the node ran"
        writer("after")
        seen.append("done")
        return {"k": "x"}

    b = StateGraph(S)
    b.add_node("node", node)
    b.add_edge(START, "node")
    b.add_edge("node", END)
    return b.compile()


def test_sync_custom_chunks_arrive_while_the_node_runs():
    gate, seen = threading.Event(), []
    out = []
    for chunk in _graph(gate, seen).stream({"k": ""}, stream_mode="custom"):
        out.append(chunk)
        gate.set()
    assert out == ["before", "after"] and seen == ["done"]


async def test_async_custom_chunks_arrive_while_the_node_runs():
    gate, seen = threading.Event(), []
    out = []
    async for chunk in _graph(gate, seen).astream({"k": ""}, stream_mode="custom"):
        out.append(chunk)
        gate.set()
    assert out == ["before", "after"] and seen == ["done"]


def test_a_consumer_stopping_early_lets_the_step_finish():
    gate, seen = threading.Event(), []
    stream = _graph(gate, seen).stream({"k": ""}, stream_mode="custom")
    assert next(stream) == "before"
    gate.set()
    stream.close()
    assert seen == ["done"]


def test_subgraph_chunks_arrive_while_the_parent_node_runs():
    gate = threading.Event()
    inner = StateGraph(S)
    inner.add_node("a", lambda s: {"k": "a"})

    def b(s: S) -> dict:
        assert gate.wait(10), "the subgraph's first chunk did not reach the consumer"
        return {"k": "b"}

    inner.add_node("b", b)
    inner.add_edge(START, "a")
    inner.add_edge("a", "b")
    outer = StateGraph(S)
    outer.add_node("sub", inner.compile())
    outer.add_edge(START, "sub")
    outer.add_edge("sub", END)
    chunks = []
    for ns, chunk in outer.compile().stream({"k": ""}, stream_mode="updates", subgraphs=True):
        chunks.append((len(ns), list(chunk)))
        gate.set()
    assert chunks == [(1, ["a"]), (1, ["b"]), (0, ["sub"])]


async def test_an_async_consumer_stopping_early_closes_the_run_cleanly():
    """aclose() mid-step cancels the step; the node's thread (a sync node) runs to its end
    and nothing is raised or left unreported."""
    gate, seen = threading.Event(), []
    stream = _graph(gate, seen).astream({"k": ""}, stream_mode="custom")
    assert await stream.__anext__() == "before"
    gate.set()
    await stream.aclose()
    for _ in range(500):
        if seen:
            break
        await asyncio.sleep(0.01)
    assert seen == ["done"]
