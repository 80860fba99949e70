"""Drivers for the sans-I/O machines behind sync/async twins.

`Stepping` does the send / throw / StopIteration bookkeeping of a generator that yields
work and takes back its outcome; a driver only performs the items, calling or awaiting
them (the run's drivers, `_settle`, the saver session's plan executors):

    steps = Stepping(plan)
    for item in steps:
        try:
            steps.value = perform(item)        # (the async driver: await aperform(item))
        except BaseException as e:
            steps.error = e
    return steps.result

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

__all__ = ("Route", "Stepping", "run_async", "run_sync")

Route = Callable[[Any], tuple[Callable[..., Any], tuple, dict | None, Callable | None]]


async def _pump(machine: Generator[Any, Any, Any], route: Route, aio: bool) -> Any:
    steps = Stepping(machine)
    for op in steps:
        call, args, kwargs, post = route(op)
        value = call(*args, **kwargs) if kwargs else call(*args)
        if aio:
            value = await value
        steps.value = value if post is None else post(value)
    return steps.result


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


class Stepping:
    """An iterator over the items of `gen`: each next item comes after sending `value` (the
    outcome of the last item) or throwing `error` into `gen`; both are cleared then.
    When `gen` returns, iteration stops and `result` is its return value; an error `gen`
    raises propagates from the iteration."""

    __slots__ = ("error", "gen", "result", "value")

    def __init__(self, gen: Generator[Any, Any, Any]) -> None:
        self.gen = gen
        self.value: Any = None
        self.error: BaseException | None = None
        self.result: Any = None

    def __iter__(self) -> Stepping:
        return self

    def __next__(self) -> Any:
        error = self.error
        try:
            if error is None:
                value, self.value = self.value, None
                return self.gen.send(value)
            self.error = None
            return self.gen.throw(error)
        except StopIteration as stop:
            self.result = stop.value
            raise StopIteration from None
