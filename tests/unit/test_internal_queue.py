"""`_internal._queue`: queues that can be waited on without taking an item."""

from __future__ import annotations

import asyncio
import queue
import threading

import pytest
from warpgraph._internal._queue import AsyncQueue, Semaphore, SyncQueue


async def test_async_queue_wait_returns_once_an_item_is_there_and_leaves_it():
    q: AsyncQueue = AsyncQueue()
    waiter = asyncio.ensure_future(q.wait())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.put_nowait("x")
    await asyncio.wait_for(waiter, 1)
    assert q.qsize() == 1 and q.get_nowait() == "x"


async def test_async_queue_wait_cancelled_leaves_the_queue_usable():
    q: AsyncQueue = AsyncQueue()
    waiter = asyncio.ensure_future(q.wait())
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    getter = asyncio.ensure_future(q.get())
    q.put_nowait(1)
    assert await asyncio.wait_for(getter, 1) == 1


def test_sync_queue_fifo_wait_and_empty():
    q = SyncQueue()
    assert q.empty() and not q.wait(block=False) and not q.wait(timeout=0.01)
    with pytest.raises(queue.Empty):
        q.get()
    threading.Timer(0.05, q.put, args=("a",)).start()
    assert q.wait(timeout=5)
    q.put("b")
    assert q.qsize() == 2 and [q.get(), q.get(block=True, timeout=1)] == ["a", "b"]
    with pytest.raises(queue.Empty):
        q.get(block=True, timeout=0.01)


def test_semaphore_wait_does_not_keep_the_permit():
    s = Semaphore(1)
    assert s.wait() and s.acquire(blocking=False)
    assert not s.wait(timeout=0.01)
    s.release()
    assert s.wait(blocking=False)
