"""Lone steps in streamed runs (`pregel/_lone.py`, `_drive._streams_lone`): taken under
stream_mode "updates" / "values" (either, or both), and not under any other mode, with
subgraphs=True, or inside a parent that streams subgraphs (the general path then runs every
step: the runner's tick). What they stream is compared against LangGraph in
tests/differential/test_lone_stream.py."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel._runner import PregelRunner

pytestmark = pytest.mark.fast_paths

STEPS = 6


class S(TypedDict):
    log: Annotated[list, operator.add]


def _chain(saver: Any = None) -> Any:
    g = StateGraph(S)
    prev = START
    for i in range(STEPS):
        g.add_node(f"n{i}", lambda s, i=i: {"log": [i]})
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    g.add_edge(prev, END)
    return g.compile(checkpointer=saver)


def _ticks(monkeypatch: Any) -> list:
    """The tasks of each step the general path runs (the runner's tick)."""
    ran: list = []
    tick, atick = PregelRunner.tick, PregelRunner.atick

    def counted(self: Any, tasks: Any, **kw: Any) -> Any:
        ran.append([t.name for t in tasks])
        return tick(self, tasks, **kw)

    async def acounted(self: Any, tasks: Any, **kw: Any) -> Any:
        ran.append([t.name for t in tasks])
        return await atick(self, tasks, **kw)

    monkeypatch.setattr(PregelRunner, "tick", counted)
    monkeypatch.setattr(PregelRunner, "atick", acounted)
    return ran


LONE_MODES: list[Any] = ["updates", "values", ["updates", "values"]]
GENERAL_MODES: list[Any] = ["tasks", "debug", "custom", "messages", "checkpoints"]
GENERAL_MODES += [["updates", "custom"], ["values", "tasks"]]


def _stream(app: Any, config: Any, aio: bool, **kw: Any) -> list:
    if not aio:
        return list(app.stream({"log": []}, config, **kw))

    async def run() -> list:
        return [c async for c in app.astream({"log": []}, config, **kw)]

    return asyncio.run(run())


@pytest.mark.parametrize("aio", [False, True])
@pytest.mark.parametrize("saver", [False, True])
@pytest.mark.parametrize("mode", LONE_MODES)
def test_lone_steps_run_under_updates_and_values(monkeypatch, mode, saver, aio) -> None:
    ran = _ticks(monkeypatch)
    app = _chain(InMemorySaver() if saver else None)
    config = {"configurable": {"thread_id": "t"}} if saver else None
    chunks = _stream(app, config, aio, stream_mode=mode)
    assert len(chunks) >= STEPS
    assert len(ran) <= 1, ran  # (at most the input's step: the nodes' ran as lone steps)


@pytest.mark.parametrize("aio", [False, True])
@pytest.mark.parametrize("mode", GENERAL_MODES)
def test_other_modes_keep_the_general_path(monkeypatch, mode, aio) -> None:
    ran = _ticks(monkeypatch)
    _stream(_chain(), None, aio, stream_mode=mode)
    assert len(ran) == STEPS + 1  # (the input's step, then each node's)


@pytest.mark.parametrize("aio", [False, True])
def test_subgraph_streaming_keeps_the_general_path(monkeypatch, aio) -> None:
    ran = _ticks(monkeypatch)
    inner = _chain()
    g = StateGraph(S)
    g.add_node("inner", inner)
    g.add_edge(START, "inner")
    g.add_edge("inner", END)
    chunks = _stream(g.compile(), None, aio, stream_mode="updates", subgraphs=True)
    assert [c[0] for c in chunks].count(()) == 1  # (the parent's update)
    # the parent's two steps and all the subgraph's (its stream is the parent's)
    assert len(ran) == 2 + STEPS + 1
