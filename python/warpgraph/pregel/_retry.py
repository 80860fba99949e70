"""Running one task: per-attempt config, retry policy, `Command(graph=...)`, timeouts.

The policy is written once: `_verdict` decides what a failed attempt means (a command for
this graph applied here, the failure to raise or the error it stands for, or the delay
before the next attempt: which exception retries, backoff, jitter, attempts), and
`_Attempts` holds one task's run of attempts (the first attempt's config, the failures so
far, the next attempt's config). The runners are thin drivers of it: `run_with_retry`
and `arun_with_retry` differ only in how they call the node and wait (and the async one
in timeouts and streaming); `_run_unconfigured` / `_arun_unconfigured` ask `_verdict`
alone (they have no policy, so a failure never retries).

Timed attempts (async only) run under `pregel/_timed.py`'s scope; their finish is always
reported before any retry or handler.

Tasks with no policy, no timeout and a config not built yet take `_run_unconfigured`,
which pays for none of this unless the node fails.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import random
import time
from collections.abc import Sequence
from contextvars import copy_context
from sys import modules as _modules
from typing import Any

from warpgraph._internal import _constants as _k
from warpgraph._internal._runnable import _RUNNABLE_TYPES, _ainvoke, _InContext, _is_runnable
from warpgraph._internal._timeout import sync_timeout_unsupported
from warpgraph.config import (
    _CONFIG,
    _LC_MODULE,
    LazyDictConfig,
    recast_checkpoint_ns,
    reset_config_var,
    set_config_var,
)
from warpgraph.errors import GraphBubbleUp, NodeCancelledError, ParentCommand
from warpgraph.pregel._algo import D_LOOP, D_PLAN, LazyTask, _stored_config, async_plans_of
from warpgraph.pregel._calls import CHILDREN, ajoin, join
from warpgraph.pregel._timed import (
    _arun_with_timeout,
    _AttemptContext,
    _finish_timed_attempt,
    _start_timed_attempt,
    _TimedAttemptScope,  # noqa: F401 - at LangGraph's module path (its tests import it here)
)
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
        if type(deferred) is tuple and deferred[D_PLAN] is not None:
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
    if type(task) is LazyTask and configurable is None and not stream and task.timeout is None:
        deferred = _stored_config(task)
        if type(deferred) is tuple and not (task.retry_policy or retry_policy):
            # (a LazyTask runs its node's proc: make_tasks and lone steps make them so)
            plan = async_plans_of(deferred[D_LOOP].derived).get(task.name)
            if plan is not None:
                return await _arun_planned(task, deferred, plan)
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
    tokens = _stand_in(task)
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
            _stand_down(tokens)


def _stand_in(task: Any) -> tuple:
    """Let `task` stand in for its unbuilt config in the config variables (warpgraph's and,
    when loaded, langchain-core's); the tokens `_stand_down` resets them with."""
    lc = _modules.get(_LC_MODULE)
    lc_token = lc.var_child_runnable_config.set(LazyDictConfig(task)) if lc is not None else None
    return _CONFIG.set(task), lc, lc_token


def _stand_down(tokens: tuple) -> None:
    token, lc, lc_token = tokens
    if lc_token is not None:
        lc.var_child_runnable_config.reset(lc_token)
    _CONFIG.reset(token)


async def _arun_planned(task: Any, deferred: tuple, plan: tuple) -> Any:
    """Async twin of `_run_unconfigured` for a LazyTask of a node with an async plan
    (`_algo.async_node_plan`): the node's async form runs in a copy of the context made for
    it (as the general path's RunnableSeq runs it: `_InContext`), its writers after it in
    this one; the config is built only if something asks for it."""
    writes = task.writes
    afunc, recurse, steps = plan
    tokens = _stand_in(task)
    try:  # (a task run here is fresh: its writes are empty)
        value = task.input if afunc is None else await _InContext(afunc(task.input), copy_context())
        if recurse and _is_runnable(value):
            ainvoke = getattr(value, "ainvoke", None)
            if ainvoke is not None:
                value = await ainvoke(task.input, task.config)
            else:
                value = value.invoke(task.input, task.config)
        for kind, writer in steps:
            if kind == 0:
                writes.extend(writer._tuples(value))
            else:
                await writer.ainvoke_unconfigured(value, task, deferred[D_LOOP].engine, writes)
        return value
    except BaseException as exc:
        if _verdict(task, exc, task.config, None, 0, None, True) is _RAISE:
            raise
        return None  # a command for this graph, applied
    finally:
        if CHILDREN:  # tasks it called (functional API) end before it does
            await ajoin(task)
        _stand_down(tokens)


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
