"""Stepping through a generator that yields work and takes back its outcome.

The run's sync and async paths write each operation once, as a generator: it yields what
is to be done (a saver call, a wait, a step's tasks, a chunk) and is sent the result, or
has the error thrown in. A driver only performs the items, calling or awaiting them:

    steps = Stepping(plan)
    for item in steps:
        try:
            steps.value = perform(item)        # (the async driver: await aperform(item))
        except BaseException as e:
            steps.error = e
    return steps.result

so the send / throw / StopIteration bookkeeping is written here once for both drivers.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

__all__ = ("Stepping",)


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
