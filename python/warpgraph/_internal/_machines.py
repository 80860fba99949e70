"""One driver for the sans-I/O machines behind sync/async API twins.

Several operations (`update_state`, the delta-channel hydration of a snapshot, the node
cache's reads and writes) are written once, as a generator (the *machine*) that yields
the I/O it needs (an *op*) and is sent each op's result. `route(op)` names the call that
performs an op: `(callable, args, kwargs, post)`, the callable being the sync method for
`run_sync` and the awaitable-returning one for `run_async` (the route decides, from what
it was built for); `post` (or None) maps the call's result before it is sent back.

Both twins run the same coroutine, `_pump`: `run_async` awaits it; `run_sync` runs it to
its end with one `send(None)`, which is exact because, with `aio=False`, nothing in it
awaits."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Generator
from typing import Any

__all__ = ("Route", "run_async", "run_sync")

Route = Callable[[Any], tuple[Callable[..., Any], tuple, dict | None, Callable | None]]


async def _pump(machine: Generator[Any, Any, Any], route: Route, aio: bool) -> Any:
    send = machine.send
    value: Any = None
    while True:
        try:
            op = send(value)
        except StopIteration as stop:
            return stop.value
        call, args, kwargs, post = route(op)
        value = call(*args, **kwargs) if kwargs else call(*args)
        if aio:
            value = await value
        if post is not None:
            value = post(value)


def run_sync(machine: Generator[Any, Any, Any], route: Route) -> Any:
    """Run `machine` to its end with sync calls; its return value."""
    coro = _pump(machine, route, False)
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("unreachable: with aio=False nothing in _pump awaits")  # pragma: no cover


def run_async(machine: Generator[Any, Any, Any], route: Route) -> Coroutine[Any, Any, Any]:
    """Run `machine` to its end awaiting each call (a coroutine: await it)."""
    return _pump(machine, route, True)
