"""Running the tasks of one super-step concurrently.

`PregelRunner.tick` runs sync work: a single task inline, several on the persistent worker
pool with the calling thread taking tasks too (no future per task; a latch releases the
caller when the last task is settled). `atick` runs each task as an asyncio task on the
running loop (sync functions reach worker threads through their async twin). Both share
`_Step`, which reports every settled task to `on_done`, stops starting tasks after a
failure, and decides what the step raises.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from contextvars import copy_context
from typing import Any

from warpgraph._internal._workers import get_pool
from warpgraph.errors import GraphBubbleUp, GraphInterrupt, is_invalid_resume
from warpgraph.pregel._calls import STEP_LOCK
from warpgraph.pregel._retry import arun_with_retry, run_with_retry

__all__ = ("DEFAULT_MAX_CONCURRENCY", "PregelRunner")

OnDone = Callable[[Any, "BaseException | None"], None]

DEFAULT_MAX_CONCURRENCY = min(32, (os.cpu_count() or 1) + 4)
"""Sync tasks running at once when no max_concurrency is set (LangGraph's thread-pool size)."""


class _Step:
    """Bookkeeping of one super-step: report settled tasks, decide stop and outcome."""

    __slots__ = ("bubbles", "errors", "interrupts", "lock", "on_done", "order", "stop")

    def __init__(self, tasks: Sequence[Any], on_done: OnDone) -> None:
        self.on_done = on_done
        self.lock = threading.Lock()  # serialises on_done calls
        self.stop = False  # set by a failure: start no more tasks
        self.errors: list[BaseException] = []  # failures, in completion order
        self.bubbles: list[BaseException] = []  # GraphBubbleUp other than interrupts
        self.interrupts: list[tuple[int, GraphInterrupt]] = []
        self.order = {id(t): i for i, t in enumerate(tasks)} if len(tasks) > 1 else None

    def finish(self, task: Any, exc: BaseException | None, cancelled: bool = False) -> Any:
        """Record the end of `task` (exc None = success) and report it to on_done. Returns
        the error handler's task when on_done routed the failure to one (then the failure
        is not the step's)."""
        with self.lock:
            cb_exc = None
            try:
                handler = self.on_done(task, exc)
            except BaseException as e:  # noqa: BLE001 - raised after the step
                cb_exc, handler = e, None
            if exc is not None and not cancelled:
                if handler is not None:
                    pass
                elif isinstance(exc, GraphInterrupt):
                    index = self.order.get(id(task), len(self.order)) if self.order else 0
                    self.interrupts.append((index, exc))
                elif isinstance(exc, GraphBubbleUp):
                    self.bubbles.append(exc)
                else:
                    self.errors.append(exc)
                    if not is_invalid_resume(exc):
                        self.stop = True
            if cb_exc is not None:
                self.errors.append(cb_exc)
                self.stop = True
            return handler if exc is not None and not cancelled else None

    def raise_outcome(self) -> None:
        """Raise the first error to complete; else the first other bubble-up (e.g.
        ParentCommand); else one GraphInterrupt with every interrupt, in task order."""
        if self.errors:
            raise self.errors[0]
        if self.bubbles:
            raise self.bubbles[0]
        if self.interrupts:
            self.interrupts.sort(key=lambda pair: pair[0])
            raise GraphInterrupt(tuple(i for _, exc in self.interrupts for i in exc.args[0]))

    def raise_timeout(self, error: type[BaseException]) -> None:
        """The step ran out of time: raise `error` unless a task's outcome is to be raised
        (`raise_outcome`)."""
        if not self.errors and not self.bubbles and not self.interrupts:
            raise error("Timed out")


class _OnlyTask:
    """A step's only task, run in the calling thread or task: iterating gives the task, then, each time a run
    fails and `on_done` routes the failure to the node's error handler (`routed`), the
    handler's task; a run that did not fail is reported to `on_done` as the iteration
    ends."""

    __slots__ = ("on_done", "ran", "task")

    def __init__(self, task: Any, on_done: OnDone) -> None:
        self.task, self.on_done, self.ran = task, on_done, None

    def __iter__(self) -> _OnlyTask:
        return self

    def __next__(self) -> Any:
        task = self.task
        if task is None:
            if self.ran is not None:  # it succeeded
                self.on_done(self.ran, None)
            raise StopIteration
        self.ran, self.task = task, None
        return task

    def routed(self, exc: BaseException) -> bool:
        """The current run failed with `exc`: report it; whether the failure was routed to
        an error handler (whose task runs next) rather than to be raised."""
        task, self.ran = self.ran, None
        self.task = self.on_done(task, exc)
        return self.task is not None


class _Batch(_Step):
    """A sync step spread over the worker pool; `work` is the job of every participant."""

    __slots__ = (
        "cap",
        "claim",
        "ctx",
        "helpers",
        "latch",
        "next",
        "policy",
        "remaining",
        "tasks",
        "waiting",
    )

    def __init__(
        self,
        tasks: Sequence[Any],
        on_done: OnDone,
        policy: Sequence[Any] | None,
        helpers: int,
    ) -> None:
        super().__init__(tasks, on_done)
        self.tasks = tasks
        self.policy = policy
        self.ctx = copy_context()
        self.ctx.run(STEP_LOCK.set, self.lock)  # (task calls report under it: _calls.py)
        self.helpers = helpers  # pool jobs still allowed to join
        # tasks that start even after a failure: those LangGraph's executor would have
        # started at once (one per participant), the rest are reported cancelled
        self.cap = helpers + 1
        self.waiting = 0  # pool jobs submitted and not started yet
        self.next = 0
        self.remaining = len(tasks)
        self.claim = threading.Lock()
        self.latch = threading.Lock()
        self.latch.acquire()  # released by whoever settles the last task

    def work(self) -> None:
        """Claim and run tasks until none is left; after a failure settle the rest as
        cancelled. A participant that claims a task while others are left first asks the
        pool for one more participant (so helpers join one by one, only while useful).
        Whoever settles the last task releases the latch."""
        tasks, claim, n, pool = self.tasks, self.claim, len(self.tasks), get_pool()
        while True:
            with claim:
                if self.next >= n or (self.stop and self.next >= self.cap):
                    unwanted, self.waiting = self.waiting, 0
                    if self.stop:
                        break
                    if unwanted:
                        pool.started(unwanted)
                    return
                wake = not self.stop and self.next + 1 < n and self.helpers > 0
                if wake:
                    self.helpers -= 1
                    self.waiting += 1
                else:
                    task = tasks[self.next]
                    self.next += 1
            if wake:
                # wake the helper before claiming: starting a thread hands it the GIL, and
                # it takes the next task at once; claiming after keeps tasks starting in
                # their order (LangGraph's executor starts them as submitted)
                pool.submit(self._helper)
                with claim:
                    if self.next >= n or (self.stop and self.next >= self.cap):
                        continue
                    task = tasks[self.next]
                    self.next += 1
            while True:
                try:
                    self.ctx.copy().run(run_with_retry, task, self.policy)
                    exc = None
                except BaseException as e:  # noqa: BLE001 - reported, then raised by the caller
                    exc = e
                # a failure routed to its error handler: the handler runs now, here (even
                # if another task failed meanwhile: a later run would run it anyway)
                task = self.finish(task, exc)
                if task is None:
                    break
            self._settle(1)
        if unwanted:
            pool.started(unwanted)
        self.cancel_rest()

    def _helper(self) -> None:
        with self.claim:
            counted = self.waiting > 0
            if counted:
                self.waiting -= 1
        if counted:
            get_pool().started(1)
        self.work()

    def cancel_rest(self) -> None:
        """Start no more tasks; settle those nobody started as cancelled."""
        with self.claim:
            self.stop = True
            self.cap = 0
            unclaimed = self.tasks[self.next :]
            self.next = len(self.tasks)
        if unclaimed:
            for task in unclaimed:
                self.finish(task, concurrent.futures.CancelledError(), cancelled=True)
            self._settle(len(unclaimed))

    def _settle(self, count: int) -> None:
        with self.claim:
            self.remaining -= count
            last = self.remaining == 0
        if last:
            self.latch.release()


class PregelRunner:
    """Runs the tasks of a super-step; see the module docstring."""

    __slots__ = ("max_concurrency", "retry_policy")

    def __init__(
        self,
        *,
        max_concurrency: int | None = None,
        retry_policy: Sequence[Any] | None = None,
    ) -> None:
        if max_concurrency is not None and (
            not isinstance(max_concurrency, int)
            or isinstance(max_concurrency, bool)
            or max_concurrency < 1
        ):
            raise ValueError(
                f"max_concurrency must be a positive int or None, got {max_concurrency!r}"
            )
        self.max_concurrency = max_concurrency
        self.retry_policy = tuple(retry_policy) if retry_policy else None

    def _todo(self, tasks: Iterable[Any]) -> list[Any] | None:
        """The tasks to run: those without writes."""
        if type(tasks) is list and len(tasks) == 1:
            return tasks if not tasks[0].writes else None
        return [t for t in tasks if not t.writes]

    def tick(
        self,
        tasks: Iterable[Any],
        *,
        on_done: OnDone,
        retry_policy: Sequence[Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        """Run `tasks` (those without writes) to completion; see the module docstring.
        `timeout`: seconds for the whole step; TimeoutError when exceeded (running tasks
        are waited for, tasks not started are reported cancelled)."""
        todo = self._todo(tasks)
        if not todo:
            return
        policy = retry_policy if retry_policy is not None else self.retry_policy
        if len(todo) == 1 and timeout is None:
            only = _OnlyTask(todo[0], on_done)
            for task in only:
                try:
                    copy_context().run(run_with_retry, task, policy)
                except Exception as exc:
                    if not only.routed(exc):
                        raise
            return
        batch = _Batch(todo, on_done, policy, _limit(self.max_concurrency, todo) - 1)
        if timeout is None:  # the caller is one of the `limit` participants
            batch.work()
            batch.latch.acquire()
        else:  # the caller only waits, so that it can give up in time
            batch.waiting = 1
            get_pool().submit(batch._helper)
            if not batch.latch.acquire(timeout=max(0.0, timeout)):
                batch.cancel_rest()
                batch.latch.acquire()  # tasks already running cannot be interrupted
                batch.raise_timeout(TimeoutError)
        batch.raise_outcome()

    async def atick(
        self,
        tasks: Iterable[Any],
        *,
        on_done: OnDone,
        retry_policy: Sequence[Any] | None = None,
        timeout: float | None = None,
    ) -> None:
        """Async twin of `tick`: tasks run as asyncio tasks; after a failure the other
        running tasks are cancelled (reported to on_done with CancelledError)."""
        todo = self._todo(tasks)
        if not todo:
            return
        policy = retry_policy if retry_policy is not None else self.retry_policy
        if len(todo) == 1 and timeout is None:  # run inline, in this task
            only = _OnlyTask(todo[0], on_done)
            for task in only:
                try:
                    await arun_with_retry(task, policy)
                except Exception as exc:
                    if not only.routed(exc):
                        raise
            return
        step = _Step(todo, on_done)
        limit = _limit(self.max_concurrency, todo, None)
        sem = asyncio.Semaphore(limit) if limit else None
        futures: list[asyncio.Task] = []
        loop = asyncio.get_running_loop()

        handlers: set[asyncio.Task] = set()

        def start(task: Any) -> asyncio.Task:
            fut = loop.create_task(_gated(sem, task, policy), name=task.name)
            fut.add_done_callback(lambda f, t=task: settled(t, f))
            futures.append(fut)
            return fut

        def settled(task: Any, fut: asyncio.Task) -> None:
            if fut.cancelled():
                step.finish(task, asyncio.CancelledError(), cancelled=True)
                return
            exc = fut.exception()
            handler = step.finish(task, exc, cancelled=isinstance(exc, asyncio.CancelledError))
            if handler is not None:
                # routed to its error handler, which runs now (even after another failure:
                # a later run would run it anyway)
                handlers.add(start(handler))
            if step.stop:
                for other in futures:
                    if other not in handlers:
                        other.cancel()

        for task in todo:
            start(task)
        deadline = None if timeout is None else loop.time() + timeout
        pending: set = set()
        try:
            while True:  # (handler tasks may join while the others run)
                running = [f for f in futures if not f.done()]
                if not running:
                    break
                left = None if deadline is None else max(0.0, deadline - loop.time())
                _, pending = await asyncio.wait(running, timeout=left)
                if pending:
                    break
        except asyncio.CancelledError:
            for fut in futures:
                fut.cancel()
            await asyncio.wait(futures)
            raise
        if pending:
            for fut in pending:
                fut.cancel()
            await asyncio.wait(pending)
            step.raise_timeout(asyncio.TimeoutError)
        step.raise_outcome()


def _limit(
    own: int | None, tasks: Sequence[Any], default: int | None = DEFAULT_MAX_CONCURRENCY
) -> Any:
    """The runner's max_concurrency, else the run config's (`max_concurrency` in the tasks'
    config, like LangGraph's executor), else `default`."""
    if own:
        return own
    config = tasks[0].config
    value = config.get("max_concurrency") if config else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


async def _gated(sem: asyncio.Semaphore | None, task: Any, policy: Any) -> None:
    if sem is None:
        await arun_with_retry(task, policy)
    else:
        async with sem:
            await arun_with_retry(task, policy)
