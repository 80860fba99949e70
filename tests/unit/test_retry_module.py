"""pregel/_retry.py and _timed.py: policies, per-attempt config, failures, timed attempts.

Timing tests never race a sleep against a timeout of similar length: a timed-out attempt
sleeps far longer than its timeout, a progressing one waits on events or sleeps a small
fraction of it.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import deque
from datetime import datetime
from typing import Any

import pytest
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SEND,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_TASK_ID,
    CONFIG_KEY_THREAD_ID,
    CONFIG_KEY_TIMED_ATTEMPT_OBSERVER,
)
from warpgraph._internal._timeout import coerce_timeout_policy, sync_timeout_unsupported
from warpgraph.errors import GraphInterrupt, NodeCancelledError, NodeTimeoutError, ParentCommand
from warpgraph.pregel._retry import (
    _checkpoint_ns_for_parent_command,
    _ensure_execution_info,
    _should_retry_on,
    _TimedAttemptScope,  # (importable from _retry, where LangGraph's tests import it)
    arun_with_retry,
    run_with_retry,
)
from warpgraph.pregel._stream import Stream
from warpgraph.runtime import DEFAULT_RUNTIME, ExecutionInfo
from warpgraph.types import Command, PregelExecutableTask, RetryPolicy, TimeoutPolicy


def _task(proc: Any, *, timeout: Any = None, retry: Any = (), name: str = "t", writers=()):
    writes: deque = deque()
    config = {
        "run_id": "run-1",
        CONF: {
            CONFIG_KEY_RUNTIME: DEFAULT_RUNTIME.override(execution_info=None),
            CONFIG_KEY_CHECKPOINT_ID: "cp",
            CONFIG_KEY_CHECKPOINT_NS: f"{name}:tid",
            CONFIG_KEY_SEND: writes.extend,
            CONFIG_KEY_TASK_ID: "tid",
            CONFIG_KEY_THREAD_ID: "thread",
        },
    }
    return PregelExecutableTask(
        name=name,
        input=None,
        proc=proc,
        writes=writes,
        config=config,
        triggers=[name],
        retry_policy=retry,
        cache_key=None,
        id="tid",
        path=("__pregel_pull", name),
        writers=writers,
        timeout=coerce_timeout_policy(timeout),
    )


class _Fn:
    """A proc calling `fn(config)` (sync or async)."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def invoke(self, input: Any, config: Any) -> Any:
        return self.fn(config)

    async def ainvoke(self, input: Any, config: Any) -> Any:
        out = self.fn(config)
        return await out if asyncio.iscoroutine(out) else out


FAST = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=ValueError)


# ------------------------------------------------------------------ policies and helpers


def test_should_retry_on_forms():
    assert _should_retry_on(RetryPolicy(retry_on=ValueError), ValueError())
    assert not _should_retry_on(RetryPolicy(retry_on=ValueError), TypeError())
    assert _should_retry_on(RetryPolicy(retry_on=(KeyError, ValueError)), KeyError())
    assert not _should_retry_on(RetryPolicy(retry_on=()), ValueError())
    assert _should_retry_on(RetryPolicy(retry_on=lambda e: "x" in str(e)), ValueError("x"))
    assert _should_retry_on(RetryPolicy(), NodeTimeoutError("n", 1.0, kind="run", run_timeout=0.5))
    assert not _should_retry_on(RetryPolicy(), ValueError())
    with pytest.raises(TypeError, match="retry_on must be an Exception class"):
        _should_retry_on(RetryPolicy(retry_on=123), ValueError())  # type: ignore[arg-type]


def test_parent_namespace_skips_numeric_selectors():
    assert _checkpoint_ns_for_parent_command("") == ""
    assert _checkpoint_ns_for_parent_command("node:1") == ""
    assert _checkpoint_ns_for_parent_command("node:1|1|child:2|1") == "node:1"
    assert _checkpoint_ns_for_parent_command("p:1|1|c:1|1|n:1") == "p:1|1|c:1"


def test_ensure_execution_info():
    info = ExecutionInfo(checkpoint_id="c", checkpoint_ns="n", task_id="t")
    runtime = DEFAULT_RUNTIME.override(execution_info=info)
    assert _ensure_execution_info(runtime, {CONF: {}}, None) is runtime
    made = _ensure_execution_info(
        DEFAULT_RUNTIME, {"run_id": 7, CONF: {CONFIG_KEY_THREAD_ID: "th"}}, _task(None)
    ).execution_info
    assert (made.task_id, made.thread_id, made.run_id, made.checkpoint_id) == ("tid", "th", "7", "")


def test_sync_timeout_error_message():
    assert str(sync_timeout_unsupported("n")) == (
        "Node timeouts are only supported for async nodes because sync Python execution "
        "cannot be safely cancelled in-process. Node 'n' is sync."
    )
    with pytest.raises(ValueError, match="greater than 0"):
        coerce_timeout_policy(0)


# ------------------------------------------------------------------ one implementation, both ways


def _flaky(fails: int, seen: list) -> _Fn:
    def fn(config):
        info = config[CONF][CONFIG_KEY_RUNTIME].execution_info
        seen.append((info.node_attempt, info.node_first_attempt_time))
        if len(seen) <= fails:
            raise ValueError(f"fail {len(seen)}")
        return "ok"

    return _Fn(fn)


def _check_attempts(seen: list) -> None:
    assert [a for a, _ in seen] == [1, 2, 3]
    assert len({t for _, t in seen}) == 1 and seen[0][1] is not None


def test_sync_retries_then_returns_value():
    seen: list = []
    assert run_with_retry(_task(_flaky(2, seen), retry=(FAST,))) == "ok"
    _check_attempts(seen)


async def test_async_retries_then_returns_value():
    seen: list = []
    assert await arun_with_retry(_task(_flaky(2, seen), retry=(FAST,))) == "ok"
    _check_attempts(seen)


@pytest.mark.parametrize("aio", [False, True])
async def test_exhausted_retries_raise_last_error_with_note(aio):
    seen: list = []
    task = _task(_flaky(5, seen), retry=(FAST,), name="flaky")
    with pytest.raises(ValueError, match="fail 3") as info:
        await arun_with_retry(task) if aio else run_with_retry(task)
    # exceptions take notes from Python 3.11 on (as LangGraph, none before)
    notes = ["During task with name 'flaky' and id 'tid'"] if sys.version_info >= (3, 11) else []
    assert getattr(info.value, "__notes__", []) == notes


@pytest.mark.parametrize("aio", [False, True])
async def test_parent_command_for_this_graph_runs_writers(aio):
    applied: list = []

    class Writer:
        def invoke(self, value, config):
            applied.append(value)

    cmd = Command(graph="t:tid", update={"x": 1})

    def fn(config):
        raise ParentCommand(cmd)

    task = _task(_Fn(fn), writers=(Writer(),))
    assert (await arun_with_retry(task) if aio else run_with_retry(task)) is None
    assert applied == [cmd]


def test_sync_cancelled_error_is_a_node_failure():
    def fn(config):
        raise asyncio.CancelledError

    with pytest.raises(NodeCancelledError) as info:
        run_with_retry(_task(_Fn(fn), name="c"))
    assert info.value.node == "c" and isinstance(info.value.__cause__, asyncio.CancelledError)


def test_sync_task_with_timeout_is_rejected_unstarted():
    started = []
    task = _task(_Fn(started.append), timeout=1.0, name="s")
    with pytest.raises(ValueError, match="only supported for async nodes"):
        run_with_retry(task)
    assert not started


# ------------------------------------------------------------------ timed attempts


async def test_idle_timeout_cancels_and_drops_writes():
    cancelled = asyncio.Event()

    async def stuck(config):
        config[CONF][CONFIG_KEY_SEND]([("k", "before")])
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            config[CONF][CONFIG_KEY_SEND]([("k", "after")])  # dropped: the scope is closed
            cancelled.set()
            raise

    task = _task(_Fn(stuck), timeout=TimeoutPolicy(idle_timeout=0.05), name="stuck")
    with pytest.raises(NodeTimeoutError) as info:
        await arun_with_retry(task)
    await asyncio.wait_for(cancelled.wait(), 10)
    assert (info.value.kind, info.value.node, info.value.idle_timeout) == ("idle", "stuck", 0.05)
    assert not task.writes


async def test_heartbeat_keeps_an_idle_attempt_alive_and_run_timeout_still_fires():
    async def beating(config):
        runtime = config[CONF][CONFIG_KEY_RUNTIME]
        for _ in range(5):
            runtime.heartbeat()
            await asyncio.sleep(0.01)
        return "ok"

    policy = TimeoutPolicy(idle_timeout=1.0, refresh_on="heartbeat")
    assert await arun_with_retry(_task(_Fn(beating), timeout=policy)) == "ok"

    async def forever(config):
        while True:
            config[CONF][CONFIG_KEY_RUNTIME].heartbeat()
            await asyncio.sleep(0.005)

    with pytest.raises(NodeTimeoutError) as info:
        await arun_with_retry(_task(_Fn(forever), timeout=TimeoutPolicy(run_timeout=0.1)))
    assert info.value.kind == "run" and info.value.idle_timeout is None


async def test_observer_sees_finish_before_retry():
    events: list = []

    async def once_stuck(config):
        if config[CONF][CONFIG_KEY_RUNTIME].execution_info.node_attempt == 1:
            await asyncio.sleep(30)
        return "ok"

    policy = RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)
    task = _task(_Fn(once_stuck), timeout=TimeoutPolicy(idle_timeout=0.05), retry=(policy,))
    task.config[CONF][CONFIG_KEY_TIMED_ATTEMPT_OBSERVER] = events.append
    assert await arun_with_retry(task) == "ok"
    kinds = [(e.event, e.context.attempt, e.status) for e in events]
    assert kinds == [
        ("start", 1, None),
        ("finish", 1, "error"),
        ("start", 2, None),
        ("finish", 2, "success"),
    ]
    assert events[1].error_type == "NodeTimeoutError"
    assert isinstance(events[0].context.started_at, datetime)


async def test_bubble_up_finishes_as_success():
    events: list = []

    async def interrupted(config):
        raise GraphInterrupt(())

    task = _task(_Fn(interrupted), timeout=TimeoutPolicy(idle_timeout=1.0))
    task.config[CONF][CONFIG_KEY_TIMED_ATTEMPT_OBSERVER] = events.append
    with pytest.raises(GraphInterrupt):
        await arun_with_retry(task)
    assert [(e.event, e.status) for e in events] == [("start", None), ("finish", "success")]


async def test_stream_chunks_count_as_progress():
    release = asyncio.Event()

    class Streaming:
        async def astream(self, input, config):
            for i in range(3):
                yield i
            release.set()

    task = _task(Streaming(), timeout=TimeoutPolicy(idle_timeout=1.0))
    assert await arun_with_retry(task, None, stream=True) is None
    assert release.is_set()


def test_scope_guards_drop_after_close_and_call_outside_the_lock():
    scope = _TimedAttemptScope(refresh_on="auto")
    got: list = []

    def sink(chunk):
        assert not scope._lock.locked()
        got.append(chunk)

    stream = scope._guard_stream(Stream(sink, {"custom"}))
    writer = scope._guard_stream_writer(sink)
    stream(((), "custom", 1))
    stream.put(((), "custom", 2))
    writer(3)
    assert stream.modes == {"custom"}
    scope.close()
    stream(((), "custom", 4))
    writer(5)
    assert got == [((), "custom", 1), ((), "custom", 2), 3]
    with pytest.raises(asyncio.CancelledError):
        scope._guard_call(lambda: None)()


def test_scope_send_is_serialised_with_close():
    scope = _TimedAttemptScope(refresh_on="auto")
    got: list = []
    send = scope._guard_send(got.extend)
    entered, proceed = threading.Event(), threading.Event()

    def slow_extend(writes):
        entered.set()
        proceed.wait(10)
        got.extend(writes)

    slow = scope._guard_send(slow_extend)
    t = threading.Thread(target=slow, args=([("a", 1)],))
    t.start()
    assert entered.wait(10)
    closer = threading.Thread(target=scope.close)
    closer.start()
    proceed.set()
    t.join(10)
    closer.join(10)
    send([("b", 2)])  # after close: dropped
    assert got == [("a", 1)]


def test_stream_config_key_guarded_in_timed_config():
    scope = _TimedAttemptScope(refresh_on="heartbeat")
    got: list = []
    config = scope.wrap_config({CONF: {CONFIG_KEY_STREAM: Stream(got.append, {"custom"})}})
    config[CONF][CONFIG_KEY_STREAM](((), "custom", "x"))
    assert got == [((), "custom", "x")]
