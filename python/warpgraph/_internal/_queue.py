"""Queues that can be waited on without taking an item (LangGraph's `_internal._queue`
names): `AsyncQueue` for asyncio, `SyncQueue` for threads, and a `Semaphore` whose `wait`
blocks until a permit is free without keeping it."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from typing import Any

__all__ = ("AsyncQueue", "Semaphore", "SyncQueue")


class AsyncQueue(asyncio.Queue):
    """An asyncio.Queue whose `wait()` returns once an item is there (the item stays)."""

    async def wait(self) -> None:
        while self.empty():
            getter = asyncio.get_running_loop().create_future()
            self._getters.append(getter)  # woken by put_nowait like a pending get
            try:
                await getter
            except BaseException:
                getter.cancel()
                try:
                    self._getters.remove(getter)
                except ValueError:
                    pass
                if not self.empty() and not getter.cancelled():
                    self._wakeup_next(self._getters)
                raise


class Semaphore(threading.Semaphore):
    """A semaphore whose `wait()` blocks until a permit is free, then gives it back."""

    def wait(self, blocking: bool = True, timeout: float | None = None) -> bool:
        if not self.acquire(blocking, timeout):
            return False
        self.release()
        return True


class SyncQueue:
    """An unbounded thread-safe FIFO with `wait()` (an item is there, not taken)."""

    def __init__(self) -> None:
        self._items: deque = deque()
        self._ready = threading.Condition()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        """Add `item` (never blocks: the queue is unbounded; the arguments are queue.Queue's)."""
        with self._ready:
            self._items.append(item)
            self._ready.notify()

    def get(self, block: bool = False, timeout: float | None = None) -> Any:
        """Take the oldest item; queue.Empty when there is none (after `timeout` if blocking)."""
        with self._ready:
            if block and not self._ready.wait_for(lambda: self._items, timeout):
                raise queue.Empty
            if not self._items:
                raise queue.Empty
            return self._items.popleft()

    def wait(self, block: bool = True, timeout: float | None = None) -> bool:
        """Whether an item is there (waiting up to `timeout` for one if `block`)."""
        with self._ready:
            if block:
                return bool(self._ready.wait_for(lambda: self._items, timeout))
            return bool(self._items)

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)
