"""Handing a step's chunks on while its tasks run (eager streams of the functional API).

An entrypoint's stream is eager (LangGraph's `stream_eager`): the chunks of the task calls
a step makes reach the consumer as the calls finish, not when the step ends. The drivers
then run the step's tick concurrently with the consumer (sync: on a worker thread; async:
as an asyncio task) and hand on what the loop queued every few milliseconds. The order of
chunks is the queue's, as when they are handed on after the tick.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextvars import copy_context
from typing import Any

__all__ = ("alive_tick", "live", "live_tick")

POLL = 0.002
"""Seconds between two looks at the queue while a step runs."""


def live(loop: Any, out: deque | None) -> bool:
    """Whether this run's steps hand chunks on while they run."""
    return out is not None and loop.stream is not None and loop.graph.stream_eager is True


def live_tick(runner: Any, tasks: list, on_done: Any, timeout: Any, out: deque) -> Iterator:
    """`runner.tick` on a worker thread; yields the queued chunks meanwhile (then raises
    what the tick raised)."""
    from warpgraph.pregel._executor import get_pool

    failed: list[BaseException] = []
    finished = threading.Event()
    ctx = copy_context()
    pool = get_pool()

    def job() -> None:
        pool.started(1)
        try:
            ctx.run(runner.tick, tasks, on_done=on_done, timeout=timeout)
        except BaseException as e:  # noqa: BLE001 - raised by the consumer's thread
            failed.append(e)
        finally:
            finished.set()

    pool.submit(job)
    try:
        while not finished.wait(POLL):
            while out:
                yield out.popleft()
    except GeneratorExit:  # the consumer stopped: the step still ends before the run does
        finished.wait()
        raise
    while out:
        yield out.popleft()
    if failed:
        raise failed[0]


async def alive_tick(
    loop: Any, runner: Any, tasks: list, on_done: Any, timeout: Any, out: deque
) -> AsyncIterator:
    """Async twin of `live_tick`: `runner.atick` as an asyncio task; the loop's own chunks
    wake the consumer at once (others, e.g. `custom` ones, within `POLL`)."""
    aio = asyncio.get_running_loop()
    woken = asyncio.Event()
    stream = loop.stream
    put = stream.put

    def put_and_wake(chunk: tuple) -> None:
        put(chunk)
        if asyncio._get_running_loop() is aio:
            woken.set()
        else:
            aio.call_soon_threadsafe(woken.set)

    stream.put = put_and_wake
    tick = asyncio.ensure_future(runner.atick(tasks, on_done=on_done, timeout=timeout))
    try:
        while True:
            waker = asyncio.ensure_future(woken.wait())
            await asyncio.wait((tick, waker), timeout=POLL, return_when=asyncio.FIRST_COMPLETED)
            waker.cancel()
            woken.clear()  # (before the queue is read: a chunk put from now on wakes again)
            while out:
                yield out.popleft()
            if tick.done():
                break
    except BaseException:
        if not tick.done():
            tick.cancel()
            await asyncio.wait((tick,))
        raise
    finally:
        stream.put = put
    tick.result()
