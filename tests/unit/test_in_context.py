"""`_runnable._InContext`: a coroutine awaited with every step of it run in a context of its
own, in the awaiting task (what `await create_task(coro, context=ctx)` does for a node,
without a task per node)."""

from __future__ import annotations

import asyncio
import contextvars
import sys

import pytest
from warpgraph._internal._runnable import _InContext

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("wg_in_context", default="unset")


def _run(coro_fn):
    return asyncio.run(coro_fn())


def test_result_and_context_of_a_coroutine_that_never_suspends() -> None:
    async def node() -> str:
        before = VAR.get()
        VAR.set("inner")
        return before

    async def main() -> tuple:
        VAR.set("outer")
        ctx = contextvars.copy_context()
        got = await _InContext(node(), ctx)
        return got, VAR.get(), ctx[VAR]

    # the node sees the caller's value, its own set stays in its context
    assert _run(main) == ("outer", "outer", "inner")


def test_every_resumption_runs_in_the_context() -> None:
    seen: list = []

    async def node() -> int:
        VAR.set("inner")
        fut = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.001, fut.set_result, 5)
        for _ in range(3):
            await asyncio.sleep(0)  # (a bare yield)
            seen.append(VAR.get())
        got = await fut  # (a future the awaiting task waits on)
        seen.append(VAR.get())
        return got

    async def main() -> tuple:
        VAR.set("outer")
        got = await _InContext(node(), contextvars.copy_context())
        return got, VAR.get()

    assert _run(main) == (5, "outer")
    assert seen == ["inner"] * 4


def test_errors_reach_the_awaiting_task() -> None:
    async def node() -> None:
        await asyncio.sleep(0)
        raise KeyError("nope")

    async def main() -> None:
        await _InContext(node(), contextvars.copy_context())

    with pytest.raises(KeyError, match="nope"):
        _run(main)


def test_a_cancel_of_the_awaiting_task_reaches_the_coroutine() -> None:
    events: list = []

    async def node() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            events.append(("cancelled", VAR.get()))
            raise
        finally:
            events.append("finally")

    async def outer() -> None:
        ctx = contextvars.copy_context()
        ctx.run(VAR.set, "inner")
        await _InContext(node(), ctx)

    async def main() -> bool:
        task = asyncio.create_task(outer())
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return task.cancelled()
        return False

    assert _run(main) is True
    assert events == [("cancelled", "inner"), "finally"]


def test_a_caught_cancel_lets_the_coroutine_finish() -> None:
    async def node() -> str:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return "caught"
        return "slept"

    async def outer() -> str:
        return await _InContext(node(), contextvars.copy_context())

    async def main() -> str:
        task = asyncio.create_task(outer())
        await asyncio.sleep(0.01)
        task.cancel()
        return await task

    assert _run(main) == "caught"


def test_a_cancel_of_the_current_task_from_inside_the_coroutine() -> None:
    """What `asyncio.timeout()` does (3.11+): cancel the current task, which here is the
    awaiting one, and catch the cancellation inside."""

    async def node() -> str:
        task = asyncio.current_task()
        assert task is not None
        handle = asyncio.get_running_loop().call_later(0.01, task.cancel)
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            if sys.version_info >= (3, 11):
                task.uncancel()  # (as asyncio.timeout does)
            return "timed out"
        finally:
            handle.cancel()
        return "slept"

    async def main() -> tuple:
        got = await _InContext(node(), contextvars.copy_context())
        task = asyncio.current_task()
        cancelling = task.cancelling() if sys.version_info >= (3, 11) else 0  # type: ignore[union-attr]
        return got, cancelling

    assert _run(main) == ("timed out", 0)


def test_closing_the_awaiting_coroutine_closes_the_inner_one() -> None:
    events: list = []

    async def node() -> None:
        try:
            await asyncio.sleep(10)
        finally:
            events.append("inner closed")

    async def outer() -> None:
        await _InContext(node(), contextvars.copy_context())

    async def main() -> None:
        coro = outer()
        fut = coro.send(None)  # runs to the inner sleep's future
        assert isinstance(fut, asyncio.Future)
        coro.close()
        fut.cancel()

    _run(main)
    assert events == ["inner closed"]
