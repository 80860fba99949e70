"""Async streaming runs that hand chunks on while a step runs.

LangGraph's async stream waits for a step's tasks and for new stream chunks at once when
it streams subgraphs, "custom" or "messages" (or the graph streams eagerly): a chunk a node
(or a nested graph) emits reaches the consumer while the step still runs, and a consumer
that stops the stream there cancels the running tasks. Such runs get a `LiveOut` chunk queue
and the async driver runs their ticks through `tick_live`. The chunks and their order are
those the driver would hand on right after the tick anyway (these runs always drain after
a tick): only their timing changes. Other runs keep a plain deque and a plain await.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable
from typing import Any


class LiveOut(deque):
    """A run's chunk queue that wakes the async driver waiting for a chunk (from the loop's
    thread or, through the event loop, from a worker thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.waiter: asyncio.Future[None] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = 0

    def append(self, item: Any) -> None:
        super().append(item)
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if threading.get_ident() == self.thread:
                _wake(waiter)
            else:
                self.loop.call_soon_threadsafe(_wake, waiter)  # type: ignore[union-attr]


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def wants_live(stream_mode: Any, subgraphs: bool, eager: bool) -> bool:
    """LangGraph's condition for streaming while a step runs."""
    modes = (stream_mode,) if isinstance(stream_mode, str) else tuple(stream_mode or ())
    return subgraphs or eager or "custom" in modes or "messages" in modes


async def _then_wake(tick: Awaitable[None], out: LiveOut) -> None:
    """The tick, then a wake-up of the waiting driver from the task's own frame (one loop
    turn sooner than a done callback)."""
    try:
        await tick
    finally:
        waiter = out.waiter
        if waiter is not None:
            out.waiter = None
            _wake(waiter)


async def tick_live(out: LiveOut, tick: Awaitable[None]) -> AsyncIterator[tuple]:
    """Run `tick` as a task, yielding the chunks queued while it runs; stopping early
    (close or cancellation of the consumer) cancels the tick and waits for it."""
    loop = asyncio.get_running_loop()
    task = loop.create_task(_then_wake(tick, out))
    out.loop, out.thread = loop, threading.get_ident()
    try:
        while not task.done():
            if out:
                while out:
                    yield out.popleft()
                continue
            waiter = out.waiter = loop.create_future()
            if out:  # a worker thread's chunk came in before the waiter was set
                out.waiter = None
                continue
            try:
                await waiter
            finally:
                out.waiter = None
        task.result()  # the tick's error, if any
    finally:
        if not task.done():
            task.cancel()
            try:
                await task
            except BaseException:  # noqa: BLE001, S110 - the cancelled tick's outcome is moot
                pass
