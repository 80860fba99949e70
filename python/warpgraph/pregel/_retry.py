"""Running one task: per-attempt config, retry policy, `Command(graph=...)` handling.

`run_with_retry` / `arun_with_retry` share every decision (config patching, which policy
applies, the backoff interval, parent-command routing); only the call and the sleep differ.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import random
import time
from collections.abc import Sequence
from sys import modules as _modules
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    CONFIG_KEY_THREAD_ID,
    NS_SEP,
)
from warpgraph._internal._runnable import _RUNNABLE_TYPES, _ainvoke, _is_runnable
from warpgraph.config import (
    _CONFIG,
    _LC_MODULE,
    LazyDictConfig,
    recast_checkpoint_ns,
    reset_config_var,
    set_config_var,
)
from warpgraph.errors import GraphBubbleUp, NodeCancelledError, ParentCommand
from warpgraph.pregel._algo import LazyTask, _raw_config
from warpgraph.runtime import ExecutionInfo, Runtime

__all__ = ("arun_with_retry", "run_with_retry")

logger = logging.getLogger(__name__)
_PARENT = "__parent__"  # Command.PARENT


def _policies(task: Any, retry_policy: Sequence[Any] | None) -> Sequence[Any] | None:
    return task.retry_policy or retry_policy


def _with_attempt(config: dict[str, Any], attempt: int, first_time: float | None) -> dict:
    """`config` whose runtime's execution_info has `node_attempt=attempt` and, when given,
    `node_first_attempt_time=first_time`. Unchanged when the config holds no Runtime, or
    when the loop already filled both fields for the first attempt."""
    conf = config.get(CONF)
    runtime = conf.get(CONFIG_KEY_RUNTIME) if conf else None
    if not isinstance(runtime, Runtime):
        return config
    info = runtime.execution_info
    if info.node_attempt == attempt and (
        first_time is None or info.node_first_attempt_time is not None
    ):
        return config
    if first_time is None:
        first_time = info.node_first_attempt_time
    if type(info) is ExecutionInfo:
        info = ExecutionInfo(
            checkpoint_id=info.checkpoint_id,
            checkpoint_ns=info.checkpoint_ns,
            task_id=info.task_id,
            thread_id=info.thread_id,
            run_id=info.run_id,
            node_attempt=attempt,
            node_first_attempt_time=first_time,
        )
    else:
        info = dataclasses.replace(info, node_attempt=attempt, node_first_attempt_time=first_time)
    if type(runtime) is Runtime:
        runtime = Runtime(
            context=runtime.context,
            store=runtime.store,
            stream_writer=runtime.stream_writer,
            heartbeat=runtime.heartbeat,
            previous=runtime.previous,
            execution_info=info,
            server_info=runtime.server_info,
            control=runtime.control,
        )
    else:
        runtime = dataclasses.replace(runtime, execution_info=info)
    return {**config, CONF: {**conf, CONFIG_KEY_RUNTIME: runtime}}


def _first_attempt_ready(config: dict[str, Any]) -> bool:
    """The config already is the first attempt's (the loop filled the runtime's execution
    info with attempt 1 and its start time), or holds no Runtime to patch."""
    conf = config.get(CONF)
    runtime = conf.get(CONFIG_KEY_RUNTIME) if conf else None
    if type(runtime) is not Runtime:
        return not isinstance(runtime, Runtime)
    info = runtime.execution_info
    return info is not None and info.node_attempt == 1 and info.node_first_attempt_time is not None


def _fallback_info(task: Any, config: dict[str, Any], conf: dict[str, Any]) -> ExecutionInfo:
    """Execution info from the config, for a Runtime the loop left without one. The
    checkpoint id is the config's, else the graph's entry in the checkpoint map."""
    ns = conf.get(CONFIG_KEY_CHECKPOINT_NS) or ""
    checkpoint_id = conf.get(CONFIG_KEY_CHECKPOINT_ID)
    if not checkpoint_id:
        graph_ns = ns.rsplit(NS_SEP, 1)[0] if NS_SEP in ns else ""
        checkpoint_id = (conf.get(CONFIG_KEY_CHECKPOINT_MAP) or {}).get(graph_ns)
    rid = config.get("run_id")
    return ExecutionInfo(
        checkpoint_id=checkpoint_id or "",
        checkpoint_ns=ns,
        task_id=conf.get(CONFIG_KEY_TASK_ID) or task.id,
        thread_id=conf.get(CONFIG_KEY_THREAD_ID),
        run_id=str(rid) if rid else None,
    )


def _initial_config(task: Any, configurable: dict[str, Any] | None) -> dict[str, Any]:
    config = task.config
    if configurable:
        config = {**config, CONF: {**config.get(CONF, {}), **configurable}}
    conf = config.get(CONF)
    if conf:
        runtime = conf.get(CONFIG_KEY_RUNTIME)
        if isinstance(runtime, Runtime) and runtime.execution_info is None:
            info = _fallback_info(task, config, conf)
            config = {
                **config,
                CONF: {**conf, CONFIG_KEY_RUNTIME: runtime.override(execution_info=info)},
            }
    return config


def _parent_ns(ns: str) -> str:
    """The parent graph's namespace: drop the current frame and numeric selectors."""
    parts = ns.split(NS_SEP)
    end = len(parts)
    for drop_frame in (True, False):
        while end and parts[end - 1].isdigit():  # numeric selectors are not levels
            end -= 1
        if drop_frame and end:  # the current frame itself
            end -= 1
    return NS_SEP.join(parts[:end])


def _command_target(task: Any, exc: ParentCommand, config: dict[str, Any]) -> bool:
    """True when the command is addressed to this graph (apply it with the task's writers);
    otherwise re-address a `Command.PARENT` to the parent namespace (to re-raise)."""
    ns: str = config[CONF][CONFIG_KEY_CHECKPOINT_NS]
    cmd = exc.args[0]
    if cmd.graph in (ns, recast_checkpoint_ns(ns), task.name):
        return True
    if cmd.graph == _PARENT:
        exc.args = (dataclasses.replace(cmd, graph=_parent_ns(ns)),)
    return False


def _matching_policy(policies: Sequence[Any], exc: Exception) -> Any:
    for policy in policies:
        retry_on = policy.retry_on
        if isinstance(retry_on, Sequence):
            hit = isinstance(exc, tuple(retry_on))
        elif isinstance(retry_on, type) and issubclass(retry_on, Exception):
            hit = isinstance(exc, retry_on)
        elif callable(retry_on):
            hit = retry_on(exc)
        else:
            raise TypeError(
                "retry_on must be an Exception class, a list or tuple of Exception classes,"
                " or a callable"
            )
        if hit:
            return policy
    return None


def _retry_delay(
    task: Any, exc: Exception, policies: Sequence[Any] | None, failures: int
) -> float | None:
    """Seconds to wait before the next attempt after the `failures`-th failure, or None to
    give up (the caller re-raises). Adds the task note to the exception."""
    if hasattr(exc, "add_note"):  # Python 3.11+
        exc.add_note(f"During task with name '{task.name}' and id '{task.id}'")
    if not policies:
        return None
    policy = _matching_policy(policies, exc)
    if policy is None or failures >= policy.max_attempts:
        return None
    interval = min(
        policy.max_interval, policy.initial_interval * policy.backoff_factor ** (failures - 1)
    )
    return interval + random.uniform(0, 1) if policy.jitter else interval


def _log_retry(task: Any, exc: Exception, delay: float, failures: int) -> None:
    logger.info(
        f"Retrying task {task.name} after {delay:.2f} seconds (attempt {failures}) after "
        f"{exc.__class__.__name__} {exc}",
        exc_info=exc,
    )


def _retry_config(config: dict[str, Any]) -> dict[str, Any]:
    """Config for a retry: subgraphs resume, and interrupt() calls count from the first."""
    conf = {**config[CONF], CONFIG_KEY_RESUMING: True}
    scratchpad = conf.get(CONFIG_KEY_SCRATCHPAD)
    if scratchpad is not None:
        counter = itertools.count(0).__next__
        if dataclasses.is_dataclass(scratchpad):
            conf[CONFIG_KEY_SCRATCHPAD] = dataclasses.replace(scratchpad, interrupt_counter=counter)
        elif hasattr(scratchpad, "_replace"):
            conf[CONFIG_KEY_SCRATCHPAD] = scratchpad._replace(interrupt_counter=counter)
    return {**config, CONF: conf}


def _sync_timeout_error(name: str) -> ValueError:
    return ValueError(
        "Node timeouts are only supported for async nodes because sync Python execution "
        f"cannot be safely cancelled in-process. Node {name!r} is sync."
    )


def run_with_retry(
    task: Any,
    retry_policy: Sequence[Any] | None = None,
    configurable: dict[str, Any] | None = None,
) -> None:
    """Run `task.proc.invoke(task.input, config)` with the task's (or the given) retry
    policies; the task's writes are reset before each attempt. Raises the final error."""
    policies = task.retry_policy or retry_policy
    if getattr(task, "timeout", None) is not None:
        raise _sync_timeout_error(task.name)
    if type(task) is LazyTask and configurable is None and not policies:
        raw = _raw_config(task)
        if type(raw) is tuple:
            return _run_unconfigured(task, raw)
    config = task.config
    if configurable is not None or not _first_attempt_ready(config):
        config = _with_attempt(_initial_config(task, configurable), 1, time.time())
    failures = 0
    while True:
        if failures:
            config = _with_attempt(config, failures + 1, None)
        tokens = set_config_var(config)
        try:
            task.writes.clear()
            task.proc.invoke(task.input, config)
            return
        except ParentCommand as exc:
            if _command_target(task, exc, config):
                for writer in task.writers:
                    writer.invoke(exc.args[0], config)
                return
            raise
        except GraphBubbleUp:
            raise
        except asyncio.CancelledError as exc:
            raise NodeCancelledError(task.name) from exc
        except Exception as exc:
            failures += 1
            delay = _retry_delay(task, exc, policies, failures)
            if delay is None:
                raise
            time.sleep(delay)
            _log_retry(task, exc, delay, failures)
            config = _retry_config(config)
        finally:
            reset_config_var(tokens)


def _run_unconfigured(task: Any, raw: tuple, own_context: bool = False) -> None:
    """`run_with_retry` without retry policies for a LazyTask whose config is not built:
    its plan (see `_algo.node_plan`) runs the node function and writers exactly as
    `task.proc.invoke` would; the config is built only if something asks for it (the task
    stands in the config variable meanwhile). `own_context`: the caller runs this in a
    context copy made for this task alone, so the variables set here are not reset (the
    copy is dropped with them)."""
    writes = task.writes
    func, recurse, steps = raw[4]
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
                writer.invoke_unconfigured(value, task, raw[0].engine, writes)
    except ParentCommand as exc:
        config = task.config
        if _command_target(task, exc, config):
            for writer in task.writers:
                writer.invoke(exc.args[0], config)
            return
        raise
    except GraphBubbleUp:
        raise
    except asyncio.CancelledError as exc:
        raise NodeCancelledError(task.name) from exc
    except Exception as exc:
        _retry_delay(task, exc, None, 1)  # adds the task note; no policy: give up
        raise
    finally:
        if not own_context:
            if lc_token is not None:
                lc.var_child_runnable_config.reset(lc_token)
            _CONFIG.reset(token)


def _user_raised_cancel() -> bool:
    """The CancelledError came from the node body, not from a cancel() of its task."""
    current = asyncio.current_task()
    cancelling = getattr(current, "cancelling", None)  # Python 3.11+
    return cancelling is not None and cancelling() == 0


async def arun_with_retry(
    task: Any,
    retry_policy: Sequence[Any] | None = None,
    configurable: dict[str, Any] | None = None,
) -> None:
    """Async twin of `run_with_retry` (awaits `task.proc.ainvoke`; honours task.timeout)."""
    policies = _policies(task, retry_policy)
    timeout = getattr(task, "timeout", None)
    config = _initial_config(task, configurable)
    first_time: float | None = time.time()
    failures = 0
    while True:
        config = _with_attempt(config, failures + 1, first_time)
        first_time = None
        tokens = set_config_var(config)
        try:
            task.writes.clear()
            if timeout is None:
                await _ainvoke(task.proc, task.input, config)
            else:
                await _arun_with_timeout(task, config, timeout)
            return
        except ParentCommand as exc:
            if _command_target(task, exc, config):
                for writer in task.writers:
                    writer.invoke(exc.args[0], config)
                return
            raise
        except GraphBubbleUp:
            raise
        except asyncio.CancelledError as exc:
            if _user_raised_cancel():
                raise NodeCancelledError(task.name) from exc
            raise
        except Exception as exc:
            failures += 1
            delay = _retry_delay(task, exc, policies, failures)
            if delay is None:
                raise
            await asyncio.sleep(delay)
            _log_retry(task, exc, delay, failures)
            config = _retry_config(config)
        finally:
            reset_config_var(tokens)


# ------------------------------------------------------------------ async node timeouts


def _seconds(value: Any) -> float | None:
    if value is None:
        return None
    return value.total_seconds() if hasattr(value, "total_seconds") else float(value)


class _Progress:
    """Idle clock of one timed attempt; writes and stream output stop once it is closed."""

    __slots__ = ("auto", "last", "open")

    def __init__(self, auto: bool) -> None:
        self.last = time.monotonic()
        self.open = True
        self.auto = auto

    def touch(self) -> None:
        self.last = time.monotonic()

    def guard(self, fn: Any) -> Any:
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if not self.open:
                return None
            if self.auto:
                self.last = time.monotonic()
            return fn(*args, **kwargs)

        return guarded


def _timed_config(config: dict[str, Any], progress: _Progress, idle: bool) -> dict[str, Any]:
    from warpgraph._internal._constants import CONFIG_KEY_STREAM

    conf = dict(config.get(CONF, {}))
    for key in (CONFIG_KEY_SEND, CONFIG_KEY_STREAM):
        if conf.get(key) is not None:
            conf[key] = progress.guard(conf[key])
    runtime = conf.get(CONFIG_KEY_RUNTIME)
    if isinstance(runtime, Runtime):
        changes: dict[str, Any] = {"stream_writer": progress.guard(runtime.stream_writer)}
        if idle:
            changes["heartbeat"] = progress.touch
        conf[CONFIG_KEY_RUNTIME] = runtime.override(**changes)
    return {**config, CONF: conf}


async def _arun_with_timeout(task: Any, config: dict[str, Any], policy: Any) -> Any:
    """Await the task's proc under its TimeoutPolicy; NodeTimeoutError when the run timeout
    passes or no progress (writes, custom stream output, heartbeat) is made within the idle
    timeout. The attempt is cancelled and its writes are dropped."""
    from warpgraph.errors import NodeTimeoutError

    run_s, idle_s = _seconds(policy.run_timeout), _seconds(policy.idle_timeout)
    progress = _Progress(auto=idle_s is not None and policy.refresh_on == "auto")
    scoped = _timed_config(config, progress, idle_s is not None)
    tokens = set_config_var(scoped)
    try:
        bg = asyncio.ensure_future(_ainvoke(task.proc, task.input, scoped))
    finally:
        reset_config_var(tokens)
    start = time.monotonic()
    try:
        while True:
            now = time.monotonic()
            limits = []
            if run_s is not None:
                limits.append((start + run_s, "run"))
            if idle_s is not None:
                limits.append((progress.last + idle_s, "idle"))
            deadline, kind = min(limits)
            if deadline <= now:
                progress.open = False
                task.writes.clear()
                bg.cancel()
                raise NodeTimeoutError(
                    task.name, now - start, kind=kind, idle_timeout=idle_s, run_timeout=run_s
                )
            done, _ = await asyncio.wait((bg,), timeout=deadline - now)
            if done:
                return bg.result()
    except asyncio.CancelledError:
        bg.cancel()
        raise
    finally:
        progress.open = False
