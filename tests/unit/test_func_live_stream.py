"""An entrypoint's stream hands each task call's chunk on when the call finishes, not when
the step ends (LangGraph's eager streaming), sync and async."""

import asyncio
import time

import pytest
from warpgraph.func import entrypoint, task
from warpgraph.pregel import _drive

# (the drivers' live steps, which hand chunks on while a step runs, are main's cf7a668)
pytestmark = pytest.mark.skipif(
    not hasattr(_drive, "_live_tick"), reason="needs the drivers' live steps"
)

DELAY = 0.05


@task
def slow() -> float:
    time.sleep(DELAY)
    return time.monotonic()


@task
async def aslow() -> float:
    await asyncio.sleep(DELAY)
    return time.monotonic()


@entrypoint()
def sync_graph(_: dict) -> list:
    return [slow().result(), slow().result()]


@entrypoint()
async def async_graph(_: dict) -> list:
    return [await aslow(), await aslow()]


def _gap(arrivals: list) -> float:
    assert len(arrivals) == 2
    return arrivals[1] - arrivals[0]


def test_sync_chunks_arrive_as_calls_finish() -> None:
    arrivals = [time.monotonic() for c in sync_graph.stream({}) if "slow" in c]
    assert _gap(arrivals) > DELAY * 0.8


async def test_async_chunks_arrive_as_calls_finish() -> None:
    arrivals = [time.monotonic() async for c in async_graph.astream({}) if "aslow" in c]
    assert _gap(arrivals) > DELAY * 0.8


def test_consumer_stopping_early_waits_for_the_step() -> None:
    stream = sync_graph.stream({})
    first = next(stream)
    assert "slow" in first
    stream.close()  # (the step's second call still ends before close returns)
