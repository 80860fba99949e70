"""Many inputs at once: `batch` / `abatch` (outputs in input order), `batch_as_completed` /
`abatch_as_completed` (`(index, output)` as runs finish) and `map()` (a runnable that
batches its list input), with langchain-core's Runnable semantics: one config for all
inputs or one per input, `max_concurrency` from the (first) config, sync runs on threads
that each start from a copy of the caller's context, `return_exceptions`.
"""

from __future__ import annotations

import asyncio
import contextvars
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from functools import partial
from typing import Any

from warpgraph.config import ensure_config

__all__ = ("BatchMixin", "config_list")


def config_list(config: Any, length: int) -> list[dict]:
    """One complete config per input: a sequence is taken item by item (same length as
    the inputs), a single config is copied (its `run_id` only for the first input)."""
    if length < 0:
        raise ValueError(f"length must be >= 0, but got {length}")
    if isinstance(config, Sequence):
        if len(config) != length:
            raise ValueError(
                f"config must be a list of the same length as inputs, "
                f"but got {len(config)} configs for {length} inputs"
            )
        return [ensure_config(c) for c in config]
    if length > 1 and isinstance(config, dict) and config.get("run_id") is not None:
        warnings.warn(
            "Provided run_id be used only for the first element of the batch.",
            category=RuntimeWarning,
            stacklevel=3,
        )
        rest = {k: v for k, v in config.items() if k != "run_id"}
        return [ensure_config(config if i == 0 else rest) for i in range(length)]
    return [ensure_config(config) for _ in range(length)]


def _guarded(call: Callable[..., Any], return_exceptions: bool) -> Callable[..., Any]:
    if not return_exceptions:
        return call

    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed back as that input's output
            return exc

    return run


def _aguarded(call: Callable[..., Any], return_exceptions: bool) -> Callable[..., Any]:
    async def run(*args: Any, **kwargs: Any) -> Any:
        if not return_exceptions:
            return await call(*args, **kwargs)
        try:
            return await call(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed back as that input's output
            return exc

    return run


def _pool(config: dict) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=config.get("max_concurrency"))


def _submit(pool: ThreadPoolExecutor, fn: Callable[..., Any], *args: Any) -> Future:
    """Run `fn` on the pool in a copy of the caller's context (task config, tracing)."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


class BatchMixin:
    """Batch methods of `Pregel` (built on its `invoke` / `ainvoke`)."""

    invoke: Callable[..., Any]
    ainvoke: Callable[..., Any]

    def batch(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Run each input; the outputs in input order (the first error is raised unless
        `return_exceptions`)."""
        if not inputs:
            return []
        configs = config_list(config, len(inputs))
        run = _guarded(partial(self.invoke, **kwargs), return_exceptions)
        if len(inputs) == 1:
            return [run(inputs[0], configs[0])]
        with _pool(configs[0]) as pool:
            futures = [_submit(pool, run, x, c) for x, c in zip(inputs, configs)]
            return [f.result() for f in futures]

    def batch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> Iterator[tuple[int, Any]]:
        """Run each input; yields `(index, output)` as the runs finish."""
        if not inputs:
            return
        configs = config_list(config, len(inputs))
        run = _guarded(self.invoke, return_exceptions)

        def indexed(i: int, value: Any, cfg: dict) -> tuple[int, Any]:
            return i, run(value, cfg, **kwargs)

        if len(inputs) == 1:
            yield indexed(0, inputs[0], configs[0])
            return
        with _pool(configs[0]) as pool:
            pending = {
                _submit(pool, indexed, i, x, c) for i, (x, c) in enumerate(zip(inputs, configs))
            }
            try:
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    while done:
                        yield done.pop().result()
            finally:
                for future in pending:
                    future.cancel()

    async def abatch(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Async twin of `batch` (runs gathered, at most `max_concurrency` at once)."""
        if not inputs:
            return []
        configs = config_list(config, len(inputs))
        run = _aguarded(self.ainvoke, return_exceptions)
        gate = _gate(configs[0])
        return list(
            await asyncio.gather(*(gate(run(x, c, **kwargs)) for x, c in zip(inputs, configs)))
        )

    async def abatch_as_completed(
        self,
        inputs: Sequence[Any],
        config: Any = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> AsyncIterator[tuple[int, Any]]:
        """Async twin of `batch_as_completed`."""
        if not inputs:
            return
        configs = config_list(config, len(inputs))
        run = _aguarded(self.ainvoke, return_exceptions)
        gate = _gate(configs[0])

        async def indexed(i: int, value: Any, cfg: dict) -> tuple[int, Any]:
            return i, await gate(run(value, cfg, **kwargs))

        runs = [indexed(i, x, c) for i, (x, c) in enumerate(zip(inputs, configs))]
        for finished in asyncio.as_completed(runs):
            yield await finished

    def map(self) -> Each:
        """A runnable taking a list of inputs and returning the list of their outputs."""
        return Each(self)


def _gate(config: dict) -> Callable[[Any], Any]:
    """Wraps awaitables so that at most `max_concurrency` run at once."""
    limit = config.get("max_concurrency")
    if not limit:

        async def free(awaitable: Any) -> Any:
            return await awaitable

        return free
    semaphore = asyncio.Semaphore(limit)

    async def gated(awaitable: Any) -> Any:
        async with semaphore:
            return await awaitable

    return gated


class Each:
    """`graph.map()`: runs the graph on every item of its list input (a batch)."""

    __slots__ = ("bound",)

    def __init__(self, bound: Any) -> None:
        self.bound = bound

    @property
    def name(self) -> str:
        return self.get_name()

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        name = name or f"RunnableEach<{self.bound.get_name()}>"
        return f"{name}{suffix}" if suffix else name

    def invoke(self, input: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        return self.bound.batch(list(input), ensure_config(config), **kwargs)

    async def ainvoke(self, input: Sequence[Any], config: Any = None, **kwargs: Any) -> list[Any]:
        return await self.bound.abatch(list(input), ensure_config(config), **kwargs)
