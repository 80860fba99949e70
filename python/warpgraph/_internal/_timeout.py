"""Node timeouts: normalising `timeout=` values, and which runnables can be timed.

A timeout is enforced by cancelling the attempt's asyncio task, so only work that runs on
the event loop can be timed: a sync function (run on a worker thread) cannot be stopped.
`check_timeout_supported` rejects such nodes when a graph is built, with LangGraph's error.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any, Literal

from warpgraph.types import TimeoutPolicy

__all__ = (
    "NEVER_BLOCKS",
    "check_timeout_supported",
    "coerce_timeout_policy",
    "sync_timeout_unsupported",
)

NEVER_BLOCKS = "_wg_never_blocks"
"""Class attribute (True) of runnables that never block the event loop and so can be timed:
the pregel layer sets it on its channel writers and on the config-free writers the graph
layer registers (this module imports nothing above it)."""

_SYNC_TIMEOUT = (
    "Node timeouts are only supported for async nodes because sync Python execution "
    "cannot be safely cancelled in-process."
)


def coerce_timeout_policy(value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
    """A policy with positive float seconds (a number or timedelta is a run timeout)."""
    return TimeoutPolicy.coerce(value)


def sync_timeout_unsupported(name: str, *, kind: Literal["Node", "Task"] = "Node") -> ValueError:
    """The error for a timeout set on something that runs synchronously."""
    return ValueError(f"{_SYNC_TIMEOUT} {kind} {name!r} is sync.")


def check_timeout_supported(runnable: Any, *, name: str) -> None:
    """Raise `sync_timeout_unsupported(name)` unless every step of `runnable` is async."""
    if not _async_all_the_way(runnable):
        raise sync_timeout_unsupported(name)


def _lc_runnable_ainvoke() -> Any:
    try:
        from langchain_core.runnables import Runnable
    except ImportError:  # pragma: no cover - langchain-core is optional
        return None
    return Runnable.ainvoke


def _steps_of(runnable: Any) -> Any:
    """The parts of a composite runnable (sequence steps, parallel branches), or None."""
    from warpgraph._internal._runnable import RunnableSeq, _RunnableParallel

    if isinstance(runnable, RunnableSeq):
        return runnable.steps
    if isinstance(runnable, _RunnableParallel):
        return tuple(runnable.steps.values())
    cls_name = type(runnable).__name__
    module = type(runnable).__module__ or ""
    if module.startswith(("langchain_core", "langgraph")):
        if cls_name == "RunnableParallel" and hasattr(runnable, "steps__"):
            return tuple(runnable.steps__.values())
        if cls_name in ("RunnableSequence", "RunnableSeq") and hasattr(runnable, "steps"):
            return runnable.steps
    return None


def _async_all_the_way(runnable: Any) -> bool:
    # bindings (`with_config`, `bind`) time what they wrap
    while type(runnable).__name__.startswith("RunnableBinding") and hasattr(runnable, "bound"):
        runnable = runnable.bound
    steps = _steps_of(runnable)
    if steps is not None:
        return all(_async_all_the_way(step) for step in steps)
    return _natively_async(runnable)


def _natively_async(runnable: Any) -> bool:
    from warpgraph._internal._runnable import RunnableCallable

    if getattr(type(runnable), NEVER_BLOCKS, False):
        return True  # warpgraph's own writers
    if isinstance(runnable, RunnableCallable):
        afunc = runnable.afunc
        return afunc is not None and not _runs_in_worker(afunc)
    if type(runnable).__name__ == "RunnableLambda":
        return bool(getattr(runnable, "afunc", False))
    ainvoke = getattr(type(runnable), "ainvoke", None)
    return ainvoke is not None and ainvoke is not _lc_runnable_ainvoke()


def _runs_in_worker(afunc: Any) -> bool:
    """`afunc` is the worker-thread twin of a sync function (`coerce_to_runnable`'s, or
    LangGraph's `partial(run_in_executor, ...)`)."""
    if getattr(afunc, "_wg_in_worker", False):
        return True
    return isinstance(afunc, partial) and getattr(afunc.func, "__name__", "") == "run_in_executor"
