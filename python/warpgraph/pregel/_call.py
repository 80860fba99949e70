"""Calling a function as a task of the running graph (the functional API's `@task`).

`call(func, *args)` asks the running task's config for its call hook
(`configurable["__pregel_call"]`, installed by the loop: `pregel/_calls.py`), which makes
the call a PUSH task of the current step and returns a future of its result. This module
holds the user-facing half: the `Call` record the hook receives, the future type, the
runnables a task function / entrypoint function run as, and `identifier` (the stable
name of a function, used by cache keys).
"""

from __future__ import annotations

import concurrent.futures
import functools
import inspect
import sys
import types
import weakref
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import Any, Generic, ParamSpec, TypeVar

from warpgraph._internal._constants import CONF, CONFIG_KEY_CALL, RETURN
from warpgraph._internal._runnable import (
    RunnableCallable,
    RunnableSeq,
    is_async_callable,
    run_in_executor,
)
from warpgraph._internal._timeout import coerce_timeout_policy, sync_timeout_unsupported
from warpgraph.config import get_config
from warpgraph.pregel._write import ChannelWrite, ChannelWriteEntry

__all__ = (
    "CACHE",
    "Call",
    "P",
    "SyncAsyncFuture",
    "T",
    "call",
    "get_runnable_for_entrypoint",
    "get_runnable_for_task",
    "identifier",
)

P = ParamSpec("P")
T = TypeVar("T")


class Call:
    """One task call: the function, its `(args, kwargs)` and the options it was made with
    (what the loop needs to prepare the PUSH task; the last element of its path)."""

    __slots__ = (
        "cache_policy",
        "callbacks",
        "func",
        "input",
        "prepared",
        "retry_policy",
        "timeout",
    )

    def __init__(
        self,
        func: Callable,
        input: tuple[tuple[Any, ...], dict[str, Any]],
        *,
        retry_policy: Sequence[Any] | None,
        cache_policy: Any,
        callbacks: Any,
        timeout: Any = None,
    ) -> None:
        self.func, self.input = func, input
        self.retry_policy, self.cache_policy = retry_policy, cache_policy
        self.callbacks, self.timeout = callbacks, timeout
        self.prepared: Any = None  # (runnable, plans) a `@task` function keeps for its calls


class SyncAsyncFuture(concurrent.futures.Future, Generic[T]):
    """What a task call returns in a sync run: a concurrent future that an async caller
    may also await (it never completes that way: LangGraph's type, kept for typing)."""

    def __await__(self) -> Generator[T, None, T]:
        yield ...  # type: ignore[misc]
        return self.result()


# ------------------------------------------------------------------ names of functions


def _resolve(root: Any, dotted: str) -> Any:
    """`root.a.b.c` for dotted "a.b.c"; AttributeError for local names (`<locals>`)."""
    obj = root
    for part in dotted.split("."):
        if part == "<locals>":
            raise AttributeError(dotted)
        obj = getattr(obj, part)
    return obj


def _module_of(obj: Any, qualname: str) -> str | None:
    module = getattr(obj, "__module__", None)
    if module is not None:
        return module
    for mod_name, mod in list(sys.modules.items()):
        if mod_name in ("__main__", "__mp_main__") or not isinstance(mod, types.ModuleType):
            continue
        try:
            if _resolve(mod, qualname) is obj:
                return mod_name
        except Exception:  # noqa: BLE001, S112 - a module that cannot be searched
            continue
    return None


def _importable(obj: Any) -> bool:
    """`obj` can be found again by module and qualified name (not local, not __main__)."""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        return False
    module = _module_of(obj, qualname)
    if module is None or module == "__main__" or module not in sys.modules:
        return False
    try:
        return _resolve(sys.modules[module], qualname) is obj
    except AttributeError:
        return False


def identifier(obj: Any, name: str | None = None) -> str | None:
    """`module.qualname` of a function (of the function a node / runnable wraps), or None
    when it has no module."""
    from warpgraph.pregel._read import PregelNode

    if isinstance(obj, PregelNode):
        obj = obj.bound
    if isinstance(obj, RunnableSeq):
        obj = obj.steps[0]
    if isinstance(obj, RunnableCallable):
        obj = obj.func
    if name is None:
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return None
    module = getattr(obj, "__module__", None)
    return None if module is None else f"{module}.{name}"


# ------------------------------------------------------------------ runnables

CACHE: dict[tuple[Callable[..., Any], bool], Any] = {}
"""Runnables made for functions that can be found again by name: (func, is_task) -> runnable."""


def _task_name(func: Any) -> str:
    for owner in (func, getattr(func, "func", None)):
        name = getattr(owner, "__name__", None)
        if name is not None:
            return name
    return type(func).__name__


def _trace_inputs(sig: inspect.Signature, input: tuple[tuple, dict]) -> dict[str, Any]:
    """A task's call arguments by parameter name (defaults applied, **kwargs flattened)."""
    bound = sig.bind_partial(*input[0], **input[1])
    bound.apply_defaults()
    named = {k: v for k, v in bound.arguments.items() if k not in ("self", "cls")}
    for pname, param in sig.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD and pname in named:
            named.update(named.pop(pname))
    return named


_LOCAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Runnables of functions that cannot be found by name (local functions), kept while the
function lives: (func) -> {is_task: runnable}."""


def _remember(key: tuple, func: Any, runnable: Any) -> Any:
    if _importable(func):
        return CACHE.setdefault(key, runnable)
    try:
        return _LOCAL.setdefault(func, {}).setdefault(key[1], runnable)
    except TypeError:  # (not weakly referenceable)
        return runnable


def _known(func: Any, is_task: bool) -> Any:
    found = CACHE.get((func, is_task))
    if found is None:
        try:
            found = _LOCAL.get(func, _NONE).get(is_task)
        except TypeError:
            return None
    return found


_NONE: dict = {}


def get_runnable_for_entrypoint(func: Callable[..., Any]) -> Any:
    """The runnable an entrypoint's function runs as (sync functions get an async twin
    that runs them on a worker thread)."""
    found = _known(func, False)
    if found is not None:
        return found
    if is_async_callable(func):
        run = RunnableCallable(None, func, name=func.__name__, trace=False, recurse=False)
    else:
        twin = functools.update_wrapper(functools.partial(run_in_executor, None, func), func)
        run = RunnableCallable(func, twin, name=func.__name__, trace=False, recurse=False)
    return _remember((func, False), func, run)


def get_runnable_for_task(func: Callable[..., Any]) -> Any:
    """The runnable a task call runs: the function on the call's `(args, kwargs)`, then
    its value written to RETURN."""
    found = _known(func, True)
    if found is not None:
        return found
    name = _task_name(func)
    if is_async_callable(func):
        run = RunnableCallable(None, func, explode_args=True, name=name, trace=False, recurse=False)
    else:
        twin = functools.wraps(func)(functools.partial(run_in_executor, None, func))
        run = RunnableCallable(func, twin, explode_args=True, name=name, trace=False, recurse=False)
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # (builtins without a signature)
        trace = None
    else:
        trace = functools.partial(_trace_inputs, sig)
    seq = RunnableSeq(run, ChannelWrite([ChannelWriteEntry(RETURN)]), name=name, trace_inputs=trace)
    return _remember((func, True), func, seq)


# ------------------------------------------------------------------ calling


def call(
    func: Callable[P, Awaitable[T]] | Callable[P, T],
    *args: Any,
    retry_policy: Sequence[Any] | None = None,
    cache_policy: Any = None,
    timeout: Any = None,
    **kwargs: Any,
) -> SyncAsyncFuture[T]:
    """Run `func(*args, **kwargs)` as a task of the running graph; a future of its value."""
    return _call_with_options(
        func,
        args,
        kwargs,
        retry_policy=retry_policy,
        cache_policy=cache_policy,
        timeout=coerce_timeout_policy(timeout),
    )


def _call_with_options(
    func: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    retry_policy: Sequence[Any] | None = None,
    cache_policy: Any = None,
    timeout: Any = None,
) -> Any:
    if timeout is not None and not is_async_callable(func):
        raise sync_timeout_unsupported(getattr(func, "__name__", type(func).__name__), kind="Task")
    config = get_config()
    hook = config[CONF][CONFIG_KEY_CALL]
    return hook(
        func,
        (args, kwargs),
        retry_policy=retry_policy,
        cache_policy=cache_policy,
        callbacks=config.get("callbacks"),
        timeout=timeout,
    )
