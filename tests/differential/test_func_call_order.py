"""The functional API's event order around task calls, differential: `astream_events` of an
entrypoint whose tasks end (one raising, caught by the entrypoint) must interleave the
entrypoint's own events and the root's update chunks as LangGraph does. LangGraph commits
a call in a done callback of the call's future, so the caller that awaits the call resumes
before the stream consumer sees the call's update (LangGraph's own
`test_pregel_async.py::test_imp_exception`)."""

from __future__ import annotations

import asyncio
import importlib
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from .normalize import Normalizer, first_difference

LIBS = ("langgraph", "warpgraph")


def _workflow(name: str, aio: bool, saver: bool) -> Any:
    func = importlib.import_module(f"{name}.func")
    checkpointer = importlib.import_module(f"{name}.checkpoint.memory").InMemorySaver()
    if aio:

        @func.task()
        async def double(number: int) -> int:
            await asyncio.sleep(0.01)
            return number * 2

        @func.task()
        async def fails(number: int) -> int:
            await asyncio.sleep(0.01)
            raise ValueError(f"boom {number}")

        @func.entrypoint(checkpointer=checkpointer if saver else None)
        async def workflow(number: int) -> str:
            first = await double(number)
            try:
                await fails(first)
            except ValueError:
                pass
            second = await double(first)
            return f"done {second}"

        return workflow

    @func.task()
    def sdouble(number: int) -> int:
        return number * 2

    @func.task()
    def sfails(number: int) -> int:
        raise ValueError(f"boom {number}")

    @func.entrypoint(checkpointer=checkpointer if saver else None)
    def sworkflow(number: int) -> str:
        first = sdouble(number).result()
        try:
            sfails(first).result()
        except ValueError:
            pass
        second = sdouble(first).result()
        return f"done {second}"

    return sworkflow


def _simple(value: Any) -> Any:
    """Event data without exception objects (their identity differs per library)."""
    if isinstance(value, BaseException):
        return (type(value).__name__, str(value))
    if isinstance(value, dict):
        return {k: _simple(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_simple(v) for v in value)
    return value


async def _events(name: str, aio: bool, saver: bool) -> list:
    workflow = _workflow(name, aio, saver)
    config = {"configurable": {"thread_id": "1"}} if saver else None
    out: list = []
    for _ in range(2):  # (with a saver, the second run starts from the first's checkpoint)
        async for e in workflow.astream_events(3, config, version="v2"):
            out.append((e["event"], e["name"], _simple(e["data"])))
    return out


@pytest.mark.parametrize("saver", [True, False], ids=["saver", "nosaver"])
def test_astream_events_order_of_async_task_calls(saver: bool) -> None:
    got = {name: Normalizer()(asyncio.run(_events(name, True, saver))) for name in LIBS}
    diff = first_difference(got["langgraph"], got["warpgraph"])
    assert diff is None, diff
    names = [n for _, n, _ in got["warpgraph"]]
    # the entrypoint's output comes before the root's chunk of its last call's update
    last = max(i for i, n in enumerate(names) if n == "double")
    assert names[last + 1 : last + 3] == ["workflow", "LangGraph"]


def _by_run(events: list) -> dict[str, list]:
    out: dict[str, list] = {}
    for e in events:
        out.setdefault(e[1], []).append(e)
    return out


@pytest.mark.parametrize("saver", [True, False], ids=["saver", "nosaver"])
def test_astream_events_of_sync_task_calls(saver: bool) -> None:
    """A sync entrypoint runs on a worker thread: when it resumes after a call, relative to
    the root's chunk of that call, is a race between threads in LangGraph too, so each run's
    own events are compared (in order), not their interleaving."""
    got = {name: Normalizer()(asyncio.run(_events(name, False, saver))) for name in LIBS}
    diff = first_difference(_by_run(got["langgraph"]), _by_run(got["warpgraph"]))
    assert diff is None, diff
    assert sorted(got["langgraph"], key=repr) == sorted(got["warpgraph"], key=repr)


async def _chunks(name: str) -> list:
    workflow = _workflow(name, True, True)
    config = {"configurable": {"thread_id": "1"}}
    return [c async for c in workflow.astream(3, config, stream_mode=["updates", "values"])]


def test_astream_chunks_of_task_calls() -> None:
    got = {name: Normalizer()(asyncio.run(_chunks(name))) for name in LIBS}
    assert got["langgraph"] == got["warpgraph"]
    assert ("updates", {"double": 6}) in got["warpgraph"]
