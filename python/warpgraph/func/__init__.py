"""The functional API: `@entrypoint` turns a function into a graph, `@task` makes a function
run as a task of the running graph (each call a PUSH task of the current step; see
`pregel/_calls.py`).

An entrypoint graph has one node (the function, triggered by START) writing its return
value to END and the value to keep for the next run on the thread to PREVIOUS (`previous`
is injected from it); `entrypoint.final(value=, save=)` returns one and keeps the other.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_args, get_origin

from warpgraph._internal._constants import CACHE_NS_WRITES, CONF, CONFIG_KEY_CALL, PREVIOUS
from warpgraph._internal._deprecation import renamed_kwarg
from warpgraph._internal._flags import FAST_PATHS
from warpgraph._internal._runnable import is_async_callable
from warpgraph._internal._timeout import coerce_timeout_policy, sync_timeout_unsupported
from warpgraph.channels.ephemeral_value import EphemeralValue
from warpgraph.channels.last_value import LastValue
from warpgraph.config import get_config
from warpgraph.constants import END, START
from warpgraph.pregel._call import (
    Call,
    P,
    SyncAsyncFuture,
    T,
    _call_with_options,
    get_runnable_for_entrypoint,
    get_runnable_for_task,
    identifier,
)
from warpgraph.pregel._call_tasks import call_plans
from warpgraph.pregel._calls import CallHook
from warpgraph.pregel._read import PregelNode
from warpgraph.pregel._write import ChannelWrite, ChannelWriteEntry
from warpgraph.types import _DC_KWARGS, RetryPolicy
from warpgraph.warnings import LangGraphDeprecatedSinceV05 as V05
from warpgraph.warnings import LangGraphDeprecatedSinceV10 as V10

__all__ = ("entrypoint", "task")

R = TypeVar("R")
S = TypeVar("S")


def _renamed(func: Any, name: str) -> Any:
    """`func` under another `__name__` (a bound method is wrapped, so the method shared by
    the class keeps its own name)."""
    if hasattr(func, "__func__"):
        bound = functools.partial(func.__func__, func.__self__)
        bound.__name__ = name  # type: ignore[attr-defined]
        return bound
    func.__name__ = name
    return func


class _TaskFunction(Generic[P, T]):
    """A function decorated with `@task`: calling it (inside a graph task) schedules it as a
    task of the running step and returns a future of its value."""

    def __init__(
        self,
        func: Callable[P, Awaitable[T]] | Callable[P, T],
        *,
        retry_policy: Sequence[RetryPolicy],
        cache_policy: Any = None,
        timeout: Any = None,
        name: str | None = None,
    ) -> None:
        if name is not None:
            func = _renamed(func, name)
        self.func, self.timeout = func, timeout
        self.retry_policy, self.cache_policy = retry_policy, cache_policy
        functools.update_wrapper(self, func)
        self._prepared: tuple[Any, Any, bool] | None = None  # (after func's __dict__ copied)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> SyncAsyncFuture[T]:
        """Schedule the call as a task of the running step; a future of its result."""
        prepared = self._prepared
        if prepared is None:
            prepared = self._prepare()
        is_async = prepared[2]
        if self.timeout is not None and not is_async_callable(self.func):
            func = self.func
            raise sync_timeout_unsupported(
                getattr(func, "__name__", type(func).__name__), kind="Task"
            )
        config = get_config()
        hook = config[CONF][CONFIG_KEY_CALL]
        if type(hook) is not CallHook:  # (a hook put in the config by someone else)
            policies = {"retry_policy": self.retry_policy, "cache_policy": self.cache_policy}
            return _call_with_options(self.func, args, kwargs, timeout=self.timeout, **policies)
        call = Call(
            self.func,
            (args, kwargs),
            retry_policy=self.retry_policy,
            cache_policy=self.cache_policy,
            callbacks=config.get("callbacks"),
            timeout=self.timeout,
        )
        call.prepared = prepared[:2]
        return hook.submit(call, is_async, config)

    def _prepare(self) -> tuple[Any, Any, bool]:
        """(runnable, plans, is a coroutine function) of the function, kept for its calls
        (`plans`: `_call_tasks.call_plans`, None with WARPGRAPH_FAST_PATHS=0)."""
        proc = get_runnable_for_task(self.func)
        plans = call_plans(proc) if FAST_PATHS else None
        self._prepared = (proc, plans, inspect.iscoroutinefunction(self.func))
        return self._prepared

    def _cache_ns(self) -> tuple[str, str]:
        return (CACHE_NS_WRITES, identifier(self.func) or "__dynamic__")

    def clear_cache(self, cache: Any) -> None:
        """Drop this task's cached results from `cache`."""
        if self.cache_policy is not None:
            cache.clear((self._cache_ns(),))

    async def aclear_cache(self, cache: Any) -> None:
        """Async twin of `clear_cache`."""
        if self.cache_policy is not None:
            await cache.aclear((self._cache_ns(),))


def _policies(retry_policy: Any) -> Sequence[RetryPolicy]:
    if retry_policy is None:
        return ()
    if isinstance(retry_policy, RetryPolicy):
        return (retry_policy,)
    return retry_policy


def task(
    __func_or_none__: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: Any = None,
    cache_policy: Any = None,
    timeout: Any = None,
    **kwargs: Any,
) -> Any:
    """Make a function a task of the functional API (usable as `@task` or `@task(...)`).

    Called inside an entrypoint or a graph node, the function runs as a task of the current
    step and the call returns a future; with a checkpointer its result is saved, so a
    resumed run does not run it again. `retry_policy`, `cache_policy` and `timeout` (async
    functions only) apply to each call."""
    retry_policy = renamed_kwarg(kwargs, "retry", "retry_policy", V05, retry_policy)
    timeout_policy = coerce_timeout_policy(timeout)
    policies = _policies(retry_policy)

    def decorate(func: Callable[..., Any]) -> _TaskFunction:
        if timeout_policy is not None and not is_async_callable(func):
            label = name or getattr(func, "__name__", type(func).__name__)
            raise sync_timeout_unsupported(str(label), kind="Task")
        return _TaskFunction(
            func,
            retry_policy=policies,
            cache_policy=cache_policy,
            timeout=timeout_policy,
            name=name,
        )

    if __func_or_none__ is not None:
        return decorate(__func_or_none__)
    return decorate


def _return_of(value: Any) -> Any:
    return value.value if isinstance(value, entrypoint.final) else value


def _save_of(value: Any) -> Any:
    return value.save if isinstance(value, entrypoint.final) else value


class entrypoint(Generic[R]):
    """Decorator making a function a workflow graph (a `Pregel` with one node).

    The function takes one input argument; it may also ask for `config`, `previous` (what
    the last run on the thread returned or saved; needs a checkpointer), `runtime`,
    `store`, `writer`. Arguments configure the graph: `checkpointer`, `store`, `cache`,
    `context_schema`, `cache_policy`, `retry_policy`, `timeout` (async functions only)."""

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: Any = None,
        cache_policy: Any = None,
        retry_policy: Any = None,
        timeout: Any = None,
        **kwargs: Any,
    ) -> None:
        context_schema = renamed_kwarg(
            kwargs, "config_schema", "context_schema", V10, context_schema
        )
        retry_policy = renamed_kwarg(kwargs, "retry", "retry_policy", V05, retry_policy)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.cache_policy = cache_policy
        self.retry_policy = retry_policy
        self.timeout = coerce_timeout_policy(timeout)
        self.context_schema = context_schema

    @dataclass(**_DC_KWARGS)
    class final(Generic[R, S]):
        """Returned by an entrypoint: `value` is the run's output, `save` what the next run
        on the thread gets as `previous` (both kept even when None)."""

        value: R
        save: S

    def __call__(self, func: Callable[..., Any]) -> Any:
        """The graph running `func` (sync or async; generators are not supported)."""
        from warpgraph.pregel import Pregel

        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        bound = get_runnable_for_entrypoint(func)
        sig = inspect.signature(func)
        first = next(iter(sig.parameters), None)
        if not first:
            raise ValueError("Entrypoint function must have at least one parameter")
        ann = sig.parameters[first].annotation
        input_type = Any if ann is inspect.Signature.empty else ann
        output_type, save_type = self._result_types(sig.return_annotation)
        # one node: reads the input, writes the returned value to END and what it saves
        # (`entrypoint.final(save=...)`, else the value) to PREVIOUS for the next run
        split = ChannelWrite(
            [
                ChannelWriteEntry(END, mapper=_return_of),
                ChannelWriteEntry(PREVIOUS, mapper=_save_of),
            ]
        )
        node = PregelNode(
            channels=START, triggers=[START], bound=bound, writers=[split], timeout=self.timeout
        )
        channels = {
            START: EphemeralValue(input_type),
            PREVIOUS: LastValue(save_type, PREVIOUS),
            END: LastValue(output_type, END),
        }
        options = {
            "checkpointer": self.checkpointer,
            "store": self.store,
            "cache": self.cache,
            "cache_policy": self.cache_policy,
            "retry_policy": self.retry_policy or (),
            "context_schema": self.context_schema,
        }
        graph = Pregel(
            nodes={func.__name__: node},
            channels=channels,
            input_channels=START,
            output_channels=END,
            stream_channels=END,
            stream_eager=True,  # task calls' chunks go out as the calls finish
            stream_mode="updates",
            **options,
        )
        return _with_allowlist(graph, [input_type, output_type, save_type, self.context_schema])

    @staticmethod
    def _result_types(ret: Any) -> tuple[Any, Any]:
        """(output type, saved type) from the return annotation (`final[R, S]` splits)."""
        if ret is inspect.Signature.empty or ret is entrypoint.final:
            return Any, Any
        if get_origin(ret) is entrypoint.final:
            args = get_args(ret)
            if len(args) != 2:
                raise TypeError(
                    "Please an annotation for both the return_ and "
                    "the save values."
                    "For example, `-> entrypoint.final[int, str]` would assign a "
                    "return_ a type of `int` and save the type `str`."
                )
            return args[0], args[1]
        return ret, ret


def _with_allowlist(graph: Any, schemas: list[Any]) -> Any:
    """Let the graph's checkpointer decode the user types its schemas name."""
    saver = graph.checkpointer
    if saver in (None, True, False) or not hasattr(saver, "with_allowlist"):
        return graph
    from warpgraph.checkpoint.serde.allowlist import collect_allowlist

    found = collect_allowlist(
        schemas=[s for s in schemas if s is not None], channels=graph.channels
    )
    allowlist = {(cls.__module__, cls.__name__) for cls in found}
    if allowlist:
        graph.checkpointer = saver.with_allowlist(allowlist)
    return graph
