"""Running one task: per-attempt config, retry policy, `Command(graph=...)`, timeouts.

The policy is written once: `_verdict` decides what a failed attempt means (a command for
this graph applied here, the failure to raise or the error it stands for, or the delay
before the next attempt: which exception retries, backoff, jitter, attempts), and
`_Attempts` holds one task's run of attempts (the first attempt's config, the failures so
far, the next attempt's config). The runners are thin drivers of it: `run_with_retry`
and `arun_with_retry` differ only in how they call the node and wait (and the async one
in timeouts and streaming); `_run_unconfigured` / `_arun_unconfigured` ask `_verdict`
alone (they have no policy, so a failure never retries).

Timed attempts (async only: a timeout cancels the attempt's asyncio task) run under a
`_TimedAttemptScope`, whose guarded config turns the attempt's writes, stream output,
child task calls, callback events and `runtime.heartbeat()` into progress for the idle
timeout, and drops whatever the attempt sends once it timed out. An observer in the
configurable (`CONFIG_KEY_TIMED_ATTEMPT_OBSERVER`) is told of each timed attempt's start,
progress and finish (`_AttemptEvent`), the finish always before any retry or handler.

Tasks with no policy, no timeout and a config not built yet take `_run_unconfigured`,
which pays for none of this unless the node fails.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import math
import random
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from sys import modules as _modules
from typing import Any, Literal, NamedTuple

from warpgraph._internal import _constants as _k
from warpgraph._internal._runnable import _RUNNABLE_TYPES, _ainvoke, _is_runnable
from warpgraph._internal._timeout import sync_timeout_unsupported
from warpgraph.config import (
    _CONFIG,
    _LC_MODULE,
    LazyDictConfig,
    merge_configs,
    recast_checkpoint_ns,
    reset_config_var,
    set_config_var,
)
from warpgraph.errors import GraphBubbleUp, NodeCancelledError, NodeTimeoutError, ParentCommand
from warpgraph.pregel._algo import D_LOOP, D_PLAN, LazyTask, _stored_config
from warpgraph.pregel._calls import CHILDREN, ajoin, join
from warpgraph.runtime import ExecutionInfo, Runtime

__all__ = ("arun_with_retry", "run_with_retry")

logger = logging.getLogger(__name__)
_PARENT = "__parent__"  # Command.PARENT


# ------------------------------------------------------------------ policies


def _should_retry_on(policy: Any, exc: Exception) -> bool:
    """Whether `policy.retry_on` (exception class(es) or a predicate) matches `exc`."""
    retry_on = policy.retry_on
    if isinstance(retry_on, Sequence):
        return isinstance(exc, tuple(retry_on))
    if isinstance(retry_on, type) and issubclass(retry_on, Exception):
        return isinstance(exc, retry_on)
    if callable(retry_on):
        return retry_on(exc)  # type: ignore[no-any-return]
    raise TypeError(
        "retry_on must be an Exception class, a list or tuple of Exception classes, or a callable"
    )


def _delay(policy: Any, failures: int) -> float:
    """Seconds before the attempt after the `failures`-th failure (backoff, then jitter)."""
    interval = min(
        policy.max_interval, policy.initial_interval * policy.backoff_factor ** (failures - 1)
    )
    return interval + random.uniform(0, 1) if policy.jitter else interval


# ------------------------------------------------------------------ per-attempt config


def _ensure_execution_info(runtime: Runtime, config: dict[str, Any], task: Any) -> Runtime:
    """`runtime` with an ExecutionInfo made from the config when it has none (tasks built
    outside warpgraph's loop). The checkpoint id is the config's, else the graph's entry
    in the checkpoint map."""
    if runtime.execution_info is not None:
        return runtime
    conf = config.get(_k.CONF) or {}
    ns = conf.get(_k.CONFIG_KEY_CHECKPOINT_NS) or ""
    checkpoint_id = conf.get(_k.CONFIG_KEY_CHECKPOINT_ID)
    if not checkpoint_id and _k.CONFIG_KEY_CHECKPOINT_MAP in conf:
        graph_ns = ns.rsplit(_k.NS_SEP, 1)[0] if _k.NS_SEP in ns else ""
        checkpoint_id = (conf.get(_k.CONFIG_KEY_CHECKPOINT_MAP) or {}).get(graph_ns)
    rid = config.get("run_id")
    info = ExecutionInfo(
        checkpoint_id=checkpoint_id or "",
        checkpoint_ns=ns,
        task_id=conf.get(_k.CONFIG_KEY_TASK_ID) or task.id,
        thread_id=conf.get(_k.CONFIG_KEY_THREAD_ID),
        run_id=str(rid) if rid else None,
    )
    return runtime.override(execution_info=info)


def _with_runtime(config: dict[str, Any], runtime: Any) -> dict[str, Any]:
    return {**config, _k.CONF: {**config[_k.CONF], _k.CONFIG_KEY_RUNTIME: runtime}}


def _with_attempt(config: dict[str, Any], attempt: int, first_time: float | None) -> dict:
    """`config` whose runtime's execution info has `node_attempt=attempt` and, when given,
    `node_first_attempt_time=first_time` (unchanged without a Runtime)."""
    conf = config.get(_k.CONF)
    runtime = conf.get(_k.CONFIG_KEY_RUNTIME) if conf else None
    if not isinstance(runtime, Runtime) or runtime.execution_info is None:
        return config
    info = runtime.execution_info
    changes: dict[str, Any] = {}
    if info.node_attempt != attempt:
        changes["node_attempt"] = attempt
    if first_time is not None:
        changes["node_first_attempt_time"] = first_time
    if changes:
        runtime = runtime.override(execution_info=dataclasses.replace(info, **changes))
    return _with_runtime(config, runtime)


def _first_attempt_ready(config: dict[str, Any]) -> bool:
    """The loop already made this config the first attempt's (attempt 1 with its start
    time), or it holds no Runtime to patch."""
    conf = config.get(_k.CONF)
    runtime = conf.get(_k.CONFIG_KEY_RUNTIME) if conf else None
    if type(runtime) is not Runtime:
        return not isinstance(runtime, Runtime)
    info = runtime.execution_info
    return info is not None and info.node_attempt == 1 and info.node_first_attempt_time is not None


def _first_config(task: Any, configurable: dict[str, Any] | None) -> dict[str, Any]:
    config = task.config
    if configurable:
        config = {**config, _k.CONF: {**config.get(_k.CONF, {}), **configurable}}
    conf = config.get(_k.CONF)
    runtime = conf.get(_k.CONFIG_KEY_RUNTIME) if conf else None
    if isinstance(runtime, Runtime) and runtime.execution_info is None:
        config = _with_runtime(config, _ensure_execution_info(runtime, config, task))
    if configurable is None and _first_attempt_ready(config):
        return config
    return _with_attempt(config, 1, time.time())


def _retry_config(config: dict[str, Any]) -> dict[str, Any]:
    """Config for a retry: subgraphs resume, and interrupt() calls count from the first
    again (a retry reruns the node from its first line)."""
    conf = {**config[_k.CONF], _k.CONFIG_KEY_RESUMING: True}
    scratchpad = conf.get(_k.CONFIG_KEY_SCRATCHPAD)
    if scratchpad is not None:
        counter = itertools.count(0).__next__
        if dataclasses.is_dataclass(scratchpad):
            conf[_k.CONFIG_KEY_SCRATCHPAD] = dataclasses.replace(
                scratchpad, interrupt_counter=counter
            )
        elif hasattr(scratchpad, "_replace"):
            conf[_k.CONFIG_KEY_SCRATCHPAD] = scratchpad._replace(interrupt_counter=counter)
    return {**config, _k.CONF: conf}


def _checkpoint_ns_for_parent_command(ns: str) -> str:
    """The parent graph's namespace: drop the current frame and the numeric selectors
    (`|1`: a task's second subgraph call) around it, which are not levels."""
    parts = ns.split(_k.NS_SEP)
    end = len(parts)
    for drop_frame in (True, False):
        while end and parts[end - 1].isdigit():
            end -= 1
        if drop_frame and end:
            end -= 1
    return _k.NS_SEP.join(parts[:end])


# ------------------------------------------------------------------ what a failure means

_DONE: Any = object()  # the failure was a command for this graph, applied: the task is done
_RAISE: Any = object()  # re-raise the failure


def _user_raised_cancel() -> bool:
    """The CancelledError came from the node body, not from a cancel() of its task."""
    current = asyncio.current_task()
    cancelling = getattr(current, "cancelling", None)  # Python 3.11+
    return cancelling is not None and cancelling() == 0


def _verdict(
    task: Any,
    exc: BaseException,
    config: dict[str, Any],
    policies: Sequence[Any] | None,
    failures: int,
    attempt: _AttemptContext | None,
    in_asyncio: bool,
) -> Any:
    """What the failure `exc` of an attempt (after `failures` earlier ones) means: `_DONE`
    (return None), `_RAISE` (re-raise `exc`: the caller does, so the traceback stays the
    node's), or the seconds to wait before the next attempt; an error `exc` stands for
    (NodeCancelledError) is raised from here. A timed attempt's `finish` event is sent
    here, before any of those. Without policies the verdict is never a delay."""
    if isinstance(exc, ParentCommand):
        ns: str = config[_k.CONF][_k.CONFIG_KEY_CHECKPOINT_NS]
        cmd = exc.args[0]
        if cmd.graph in (ns, recast_checkpoint_ns(ns), task.name):  # for this graph
            try:
                for writer in task.writers:
                    writer.invoke(cmd, config)
            except Exception as writer_exc:
                _finish_timed_attempt(config, attempt, writer_exc)
                raise
            _finish_timed_attempt(config, attempt)
            return _DONE
        if cmd.graph == _PARENT:
            exc.args = (dataclasses.replace(cmd, graph=_checkpoint_ns_for_parent_command(ns)),)
        _finish_timed_attempt(config, attempt)
        return _RAISE
    if isinstance(exc, GraphBubbleUp):
        _finish_timed_attempt(config, attempt)
        return _RAISE
    if isinstance(exc, asyncio.CancelledError):
        _finish_timed_attempt(config, attempt, exc)
        # a sync node has no asyncio task: its CancelledError is its own, a failure
        if not in_asyncio or _user_raised_cancel():
            raise NodeCancelledError(task.name) from exc
        return _RAISE  # the runner cancelled it
    if not isinstance(exc, Exception):
        return _RAISE
    _finish_timed_attempt(config, attempt, exc)
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(f"During task with name '{task.name}' and id '{task.id}'")
    if not policies:
        return _RAISE
    for policy in policies:
        if _should_retry_on(policy, exc):
            if failures + 1 >= policy.max_attempts:
                return _RAISE
            return _delay(policy, failures + 1)
    return _RAISE


def _log_retry(task: Any, exc: BaseException, delay: float, failures: int) -> None:
    logger.info(
        f"Retrying task {task.name} after {delay:.2f} seconds (attempt {failures}) after "
        f"{exc.__class__.__name__} {exc}",
        exc_info=exc,
    )


class _Attempts:
    """One task's attempts under its retry policies, as both runners step them once its
    first attempt failed (a task that succeeds never makes one): `config` is the current
    attempt's; `failed` is `_verdict` of its failure; `retry`, after the wait, moves to
    the next attempt and returns its config."""

    __slots__ = ("config", "failures", "in_asyncio", "policies", "task")

    def __init__(self, task: Any, policies: Any, config: dict[str, Any], in_asyncio: bool) -> None:
        self.task, self.policies, self.in_asyncio = task, policies, in_asyncio
        self.config = config  # the first attempt's (`_first_config`)
        self.failures = 0

    def failed(self, exc: BaseException, attempt: _AttemptContext | None = None) -> Any:
        """`_verdict` of the current attempt's failure `exc`."""
        task, config = self.task, self.config
        return _verdict(task, exc, config, self.policies, self.failures, attempt, self.in_asyncio)

    def retry(self, exc: BaseException, delay: float) -> dict[str, Any]:
        """After the wait of `delay` seconds (`failed`'s verdict): log the retry; the next
        attempt's config."""
        self.failures += 1
        _log_retry(self.task, exc, delay, self.failures)
        config = self.config = _with_attempt(_retry_config(self.config), self.failures + 1, None)
        return config


# ------------------------------------------------------------------ the runners


def run_with_retry(
    task: Any,
    retry_policy: Sequence[Any] | None = None,
    configurable: dict[str, Any] | None = None,
) -> Any:
    """Run `task.proc.invoke(task.input, config)` with the task's (or the given) retry
    policies; the task's writes are reset before each attempt. Returns the node's value,
    raises the final error."""
    policies = task.retry_policy or retry_policy
    if task.timeout is not None:
        raise sync_timeout_unsupported(task.name)  # (graphs reject these when built)
    if type(task) is LazyTask and configurable is None and not policies:
        deferred = _stored_config(task)
        if type(deferred) is tuple:
            return _run_unconfigured(task, deferred)
    try:
        return _run_attempts(task, policies, configurable)
    finally:
        if CHILDREN:  # tasks it called (functional API) end before it does
            join(task)


def _run_attempts(task: Any, policies: Any, configurable: dict[str, Any] | None) -> Any:
    config = _first_config(task, configurable)
    attempts = None
    while True:
        tokens = set_config_var(config)
        try:
            task.writes.clear()
            return task.proc.invoke(task.input, config)
        except BaseException as exc:
            if attempts is None:
                attempts = _Attempts(task, policies, config, False)
            verdict = attempts.failed(exc)
            if verdict is _RAISE:
                raise
            if verdict is _DONE:
                return None
            time.sleep(verdict)
            config = attempts.retry(exc, verdict)
        finally:
            reset_config_var(tokens)


async def arun_with_retry(
    task: Any,
    retry_policy: Sequence[Any] | None = None,
    stream: bool = False,
    configurable: dict[str, Any] | None = None,
) -> Any:
    """Async twin of `run_with_retry`; honours `task.timeout`. `stream`: consume
    `task.proc.astream` instead, returning the task's _k.RETURN write."""
    try:
        return await _arun_attempts(task, retry_policy, stream, configurable)
    finally:
        if CHILDREN:  # tasks it called (functional API) end before it does
            await ajoin(task)


async def _arun_attempts(
    task: Any, retry_policy: Sequence[Any] | None, stream: bool, configurable: Any
) -> Any:
    policies = task.retry_policy or retry_policy
    timeout = task.timeout
    config = _first_config(task, configurable)
    attempts = None
    while True:
        attempt = _start_timed_attempt(task, config, timeout) if timeout is not None else None
        tokens = set_config_var(config)
        try:
            task.writes.clear()
            if timeout is not None:
                result = await _arun_with_timeout(task, config, timeout, attempt, stream)
                _finish_timed_attempt(config, attempt)
            elif stream:
                async for _ in task.proc.astream(task.input, config):
                    pass
            else:
                return await _ainvoke(task.proc, task.input, config)
            return _return_value(task) if stream else result
        except BaseException as exc:
            if attempts is None:
                attempts = _Attempts(task, policies, config, True)
            verdict = attempts.failed(exc, attempt)
            if verdict is _RAISE:
                raise
            if verdict is _DONE:
                return None
            await asyncio.sleep(verdict)
            config = attempts.retry(exc, verdict)
        finally:
            reset_config_var(tokens)


def _return_value(task: Any) -> Any:
    """What a streamed task returned: its _k.RETURN write."""
    return next((value for channel, value in task.writes if channel == _k.RETURN), None)


def _run_unconfigured(task: Any, deferred: tuple, own_context: bool = False) -> Any:
    """`run_with_retry` without retry policies for a LazyTask whose config is not built:
    its plan (see `_algo.node_plan`) runs the node function and writers exactly as
    `task.proc.invoke` would; the config is built only if something asks for it (the task
    stands in the config variable meanwhile). `own_context`: the caller runs this in a
    context copy made for this task alone, so the variables set here are not reset (the
    copy is dropped with them)."""
    writes = task.writes
    func, recurse, steps = deferred[D_PLAN]
    token = _CONFIG.set(task)
    lc = _modules.get(_LC_MODULE)
    lc_token = lc.var_child_runnable_config.set(LazyDictConfig(task)) if lc is not None else None
    try:  # (a task run here is fresh: its writes are empty)
        value = func(task.input) if func is not None else task.input
        if recurse:
            known = _RUNNABLE_TYPES.get(type(value))
            if known or (known is None and _is_runnable(value)):
                value = value.invoke(task.input, task.config)
        for kind, writer in steps:
            if kind == 0:
                writes.extend(writer._tuples(value))
            else:
                writer.invoke_unconfigured(value, task, deferred[D_LOOP].engine, writes)
        return value
    except BaseException as exc:
        if _verdict(task, exc, task.config, None, 0, None, False) is _RAISE:
            raise
        return None  # a command for this graph, applied
    finally:
        if CHILDREN:  # tasks it called (functional API) end before it does
            join(task)
        if not own_context:
            if lc_token is not None:
                lc.var_child_runnable_config.reset(lc_token)
            _CONFIG.reset(token)


async def _arun_unconfigured(task: Any, deferred: tuple) -> Any:
    """Async twin of `_run_unconfigured` for a lazily configured call task
    (`_call_tasks.LazyCallTask`) of an async function: its plan's runner returns the
    function's coroutine. Run as its own asyncio task (a context of its own)."""
    writes = task.writes
    runner, _, steps = deferred[D_PLAN]
    _CONFIG.set(task)
    lc = _modules.get(_LC_MODULE)
    if lc is not None:
        lc.var_child_runnable_config.set(LazyDictConfig(task))
    try:
        value = await runner(task.input)
        for _, writer in steps:
            writes.extend(writer._tuples(value))
        return value
    except BaseException as exc:
        if _verdict(task, exc, task.config, None, 0, None, True) is _RAISE:
            raise
        return None  # a command for this graph, applied
    finally:
        if CHILDREN:  # tasks it called end before it does
            await ajoin(task)


# ------------------------------------------------------------------ timed attempts


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
