"""Timed attempts (async only: a timeout cancels the attempt's asyncio task).

An attempt with a timeout runs under a `_TimedAttemptScope`, whose guarded config turns the
attempt's writes, stream output, child task calls, callback events and `runtime.heartbeat()`
into progress for the idle timeout, and drops whatever the attempt sends once it timed out.
An observer in the configurable (`CONFIG_KEY_TIMED_ATTEMPT_OBSERVER`) is told of each timed
attempt's start, progress and finish (`_AttemptEvent`); `pregel/_retry.py` reports the
finish before any retry or handler.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, Literal, NamedTuple

from warpgraph._internal import _constants as _k
from warpgraph._internal._runnable import _ainvoke
from warpgraph.config import (
    merge_configs,
    reset_config_var,
    set_config_var,
)
from warpgraph.errors import NodeTimeoutError
from warpgraph.runtime import Runtime

logger = logging.getLogger("warpgraph.pregel._retry")  # (the retry module's logger, as before)


class _AttemptContext(NamedTuple):
    """What every event of one timed attempt shares (observers must not change it)."""

    task_id: str
    task_name: str
    attempt: int
    run_id: str | None
    thread_id: str | None
    checkpoint_ns: str | None
    started_at: datetime
    run_timeout_secs: float | None
    idle_timeout_secs: float | None
    refresh_on: Literal["auto", "heartbeat"] | None


@dataclasses.dataclass(frozen=True, slots=True)
class _AttemptEvent:
    """A timed attempt's `start`, `progress` or `finish`, as told to the observer."""

    context: _AttemptContext
    event: Literal["start", "progress", "finish"]
    progress_at: datetime | None = None
    finished_at: datetime | None = None
    status: Literal["success", "error"] | None = None
    error_type: str | None = None
    error_message: str | None = None


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _notify(observer: Callable[[_AttemptEvent], Any], event: _AttemptEvent) -> None:
    try:
        observer(event)
    except Exception:
        logger.warning("Timed attempt observer failed", exc_info=True)


def _observer(config: dict[str, Any]) -> Any:
    conf = config.get(_k.CONF)
    return conf.get(_k.CONFIG_KEY_TIMED_ATTEMPT_OBSERVER) if conf else None


def _start_timed_attempt(task: Any, config: dict[str, Any], policy: Any) -> Any:
    """The attempt's context, once its `start` was sent; None without an observer."""
    observer = _observer(config)
    if observer is None:
        return None
    runtime = config[_k.CONF].get(_k.CONFIG_KEY_RUNTIME)
    info = runtime.execution_info if isinstance(runtime, Runtime) else None
    idle = policy.idle_timeout
    context = _AttemptContext(
        task_id=task.id,
        task_name=task.name,
        attempt=info.node_attempt if info is not None else 1,
        run_id=info.run_id if info is not None else None,
        thread_id=info.thread_id if info is not None else None,
        checkpoint_ns=info.checkpoint_ns if info is not None else None,
        started_at=_utc_now(),
        run_timeout_secs=policy.run_timeout,
        idle_timeout_secs=idle,
        refresh_on=policy.refresh_on if idle is not None else None,
    )
    _notify(observer, _AttemptEvent(context, "start"))
    return context


def _finish_timed_attempt(
    config: dict[str, Any], attempt: Any, error: BaseException | None = None
) -> None:
    if attempt is None:
        return
    observer = _observer(config)
    if observer is None:
        return
    failed = error is not None
    _notify(
        observer,
        _AttemptEvent(
            attempt,
            "finish",
            finished_at=_utc_now(),
            status="error" if failed else "success",
            error_type=type(error).__name__ if failed else None,
            error_message=str(error) if failed else None,
        ),
    )


_Notify = Callable[[], None] | None  # called on progress, at most every min interval
_RefreshOn = Literal["auto", "heartbeat"] | None  # which progress resets the idle clock


class _TimedAttemptScope:
    """The guarded config of one timed attempt and its idle clock.

    Writes, stream chunks, custom stream output and child task calls made through the
    wrapped config (and LangChain callback events of the attempt's runs) count as
    progress under `refresh_on="auto"`; `runtime.heartbeat()` always does. After
    `close()` (the attempt timed out or ended) they are dropped: writes under the lock,
    so a cancelled attempt's thread cannot write past the timeout; the others without
    it (they run user code), best effort.
    """

    # (state: open until `close()`; progress time stamp; the progress callback, its gap
    # and when it is next due; which progress counts)
    __slots__ = (
        "__weakref__",
        "_auto_refresh",
        "_idle_timed",
        "_lock",
        "_notify",
        "_notify_at",
        "_notify_gap",
        "_open",
        "_stamp",
    )

    def __init__(
        self,
        on_progress: _Notify = None,
        progress_min_interval: float = 0.0,
        refresh_on: _RefreshOn = None,
    ) -> None:
        self._lock, self._open = threading.Lock(), True
        self._notify, self._notify_gap = on_progress, progress_min_interval
        self._notify_at = -math.inf  # the first progress always reports
        self._auto_refresh, self._idle_timed = refresh_on == "auto", refresh_on is not None
        self._stamp = time.monotonic()

    def touch(self) -> None:
        """Progress (no lock: a stale timestamp only shifts a coarse deadline)."""
        now = self._stamp = time.monotonic()
        report = self._notify
        if report is not None and now >= self._notify_at:
            self._notify_at = now + self._notify_gap
            report()

    def close(self) -> None:
        with self._lock:
            self._open = False

    def idle_deadline(self, idle: float) -> float:
        return self._stamp + idle

    def wrap_config(self, config: dict[str, Any]) -> dict[str, Any]:
        conf = config.get(_k.CONF) or {}
        patch: dict[str, Any] = {}
        if (send := conf.get(_k.CONFIG_KEY_SEND)) is not None:
            patch[_k.CONFIG_KEY_SEND] = self._guard_send(send)
        if (stream := conf.get(_k.CONFIG_KEY_STREAM)) is not None:
            patch[_k.CONFIG_KEY_STREAM] = self._guard_stream(stream)
        if (call := conf.get(_k.CONFIG_KEY_CALL)) is not None:
            patch[_k.CONFIG_KEY_CALL] = self._guard_call(call)
        runtime = conf.get(_k.CONFIG_KEY_RUNTIME)
        if isinstance(runtime, Runtime):
            writer = self._guard_stream_writer(runtime.stream_writer)
            if self._idle_timed:
                runtime = runtime.override(stream_writer=writer, heartbeat=self.touch)
            else:
                runtime = runtime.override(stream_writer=writer)
            patch[_k.CONFIG_KEY_RUNTIME] = runtime
        if patch:
            config = {**config, _k.CONF: {**conf, **patch}}
        if self._auto_refresh:
            handler = _idle_progress_handler(self)
            if handler is not None:
                config = merge_configs(config, {"callbacks": [handler]})
        return config

    def _guard_send(self, send: Callable[[Sequence[tuple[str, Any]]], None]) -> Callable:
        def guarded_send(writes: Sequence[tuple[str, Any]]) -> None:
            with self._lock:
                if self._open:
                    if writes and self._auto_refresh:
                        self._stamp = time.monotonic()
                    send(writes)

        return guarded_send

    def _guard_stream(self, stream: Any) -> Any:
        put = getattr(stream, "put", stream)

        def guarded_stream(chunk: tuple) -> None:
            if self._open:  # (stream chunks come from the event loop only)
                if self._auto_refresh:
                    self._stamp = time.monotonic()
                put(chunk)

        return _GuardedStream(guarded_stream, stream.modes)

    def _guard_call(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def guarded_call(*args: Any, **kwargs: Any) -> Any:
            if not self._open:
                raise asyncio.CancelledError
            if self._auto_refresh:
                self._stamp = time.monotonic()
            return call(*args, **kwargs)

        return guarded_call

    def _guard_stream_writer(self, stream_writer: Callable[[Any], None]) -> Callable:
        def guarded_stream_writer(chunk: Any) -> None:
            with self._lock:
                if not self._open:
                    return
                if self._auto_refresh:
                    self._stamp = time.monotonic()
            stream_writer(chunk)

        return guarded_stream_writer


class _GuardedStream:
    """A stream sink as warpgraph's loop uses one (`put`, `modes`) that is also callable
    like LangGraph's StreamProtocol."""

    __slots__ = ("modes", "put")

    def __init__(self, put: Callable[[tuple], None], modes: Any) -> None:
        self.put = put
        self.modes = modes

    def __call__(self, chunk: tuple) -> None:
        self.put(chunk)


_HANDLER_CLASS: Any = None


def _idle_progress_handler(scope: _TimedAttemptScope) -> Any:
    """A LangChain callback handler that counts every event as progress of `scope` (held
    weakly); None without langchain-core (then no callback event can happen)."""
    global _HANDLER_CLASS
    if _HANDLER_CLASS is None:
        try:
            from langchain_core.callbacks import BaseCallbackHandler
        except ImportError:  # pragma: no cover - langchain-core is optional
            _HANDLER_CLASS = False
        else:

            def _touch(self: Any, *args: Any, **kwargs: Any) -> None:
                scope = self._scope()
                if scope is not None:
                    scope.touch()

            events = [
                f"on_{what}_{when}"
                for what in ("llm", "chain", "tool", "retriever")
                for when in ("start", "end", "error")
            ]
            events += [
                "on_chat_model_start",
                "on_llm_new_token",
                "on_agent_action",
                "on_agent_finish",
                "on_text",
                "on_retry",
                "on_custom_event",
            ]

            def __init__(self: Any, scope: _TimedAttemptScope) -> None:
                self._scope = weakref.ref(scope)

            _HANDLER_CLASS = type(
                "_IdleProgressCallbackHandler",
                (BaseCallbackHandler,),
                {
                    "run_inline": True,  # progress in the order events happen
                    "__init__": __init__,
                    **dict.fromkeys(events, _touch),
                },
            )
    return _HANDLER_CLASS(scope) if _HANDLER_CLASS else None


async def _arun_with_timeout(
    task: Any, config: dict[str, Any], policy: Any, attempt: Any, stream: bool
) -> Any:
    """Run one attempt of the task as its own asyncio task under `policy`; raise
    NodeTimeoutError (cancelling it, dropping its writes) when the run timeout passes or
    no progress was made within the idle timeout."""
    run_s, idle_s = policy.run_timeout, policy.idle_timeout
    report = None
    observer = _observer(config) if attempt is not None else None
    if observer is not None and idle_s is not None:

        def report() -> None:
            _notify(observer, _AttemptEvent(attempt, "progress", progress_at=_utc_now()))

    scope = _TimedAttemptScope(
        report,
        idle_s / 4 if idle_s is not None else 0.0,  # at most ~4 progress events per window
        policy.refresh_on if idle_s is not None else None,
    )
    scoped = scope.wrap_config(config)
    if stream:

        async def body() -> Any:
            async for _ in task.proc.astream(task.input, scoped):
                if scope._auto_refresh:
                    scope.touch()

    else:

        async def body() -> Any:
            return await _ainvoke(task.proc, task.input, scoped)

    tokens = set_config_var(scoped)
    try:  # the attempt's task sees its own config as the current one
        bg = asyncio.ensure_future(body())
    finally:
        reset_config_var(tokens)
    start = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            kind, deadline = "run", start + run_s if run_s is not None else None
            if idle_s is not None:
                idle_at = scope.idle_deadline(idle_s)
                if deadline is None or idle_at < deadline:
                    kind, deadline = "idle", idle_at
            if deadline <= now:
                scope.close()
                task.writes.clear()
                bg.cancel()
                bg.add_done_callback(_retrieve)
                raise NodeTimeoutError(
                    task.name, now - start, kind=kind, idle_timeout=idle_s, run_timeout=run_s
                )
            done, _ = await asyncio.wait((bg,), timeout=deadline - now)
            if done:
                return bg.result()
    except asyncio.CancelledError:
        if not bg.done():
            bg.cancel()
            bg.add_done_callback(_retrieve)
        raise
    finally:
        scope.close()


def _retrieve(fut: asyncio.Future) -> None:
    """Mark an abandoned attempt's outcome as seen (asyncio would log it)."""
    if not fut.cancelled():
        fut.exception()
