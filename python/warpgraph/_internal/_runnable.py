"""Calling user functions: `RunnableCallable`, `RunnableSeq`, `coerce_to_runnable`.

Parameters named `config`, `writer`, `store`, `previous`, `runtime` and `error` are injected
like LangGraph does; which ones a function accepts is decided once, from its signature, when
the wrapper is built. The per-call path is kept minimal (a plain `func(input)` when nothing is
injected).
"""

from __future__ import annotations

import collections.abc
import contextvars
import inspect
import sys
import types
import typing
import warnings
from collections.abc import Awaitable, Callable
from functools import partial, wraps
from typing import Any, Union

from warpgraph._internal import _lc
from warpgraph._internal._constants import CONF, CONFIG_KEY_NODE_ERROR, CONFIG_KEY_RUNTIME
from warpgraph._internal._lc import _add as _add_chunks
from warpgraph._internal._typing import MISSING
from warpgraph._internal._workers import run_in_worker
from warpgraph.config import (
    _CONFIG,
    RunnableConfig,
    ensure_config,
    reset_config_var,
    set_config_var,
)

__all__ = (
    "RunnableCallable",
    "RunnableLike",
    "RunnableSeq",
    "coerce_to_runnable",
    "is_async_callable",
    "run_in_executor",
)

_EMPTY = inspect.Parameter.empty
_VALID_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_NONE_TYPE = type(None)
_STREAM_WRITER_TYPES = (
    collections.abc.Callable[[Any], None],
    typing.Callable[[Any], None],
)

# how an injected value is found: from the config, the runtime, or the configurable
_FROM_CONFIG, _FROM_RUNTIME, _RUNTIME_ATTR, _FROM_ERROR = 0, 1, 2, 3


def _no_op_writer(_: Any) -> None:
    return None


def _named(ann: Any, name: str, modules: tuple[str, ...]) -> bool:
    """`ann` is the class `name` defined in one of `modules` (matched by name, no import)."""
    return getattr(ann, "__name__", None) == name and getattr(ann, "__module__", "").startswith(
        modules
    )


def _optional_of(ann: Any) -> Any:
    """X for Optional[X] / X | None, else MISSING."""
    if typing.get_origin(ann) in (Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not _NONE_TYPE]
        if len(args) == 1 and len(typing.get_args(ann)) == 2:
            return args[0]
    return MISSING


_CONFIG_MODULES = ("warpgraph", "langchain_core", "langgraph")
_STORE_MODULES = ("langgraph.store", "warpgraph")


def _is_config_type(ann: Any) -> bool:
    return ann is RunnableConfig or _named(ann, "RunnableConfig", _CONFIG_MODULES)


def _is_store_type(ann: Any) -> bool:
    return _named(ann, "BaseStore", _STORE_MODULES)


def _injection(kw: str, ann: Any) -> tuple[int, str, Any] | None:
    """(source, runtime attribute, default) for an injectable parameter, or None to skip."""
    if kw == "config":
        opt = _optional_of(ann)
        if (
            ann is _EMPTY
            or ann in ("RunnableConfig", "Optional[RunnableConfig]")
            or _is_config_type(ann)
            or (opt is not MISSING and _is_config_type(opt))
        ):
            return (_FROM_CONFIG, "N/A", _EMPTY)
        warnings.warn(
            f"The 'config' parameter should be typed as 'RunnableConfig' or "
            f"'RunnableConfig | None', not '{ann}'. ",
            UserWarning,
            stacklevel=5,
        )
        return None
    if kw == "writer":
        if ann is _EMPTY or ann == "StreamWriter" or ann in _STREAM_WRITER_TYPES:
            return (_RUNTIME_ATTR, "stream_writer", _no_op_writer)
        return None
    if kw == "store":
        if ann is _EMPTY or ann == "BaseStore" or _is_store_type(ann):
            return (_RUNTIME_ATTR, "store", _EMPTY)
        opt = _optional_of(ann)
        if ann == "Optional[BaseStore]" or (opt is not MISSING and _is_store_type(opt)):
            return (_RUNTIME_ATTR, "store", None)
        return None
    if kw == "previous":
        return (_RUNTIME_ATTR, "previous", _EMPTY)
    if kw == "runtime":
        return (_FROM_RUNTIME, "N/A", _EMPTY)
    if kw == "error":
        if ann == "NodeError" or _named(ann, "NodeError", ("warpgraph", "langgraph")):
            return (_FROM_ERROR, "N/A", None)
        return None
    return None


_INJECTABLE = ("config", "writer", "store", "previous", "runtime", "error")


def _accepted_kwargs(func: Callable[..., Any]) -> tuple[tuple[str, int, str, Any], ...]:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return ()
    out = []
    for kw in _INJECTABLE:
        p = params.get(kw)
        if p is None or p.kind not in _VALID_KINDS:
            continue
        if (spec := _injection(kw, p.annotation)) is not None:
            out.append((kw, *spec))
    return tuple(out)


_RUNNABLE_TYPES: dict[type, bool] = {}


def _is_runnable(obj: Any) -> bool:
    """An instance (not a class) whose type has an `invoke` method (cached per type)."""
    cls = type(obj)
    known = _RUNNABLE_TYPES.get(cls)
    if known is None:
        known = not issubclass(cls, type) and callable(getattr(cls, "invoke", None))
        if len(_RUNNABLE_TYPES) < 4096:
            _RUNNABLE_TYPES[cls] = known
    return known


@_lc.runnable_face
class RunnableCallable:
    """Wraps a sync function and/or an async function as a runnable node step."""

    __slots__ = (
        "_inject",
        "_plain",
        "afunc",
        "explode_args",
        "func",
        "func_accepts",
        "kwargs",
        "name",
        "recurse",
        "tags",
        "trace",
    )

    def __init__(
        self,
        func: Callable[..., Any] | None,
        afunc: Callable[..., Awaitable[Any]] | None = None,
        *,
        name: str | None = None,
        tags: Any = None,
        trace: bool = True,
        recurse: bool = True,
        explode_args: bool = False,
        **kwargs: Any,
    ) -> None:
        if func is None and afunc is None:
            raise ValueError("At least one of func or afunc must be provided.")
        if func is not None and not callable(func):
            raise TypeError(f"RunnableCallable func must be callable, got {type(func)}")
        if afunc is not None and not callable(afunc):
            raise TypeError(f"RunnableCallable afunc must be callable, got {type(afunc)}")
        if name is None:
            fn_name = getattr(func if func is not None else afunc, "__name__", None)
            name = fn_name if fn_name != "<lambda>" else None
        self.name = name
        self.func = func
        self.afunc = afunc
        self.tags = tags
        self.kwargs = kwargs
        self.trace = trace
        self.recurse = recurse
        self.explode_args = explode_args
        self._inject = _accepted_kwargs(func if func is not None else afunc)  # type: ignore[arg-type]
        self.func_accepts = {kw: (attr, default) for kw, _, attr, default in self._inject}
        self._plain = not self._inject and not kwargs and not explode_args

    @property
    def is_async(self) -> bool:
        """Only an async function is available."""
        return self.func is None

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        name = name or self.name or type(self).__name__
        return f"{name}{suffix}" if suffix else name

    def __repr__(self) -> str:
        return f"{self.get_name()}(recurse={self.recurse}, explode_args={self.explode_args})"

    def _call_args(
        self, input: Any, config: RunnableConfig, kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if self.explode_args:
            args, extra = input
            kwargs = {**self.kwargs, **extra, **kwargs}
        else:
            args = (input,)
            kwargs = {**self.kwargs, **kwargs}
        if self._inject:
            runtime = config.get(CONF, {}).get(CONFIG_KEY_RUNTIME)
            for kw, source, attr, default in self._inject:
                if kw in kwargs:
                    continue
                value: Any = MISSING
                if source == _FROM_CONFIG:
                    value = config
                elif source == _FROM_ERROR:
                    value = config.get(CONF, {}).get(CONFIG_KEY_NODE_ERROR, MISSING)
                elif runtime:
                    value = runtime if source == _FROM_RUNTIME else getattr(runtime, attr, MISSING)
                if value is MISSING:
                    if default is _EMPTY:
                        raise ValueError(f"Missing required config key '{attr}' for '{self.name}'.")
                    value = default
                kwargs[kw] = value
        return args, kwargs

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        func = self.func
        if func is None:
            raise TypeError(
                f'No synchronous function provided to "{self.name}".'
                "\nEither initialize with a synchronous function or invoke"
                " via the async API (ainvoke, astream, etc.)"
            )
        if config is None:
            config = ensure_config()
        if self.trace and "callbacks" in config and config["callbacks"] is not None:
            # a traced run (_lc.py)
            ret = _lc.traced_call(self, input, config, kwargs)
        elif self._plain and not kwargs:
            if self.trace and _CONFIG.get() is not config:
                tokens = set_config_var(config)
                try:
                    ret = func(input)
                finally:
                    reset_config_var(tokens)
            else:
                ret = func(input)
        else:
            args, kw = self._call_args(input, config, kwargs)
            if self.trace and _CONFIG.get() is not config:
                tokens = set_config_var(config)
                try:
                    ret = func(*args, **kw)
                finally:
                    reset_config_var(tokens)
            else:
                ret = func(*args, **kw)
        if self.recurse:
            known = _RUNNABLE_TYPES.get(type(ret))
            if known or (known is None and _is_runnable(ret)):
                return ret.invoke(input, config)
        return ret

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        afunc = self.afunc
        if afunc is None:
            return self.invoke(input, config, **kwargs)
        if config is None:
            config = ensure_config()
        if self.trace and "callbacks" in config and config["callbacks"] is not None:
            # a traced run (_lc.py)
            ret = await _lc.atraced_call(self, input, config, kwargs)
        elif self.trace and _CONFIG.get() is not config:
            args, kw = self._call_args(input, config, kwargs)
            tokens = set_config_var(config)
            try:
                ret = await afunc(*args, **kw)
            finally:
                reset_config_var(tokens)
        else:
            args, kw = self._call_args(input, config, kwargs)
            ret = await afunc(*args, **kw)
        if self.recurse and _is_runnable(ret):
            ainvoke = getattr(ret, "ainvoke", None)
            if ainvoke is not None:
                return await ainvoke(input, config)
            return ret.invoke(input, config)
        return ret


def is_async_callable(func: Any) -> bool:
    """A coroutine function, or an object whose `__call__` is one."""
    return inspect.iscoroutinefunction(func) or (
        callable(func) and inspect.iscoroutinefunction(type(func).__call__)
    )


def is_async_generator(func: Any) -> bool:
    """An async generator function, or an object whose `__call__` is one."""
    return inspect.isasyncgenfunction(func) or (
        callable(func) and inspect.isasyncgenfunction(type(func).__call__)
    )


def _generator_runnable(thing: Any, name: str | None, trace: bool) -> RunnableCallable:
    """A generator function consumed to one value (chunks added with `+` when possible)."""
    if is_async_generator(thing):

        async def consume_async(input: Any) -> Any:
            output, first = None, True
            async for chunk in thing(input):
                output, first = _add_chunks(output, chunk, first), False
            return output

        return RunnableCallable(
            None, consume_async, name=name or getattr(thing, "__name__", None), trace=trace
        )

    def consume(input: Any) -> Any:
        output, first = None, True
        for chunk in thing(input):
            output, first = _add_chunks(output, chunk, first), False
        return output

    return RunnableCallable(
        consume,
        _in_worker_thread(consume),
        name=name or getattr(thing, "__name__", None),
        trace=trace,
    )


async def run_in_executor(
    executor_or_config: Any, func: Callable[..., Any], *args: Any, **kwargs: Any
) -> Any:
    """Await `func(*args, **kwargs)` on a thread in a copy of the current context: on the
    given `concurrent.futures.Executor`, else (None or a config) on warpgraph's worker pool.
    (langchain-core's helper of this name, which LangGraph's code imports from here.)"""
    if executor_or_config is None or isinstance(executor_or_config, dict):
        return await run_in_worker(func, *args, **kwargs)
    import asyncio  # (only here: importing warpgraph does not import asyncio)

    call = partial(contextvars.copy_context().run, func, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(executor_or_config, call)


def _in_worker_thread(func: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """An async version of `func` that runs it on the worker pool."""

    @wraps(func)
    async def run_sync(*args: Any, **kwargs: Any) -> Any:
        return await run_in_worker(func, *args, **kwargs)

    run_sync._wg_in_worker = True  # type: ignore[attr-defined] # (a timeout cannot stop it)
    return run_sync


class _RunnableParallel:
    """A dict of runnables: each is called with the same input; returns a dict of outputs."""

    __slots__ = ("name", "steps")

    def __init__(self, steps: dict[str, Any]) -> None:
        self.steps = {k: coerce_to_runnable(v, name=k, trace=True) for k, v in steps.items()}
        self.name = None

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return {k: step.invoke(input, config) for k, step in self.steps.items()}

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return {k: await _ainvoke(step, input, config) for k, step in self.steps.items()}


async def _ainvoke(step: Any, input: Any, config: Any, **kwargs: Any) -> Any:
    ainvoke = getattr(step, "ainvoke", None)
    if ainvoke is not None:
        return await ainvoke(input, config, **kwargs)
    return await run_in_worker(step.invoke, input, config, **kwargs)


def coerce_to_runnable(thing: Any, *, name: str | None = None, trace: bool = True) -> Any:
    """A runnable for `thing`: objects with `invoke` are kept; sync functions get an async
    twin that runs them on the worker pool; async functions are async-only; dicts run each
    value on the same input."""
    if _is_runnable(thing):
        return thing
    if is_async_generator(thing) or inspect.isgeneratorfunction(thing):
        return _generator_runnable(thing, name, trace)
    if callable(thing):
        if is_async_callable(thing):
            return RunnableCallable(None, thing, name=name, trace=trace)
        return RunnableCallable(thing, _in_worker_thread(thing), name=name, trace=trace)
    if isinstance(thing, dict):
        return _RunnableParallel(thing)
    raise TypeError(
        f"Expected a Runnable, callable or dict.Instead got an unsupported type: {type(thing)}"
    )


def _flatten(step: Any) -> list[Any]:
    if isinstance(step, RunnableSeq):
        return list(step.steps)
    if type(step).__name__ == "RunnableSequence" and hasattr(step, "steps"):
        return list(step.steps)
    return [coerce_to_runnable(step, name=None, trace=True)]


def _child_config(config: RunnableConfig) -> RunnableConfig:
    """The config the steps see: without the sequence's own run_name / run_id (LangGraph
    drops them when it hands the steps a child callback manager)."""
    return {k: v for k, v in config.items() if k != "run_name" and k != "run_id"}  # type: ignore[return-value]


@_lc.runnable_face
class RunnableSeq:
    """Steps called in order, each output feeding the next; the first step runs with the
    config as the current task config."""

    __slots__ = ("_first", "_rest", "name", "steps", "trace_inputs", "trace_policy")

    def __init__(
        self,
        *steps: Any,
        name: str | None = None,
        trace_inputs: Callable[[Any], Any] | None = None,
        trace_policy: Any = None,
    ) -> None:
        flat: list[Any] = []
        for step in steps:
            flat.extend(_flatten(step))
        if len(flat) < 2:
            raise ValueError(f"RunnableSeq must have at least 2 steps, got {len(flat)}")
        self.steps = flat
        self.name = name
        self.trace_inputs = trace_inputs
        self.trace_policy = trace_policy
        self._first = flat[0]
        self._rest = tuple(flat[1:])

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        name = name or self.name or "RunnableSeq"
        return f"{name}{suffix}" if suffix else name

    def __repr__(self) -> str:
        return " | ".join(repr(s) for s in self.steps)

    def __or__(self, other: Any) -> RunnableSeq:
        return RunnableSeq(*self.steps, other, name=self.name or getattr(other, "name", None))

    def __ror__(self, other: Any) -> RunnableSeq:
        return RunnableSeq(other, *self.steps, name=getattr(other, "name", None) or self.name)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        if config is None:
            config = ensure_config()
        if "run_name" in config or "run_id" in config:
            if config.get("callbacks") is not None:  # a traced run's task (_lc.py)
                return _lc.traced_seq(self, input, config, kwargs)
            config = _child_config(config)
        if _CONFIG.get() is config:
            if kwargs:
                value = self._first.invoke(input, config, **kwargs)
            else:
                value = self._first.invoke(input, config)
        else:
            tokens = set_config_var(config)
            try:
                value = self._first.invoke(input, config, **kwargs)
            finally:
                reset_config_var(tokens)
        for step in self._rest:
            value = step.invoke(value, config)
        return value

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        if config is None:
            config = ensure_config()
        if "run_name" in config or "run_id" in config:
            if config.get("callbacks") is not None:  # a traced run's task (_lc.py)
                return await _lc.atraced_seq(self, input, config, kwargs)
            config = _child_config(config)
        if _TASK_CONTEXT:
            # the first step (the node) runs as a task in a copy of the context, as in
            # LangGraph: variables it sets stay out of the later steps and the caller
            ctx = contextvars.copy_context()
            ctx.run(set_config_var, config)
            value = await _InContext(_ainvoke(self._first, input, config, **kwargs), ctx)
        elif _CONFIG.get() is config:
            value = await _ainvoke(self._first, input, config, **kwargs)
        else:
            tokens = set_config_var(config)
            try:
                value = await _ainvoke(self._first, input, config, **kwargs)
            finally:
                reset_config_var(tokens)
        for step in self._rest:
            value = await _ainvoke(step, value, config)
        return value


class _InContext:
    """Awaits `coro` with every step of it run in `ctx`, in the awaiting task.

    The effect of `await create_task(coro, context=ctx)` (what LangGraph's RunnableSeq does
    to keep a node's context variables out of the caller's) without a task per node: the
    coroutine starts at once, as an eager task does, and a node that never suspends costs
    no turn of the event loop. Whatever it yields (a future to wait on, or None to let
    others run) goes to the awaiting task, and what that task sends or throws back
    (a result, a cancellation) goes to the coroutine, each in `ctx`."""

    __slots__ = ("coro", "ctx")

    def __init__(self, coro: Any, ctx: contextvars.Context) -> None:
        self.coro = coro
        self.ctx = ctx

    def __await__(self) -> Any:
        coro, run = self.coro, self.ctx.run
        try:
            out = run(coro.send, None)
            while True:
                try:
                    sent = yield out
                except GeneratorExit:
                    run(coro.close)
                    raise
                except BaseException as exc:  # noqa: BLE001 - a cancellation of the awaiting task
                    out = run(coro.throw, exc)
                else:
                    out = run(coro.send, sent)
        except StopIteration as done:
            return done.value


# Python 3.11+: `create_task(context=)`, which LangGraph's RunnableSeq uses to run a node in
# a context of its own (on 3.10 it awaits the node in the caller's context, and so does this)
_TASK_CONTEXT = sys.version_info >= (3, 11)


RunnableLike = Union[  # noqa: UP007 (a runtime alias others combine with `| None`)
    RunnableCallable,
    RunnableSeq,
    Callable[..., Any],
    Callable[..., Awaitable[Any]],
    collections.abc.Mapping[str, Any],
]
"""What a node or step may be given as: a runnable, a sync or async function, or a mapping
of such (run in parallel)."""
