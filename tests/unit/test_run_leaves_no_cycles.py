"""A finished run leaves no loop or runner behind (nothing of it sits in a reference cycle
waiting for the collector): counted with the collector off, after sync and async runs."""

from __future__ import annotations

import asyncio
import gc
from typing import Annotated

from typing_extensions import TypedDict
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import StateGraph, add_messages
from warpgraph.pregel._loop import PregelLoop
from warpgraph.pregel._runner import PregelRunner


class State(TypedDict):
    messages: Annotated[list, add_messages]


def _graph(saver: object = None) -> object:
    b = StateGraph(State)
    b.add_node("chatbot", lambda s: {"messages": [("ai", "HIYA")]})
    b.set_entry_point("chatbot")
    b.set_finish_point("chatbot")
    return b.compile(checkpointer=saver)


def _alive() -> int:
    return sum(isinstance(o, (PregelLoop, PregelRunner)) for o in gc.get_objects())


def test_runs_leave_no_loop_or_runner() -> None:
    plain, saved = _graph(), _graph(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            plain.invoke({"messages": [{"role": "user", "content": "hi"}]})
            assert _alive() == 0
            list(saved.stream({"messages": [("user", "hi")]}, config))
            assert _alive() == 0
            asyncio.run(plain.ainvoke({"messages": [("user", "hi")]}))
            assert _alive() == 0
    finally:
        gc.enable()
