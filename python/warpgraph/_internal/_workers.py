"""A process-wide pool of persistent daemon worker threads.

Jobs are zero-argument callables pulled from one shared queue; no future is created per
job. A worker is started only when no idle one can take a new job (up to `MAX_WORKERS`);
workers live for the rest of the process (re-created in a forked child). Jobs must not raise.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from contextvars import copy_context
from queue import SimpleQueue
from typing import Any

__all__ = ("MAX_WORKERS", "WorkerPool", "get_pool", "run_in_worker")

logger = logging.getLogger(__name__)

MAX_WORKERS = int(os.environ.get("WARPGRAPH_MAX_WORKERS", "256"))
"""Upper bound on the pool's threads; callers always run their own step's leftover tasks,
so a saturated pool slows a step down but cannot deadlock it."""


class WorkerPool:
    """Daemon threads that run zero-argument jobs from a shared queue."""

    __slots__ = ("_idle", "_lock", "_max_workers", "_queue", "_queued", "_threads")

    def __init__(self, max_workers: int = MAX_WORKERS) -> None:
        if not isinstance(max_workers, int) or max_workers < 1:
            raise ValueError(f"max_workers must be a positive int, got {max_workers!r}")
        self._queue: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # workers waiting for a job
        self._queued = 0  # submitted jobs still wanted and not yet started (see `started`)
        self._max_workers = max_workers

    @property
    def num_threads(self) -> int:
        """Worker threads started so far."""
        return self._threads

    def submit(self, job: Callable[[], None]) -> None:
        """Queue `job`; start a worker when no idle one is left to take it. The submitter
        must later call `started(1)` once for it (when it starts or is no longer wanted)."""
        with self._lock:
            spawn = self._idle <= self._queued and self._threads < self._max_workers
            if spawn:
                self._threads += 1
                number = self._threads
            self._queued += 1
        if spawn:
            threading.Thread(
                target=self._work, name=f"warpgraph-worker-{number}", daemon=True
            ).start()
        self._queue.put(job)

    def submit_now(self, job: Callable[[], None]) -> bool:
        """Like `submit`, but only if a worker can take `job` at once (an idle one, or room
        for a new one); False, nothing queued, otherwise. For jobs that must not wait behind
        others (a live step its consumer is waiting on)."""
        with self._lock:
            if self._idle <= self._queued and self._threads >= self._max_workers:
                return False
        self.submit(job)
        return True

    def started(self, count: int) -> None:
        """`count` submitted jobs started or are no longer wanted (a job that finds nothing
        to do costs nothing, but must not make the pool grow)."""
        with self._lock:
            self._queued -= count

    def _work(self) -> None:
        get, lock = self._queue.get, self._lock
        while True:
            with lock:
                self._idle += 1
            job = get()
            with lock:
                self._idle -= 1
            try:
                job()
            except BaseException:  # a job must not raise; never let it kill the worker
                logger.exception("warpgraph worker job raised")
            del job


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> WorkerPool:
    """The process-wide pool (created on first use)."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = WorkerPool()
    return _pool


def _reset_after_fork() -> None:
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def _resolve(fut: asyncio.Future, ok: bool, box: list) -> None:
    value = box.pop()  # (the worker's box is empty from here on)
    if fut.cancelled():
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)


def run_in_worker(func: Callable[..., Any], *args: Any, **kwargs: Any) -> asyncio.Future:
    """An asyncio future for `func(*args, **kwargs)` run on the pool in a copy of the
    current context (like `loop.run_in_executor`, without a concurrent future)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    # (held in a list the job empties: once the awaiting coroutine resumes, this worker
    # thread keeps nothing of the call alive, not even until it takes its next job)
    held = [copy_context(), func, args, kwargs]

    def job() -> None:
        ctx, fn, a, kw = held
        held.clear()
        try:
            result, ok = ctx.run(fn, *a, **kw), True
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            result, ok = exc, False
        del ctx, fn, a, kw
        box = [result]
        del result
        try:
            loop.call_soon_threadsafe(_resolve, fut, ok, box)
        except RuntimeError:  # the loop was closed meanwhile; nobody is waiting
            pass

    pool = get_pool()

    def counted_job() -> None:
        pool.started(1)
        job()

    pool.submit(counted_job)
    return fut
