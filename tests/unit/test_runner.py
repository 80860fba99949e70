"""PregelRunner / retry behaviour, compared with LangGraph 1.2.24's runner where deterministic.

Both runners get equivalent tasks (node -> writer sequence, a send function collecting the
task's writes, a Runtime with execution info). LangGraph's runner commits writes itself;
ours reports `on_done(task, exc)` and the test turns that into the same writes the loop puts
(`_commit`), so the two can be compared.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import sys
import threading
import time
import weakref
from collections import deque
from typing import Any

import pytest
from langgraph._internal import _runnable as lg_runnable
from langgraph.errors import GraphInterrupt as LGInterrupt
from langgraph.errors import ParentCommand as LGParentCommand
from langgraph.pregel._executor import AsyncBackgroundExecutor, BackgroundExecutor
from langgraph.pregel._runner import PregelRunner as LGRunner
from langgraph.runtime import ExecutionInfo as LGInfo
from langgraph.runtime import Runtime as LGRuntime
from langgraph.types import Command as LGCommand
from langgraph.types import Interrupt as LGInterruptValue
from langgraph.types import PregelExecutableTask as LGTask
from langgraph.types import RetryPolicy as LGRetryPolicy
from warpgraph._internal import _runnable as wg_runnable
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SEND,
    ERROR,
    INTERRUPT,
    NO_WRITES,
)
from warpgraph._internal._workers import get_pool
from warpgraph.config import get_config
from warpgraph.errors import GraphBubbleUp, GraphInterrupt, ParentCommand
from warpgraph.pregel._runner import DEFAULT_MAX_CONCURRENCY, PregelRunner
from warpgraph.runtime import ExecutionInfo, Runtime
from warpgraph.types import Command, Interrupt, PregelExecutableTask, RetryPolicy

NS = "parent:p1|child:c1"

# ----------------------------------------------------------------------------- harness


class _Side:
    """Classes of one library, so a scenario can be written once for both."""

    def __init__(self, name: str) -> None:
        self.name = name
        lgs = name == "langgraph"
        self.runnable = lg_runnable if lgs else wg_runnable
        self.Task = LGTask if lgs else PregelExecutableTask
        self.Runtime = LGRuntime if lgs else Runtime
        self.Info = LGInfo if lgs else ExecutionInfo
        self.GraphInterrupt = LGInterrupt if lgs else GraphInterrupt
        self.Interrupt = LGInterruptValue if lgs else Interrupt
        self.ParentCommand = LGParentCommand if lgs else ParentCommand
        self.Command = LGCommand if lgs else Command
        self.RetryPolicy = LGRetryPolicy if lgs else RetryPolicy


LG, WG = _Side("langgraph"), _Side("warpgraph")


def _writer(side: _Side, seen: list | None = None) -> Any:
    def write(value, config):
        if seen is not None:
            seen.append(value)
        config[CONF][CONFIG_KEY_SEND]([("out", value)])
        return value

    return side.runnable.RunnableCallable(write, trace=False)


def make_task(side: _Side, name: str, fn: Any, i: int = 0, retry=(), writers=(), ns=NS) -> Any:
    writes: deque = deque()
    runtime = side.Runtime(
        execution_info=side.Info(checkpoint_id="ckpt", checkpoint_ns=ns, task_id=str(i))
    )
    config = {
        CONF: {
            CONFIG_KEY_SEND: writes.extend,
            CONFIG_KEY_RUNTIME: runtime,
            CONFIG_KEY_CHECKPOINT_NS: ns,
        },
    }
    node = side.runnable.coerce_to_runnable(fn, name=name, trace=False)
    proc = side.runnable.RunnableSeq(node, _writer(side))
    return side.Task(
        name=name,
        input=i,
        proc=proc,
        writes=writes,
        config=config,
        triggers=(),
        retry_policy=retry,
        cache_key=None,
        id=str(i),
        path=("__pregel_pull", name),
        writers=writers,
    )


def _commit(commits: list, task: Any, exc: BaseException | None) -> None:
    """What LangGraph's runner puts for a settled task (the loop's job in warpgraph)."""
    if exc is None:
        commits.append((task.id, list(task.writes) or [(NO_WRITES, None)]))
    elif isinstance(exc, GraphInterrupt):
        if exc.args[0]:
            commits.append((task.id, [(INTERRUPT, exc.args[0])]))
    elif isinstance(exc, GraphBubbleUp):
        pass
    else:
        commits.append((task.id, [*task.writes, (ERROR, exc)]))


def wg_tick(tasks: list, **kw: Any) -> tuple[list, BaseException | None]:
    commits: list = []
    try:
        PregelRunner(**kw).tick(tasks, on_done=lambda t, e: _commit(commits, t, e))
    except BaseException as exc:  # noqa: BLE001
        return commits, exc
    return commits, None


async def wg_atick(tasks: list, **kw: Any) -> tuple[list, BaseException | None]:
    commits: list = []
    try:
        await PregelRunner(**kw).atick(tasks, on_done=lambda t, e: _commit(commits, t, e))
    except BaseException as exc:  # noqa: BLE001
        return commits, exc
    return commits, None


def lg_tick(tasks: list, max_concurrency: int | None = None) -> tuple[list, Any]:
    commits: list = []

    def put_writes(task_id, writes):
        commits.append((task_id, list(writes)))

    err = None
    config = {"max_concurrency": max_concurrency} if max_concurrency else {}
    try:
        with BackgroundExecutor(config) as submit:
            runner = LGRunner(submit=weakref.WeakMethod(submit), put_writes=weakref.ref(put_writes))
            try:
                for _ in runner.tick(tasks, schedule_task=None):
                    pass
            except BaseException as exc:  # noqa: BLE001
                err = exc
    except BaseException:  # noqa: BLE001, S110 - the executor re-raises the same task error
        pass
    return commits, err


async def lg_atick(tasks: list) -> tuple[list, Any]:
    commits: list = []

    def put_writes(task_id, writes):
        commits.append((task_id, list(writes)))

    err = None
    try:
        async with AsyncBackgroundExecutor({}) as submit:
            runner = LGRunner(submit=weakref.WeakMethod(submit), put_writes=weakref.ref(put_writes))
            try:
                async for _ in runner.atick(tasks, schedule_task=None):
                    pass
            except BaseException as exc:  # noqa: BLE001
                err = exc
    except BaseException:  # noqa: BLE001, S110 - the executor re-raises the same task error
        pass
    return commits, err


def _norm(value: Any) -> Any:
    """Comparable form: exceptions and interrupts by class name and content."""
    if isinstance(value, BaseException):
        if isinstance(value, (GraphInterrupt, LGInterrupt)):
            return ("GraphInterrupt", sorted(_norm(i) for i in value.args[0]))
        return (type(value).__name__, str(value))
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", repr(value.value), value.id)
    if isinstance(value, (list, tuple)):
        return type(value)(_norm(v) for v in value)
    return value


def compare(scenario) -> tuple[Any, Any]:
    """Run `scenario(side) -> tasks` on both runners; commits (by task) and errors."""
    ours = wg_tick(scenario(WG))
    theirs = lg_tick(scenario(LG))
    return (sorted(_norm(ours[0])), _norm(ours[1])), (sorted(_norm(theirs[0])), _norm(theirs[1]))


def ok(x):
    return x


def bad(x):
    raise ValueError(f"bad{x}")


# ------------------------------------------------------------------ compared with langgraph


def test_all_succeed_same_writes():
    def scenario(side):
        return [make_task(side, f"n{i}", ok, i) for i in range(4)]

    ours, theirs = compare(scenario)
    assert ours == theirs
    assert ours[1] is None and len(ours[0]) == 4


def test_one_failure_among_running_tasks():
    def scenario(side):
        gate = threading.Barrier(3, timeout=10)  # all three run before any finishes

        def node(fail):
            def fn(x):
                gate.wait()
                if fail:
                    raise ValueError(f"bad{x}")
                return x

            return fn

        return [make_task(side, f"n{i}", node(i == 1), i) for i in range(3)]

    ours, theirs = compare(scenario)
    assert ours == theirs
    assert ours[1] == ("ValueError", "bad1")


def _early_key_error(side, x):
    return KeyError("early")


def _early_interrupt(side, x):
    return side.GraphInterrupt((side.Interrupt(value=x, id="i"),))


@pytest.mark.parametrize(
    ("early_error", "late_error", "raised"),
    [
        (_early_key_error, ValueError("late"), ("KeyError", "'early'")),
        (_early_interrupt, ValueError("boom"), ("ValueError", "boom")),
    ],
    ids=["first_error_to_complete_is_raised", "error_wins_over_interrupt"],
)
def test_outcome_of_two_failing_tasks(early_error, late_error, raised):
    """Two tasks start together; one fails at once, the other later: the step raises the
    first error to complete, and an error rather than an interrupt."""

    def scenario(side):
        gate = threading.Barrier(2, timeout=10)
        first_done = threading.Event()

        def early(x):
            gate.wait()
            try:
                raise early_error(side, x)
            finally:
                first_done.set()

        def late(x):
            gate.wait()
            first_done.wait(5)
            time.sleep(0.05)
            raise late_error

        return [make_task(side, "late", late, 0), make_task(side, "early", early, 1)]

    ours, theirs = compare(scenario)
    assert ours == theirs
    assert ours[1] == raised
    assert len(ours[0]) == 2  # the running task was waited for and recorded


def test_interrupts_of_several_tasks_are_merged():
    def scenario(side):
        def intr(x):
            raise side.GraphInterrupt((side.Interrupt(value=x, id=f"i{x}"),))

        return [
            make_task(side, "a", intr, 0),
            make_task(side, "b", intr, 1),
            make_task(side, "c", ok, 2),
        ]

    ours, theirs = compare(scenario)
    assert ours == theirs
    assert ours[1][0] == "GraphInterrupt" and len(ours[1][1]) == 2


def test_interrupts_merged_in_task_order():
    def intr(x):
        time.sleep(0.05 * (3 - x))  # later tasks finish first
        raise GraphInterrupt((Interrupt(value=x, id=f"i{x}"),))

    _, exc = wg_tick([make_task(WG, f"n{i}", intr, i) for i in range(3)])
    assert isinstance(exc, GraphInterrupt)
    assert [i.value for i in exc.args[0]] == [0, 1, 2]


def test_single_task_raises_the_same_objects():
    for side, tick in ((WG, wg_tick), (LG, lg_tick)):
        raised = []

        def fail(x, side=side, raised=raised):
            raised.append(side.GraphInterrupt((side.Interrupt(value=1, id="x"),)))
            raise raised[-1]

        _, exc = tick([make_task(side, "a", fail)])
        assert exc is raised[0]
        _, exc = tick([make_task(side, "a", bad)])
        assert isinstance(exc, ValueError)
        notes = ["During task with name 'a' and id '0'"] if sys.version_info >= (3, 11) else []
        assert getattr(exc, "__notes__", []) == notes  # notes from Python 3.11 on


def test_parent_command_is_readdressed_like_langgraph():
    def scenario(side):
        def node(x):
            raise side.ParentCommand(side.Command(graph=side.Command.PARENT, update={"k": x}))

        return [make_task(side, "child", node, 3)]

    ours, theirs = wg_tick(scenario(WG)), lg_tick(scenario(LG))
    assert isinstance(ours[1], ParentCommand) and isinstance(theirs[1], LGParentCommand)
    assert ours[1].args[0].graph == theirs[1].args[0].graph == "parent:p1"
    assert ours[1].args[0].update == theirs[1].args[0].update == {"k": 3}
    assert ours[0] == theirs[0] == []


@pytest.mark.parametrize("target", ["child", NS, "parent|child"])
def test_command_for_current_graph_runs_writers(target):
    def scenario(side, seen):
        def node(x):
            raise side.ParentCommand(side.Command(graph=target, update={"k": x}))

        return [make_task(side, "child", node, 3, writers=[_writer(side, seen)])]

    results = []
    for side, tick in ((WG, wg_tick), (LG, lg_tick)):
        seen: list = []
        commits, exc = tick(scenario(side, seen))
        results.append((exc, [c[0] for c in commits], [s.update for s in seen]))
    assert results[0] == results[1] == (None, ["3"], [{"k": 3}])


def test_parent_command_with_another_task_still_running():
    def scenario(side):
        def cmd(x):
            raise side.ParentCommand(side.Command(graph=side.Command.PARENT, goto="x"))

        return [make_task(side, "child", cmd, 0), make_task(side, "b", ok, 1)]

    ours, theirs = compare(scenario)
    assert ours == theirs


# ----------------------------------------------------------------------------- retries


def _retry_run(side: _Side, tick, policy_kw: dict, fail_times: int, exc_type=ValueError):
    attempts: list = []

    def node(x, config):
        conf = config[CONF]
        attempts.append(
            (conf[CONFIG_KEY_RUNTIME].execution_info.node_attempt, conf.get(CONFIG_KEY_RESUMING))
        )
        if len(attempts) <= fail_times:
            raise exc_type(f"fail {len(attempts)}")
        return x

    policy = side.RetryPolicy(**policy_kw)
    commits, exc = tick([make_task(side, "r", node, 5, retry=(policy,))])
    return attempts, _norm(commits), _norm(exc)


@pytest.mark.parametrize(
    "policy_kw, fail_times, exc_type",
    [
        ({"max_attempts": 4, "retry_on": ValueError}, 2, ValueError),
        ({"max_attempts": 3, "retry_on": ValueError}, 5, ValueError),
        ({"max_attempts": 3, "retry_on": (KeyError, ValueError)}, 1, ValueError),
        ({"max_attempts": 3, "retry_on": KeyError}, 1, ValueError),
        ({"max_attempts": 3, "retry_on": lambda e: "1" in str(e)}, 5, ValueError),
        ({"max_attempts": 3}, 1, ValueError),  # default_retry_on: ValueError not retried
        ({"max_attempts": 3}, 1, ConnectionError),  # ... ConnectionError is
    ],
)
def test_retry_policy_matches_langgraph(monkeypatch, policy_kw, fail_times, exc_type):
    sleeps: list = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    policy_kw = {
        "initial_interval": 0.01,
        "backoff_factor": 3.0,
        "max_interval": 0.05,
        "jitter": False,
        **policy_kw,
    }
    ours = _retry_run(WG, wg_tick, policy_kw, fail_times, exc_type)
    our_sleeps = list(sleeps)
    sleeps.clear()
    theirs = _retry_run(LG, lg_tick, policy_kw, fail_times, exc_type)
    assert ours == theirs
    assert our_sleeps == sleeps


def test_backoff_intervals_without_jitter(monkeypatch):
    sleeps: list = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    kw = {
        "initial_interval": 0.5,
        "backoff_factor": 2.0,
        "max_interval": 1.5,
        "max_attempts": 5,
        "jitter": False,
        "retry_on": ValueError,
    }
    attempts, _, exc = _retry_run(WG, wg_tick, kw, 10)
    assert [a for a, _ in attempts] == [1, 2, 3, 4, 5]
    assert sleeps == [0.5, 1.0, 1.5, 1.5]  # min(max_interval, initial * factor**(n-1))
    assert exc[0] == "ValueError"


def test_jitter_adds_up_to_one_second(monkeypatch):
    sleeps: list = []
    monkeypatch.setattr(time, "sleep", sleeps.append)
    kw = {"initial_interval": 0.25, "max_attempts": 2, "jitter": True, "retry_on": ValueError}
    _retry_run(WG, wg_tick, kw, 1)
    assert len(sleeps) == 1 and 0.25 <= sleeps[0] <= 1.25


def test_bubble_up_is_never_retried():
    calls = []

    def node(x):
        calls.append(x)
        raise GraphInterrupt(())

    task = make_task(WG, "n", node, retry=(RetryPolicy(retry_on=Exception),))
    _, exc = wg_tick([task])
    assert isinstance(exc, GraphInterrupt) and calls == [0]


def test_runner_level_retry_policy_applies_when_task_has_none(monkeypatch):
    monkeypatch.setattr(time, "sleep", lambda s: None)
    calls = []

    def node(x):
        calls.append(x)
        if len(calls) < 2:
            raise ValueError
        return x

    _, exc = wg_tick([make_task(WG, "n", node)], retry_policy=(RetryPolicy(retry_on=ValueError),))
    assert exc is None and len(calls) == 2


async def test_async_retry_matches_langgraph(monkeypatch):
    async def no_sleep(_):
        return None

    monkeypatch.setattr(asyncio, "sleep", no_sleep)

    def run(side, tick):
        attempts = []

        async def node(x):
            attempts.append(x)
            if len(attempts) < 3:
                raise ValueError("again")
            return x

        policy = side.RetryPolicy(max_attempts=3, retry_on=ValueError)
        return tick([make_task(side, "n", node, 1, retry=(policy,))]), attempts

    (ours, our_attempts) = run(WG, wg_atick)
    (theirs, their_attempts) = run(LG, lg_atick)
    assert _norm(await ours) == _norm(await theirs)
    assert our_attempts == their_attempts == [1, 1, 1]


# ------------------------------------------------------------------------- concurrency


def test_blocking_sync_nodes_run_concurrently():
    n = 5
    gate = threading.Barrier(n, timeout=10)  # breaks unless all n run at the same time

    def node(x):
        gate.wait()
        return x

    commits, exc = wg_tick([make_task(WG, f"n{i}", node, i) for i in range(n)])
    assert exc is None and len(commits) == n


def test_max_concurrency_limits_overlap():
    running, peak, lock = [0], [0], threading.Lock()
    pair = threading.Barrier(2, timeout=10)

    def node(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            pair.wait()  # two at a time must be possible
            time.sleep(0.01)
        finally:
            with lock:
                running[0] -= 1
        return x

    commits, exc = wg_tick([make_task(WG, f"n{i}", node, i) for i in range(6)], max_concurrency=2)
    assert exc is None and len(commits) == 6
    assert peak[0] == 2


def test_tasks_not_started_after_failure_are_reported_cancelled():
    started = []

    def node(x):
        started.append(x)
        if x == 0:
            raise ValueError("first")
        return x

    done: list = []
    tasks = [make_task(WG, f"n{i}", node, i) for i in range(3)]
    with pytest.raises(ValueError, match="first"):
        PregelRunner(max_concurrency=1).tick(tasks, on_done=lambda t, e: done.append((t.id, e)))
    assert started == [0]
    assert [tid for tid, _ in done] == ["0", "1", "2"]
    assert all(isinstance(e, concurrent.futures.CancelledError) for _, e in done[1:])


def test_tasks_with_writes_are_skipped():
    calls = []

    def node(x):
        calls.append(x)
        return x

    tasks = [make_task(WG, f"n{i}", node, i) for i in range(3)]
    tasks[1].writes.append(("out", "old"))
    done: list = []
    PregelRunner().tick(tasks, on_done=lambda t, e: done.append(t.id))
    assert sorted(calls) == [0, 2] and sorted(done) == ["0", "2"]
    PregelRunner().tick([tasks[1]], on_done=done.append)  # nothing to run
    assert sorted(done) == ["0", "2"]


def test_on_done_is_never_called_concurrently():
    busy = threading.Lock()
    overlaps = []

    def on_done(task, exc):
        if not busy.acquire(blocking=False):
            overlaps.append(task.id)
            return
        try:
            time.sleep(0.001)
        finally:
            busy.release()

    tasks = [make_task(WG, f"n{i}", ok, i) for i in range(40)]
    PregelRunner().tick(tasks, on_done=on_done)
    assert overlaps == []


USER_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("user_var", default="unset")


def test_context_visible_in_worker_threads():
    seen = {}
    gate = threading.Barrier(4, timeout=10)

    def node(x, config):
        gate.wait()
        seen[x] = (USER_VAR.get(), get_config() is config, threading.get_ident())
        USER_VAR.set("changed by node")  # must not leak to other tasks or the caller
        return x

    token = USER_VAR.set("from caller")
    try:
        _, exc = wg_tick([make_task(WG, f"n{i}", node, i) for i in range(4)])
    finally:
        after = USER_VAR.get()
        USER_VAR.reset(token)
    assert exc is None
    assert [v[:2] for v in seen.values()] == [("from caller", True)] * 4
    assert len({v[2] for v in seen.values()}) == 4  # four threads: caller + 3 workers
    assert after == "from caller"


def test_no_thread_leak_across_many_ticks():
    wg_tick([make_task(WG, f"n{i}", ok, i) for i in range(4)])
    before = threading.active_count()
    for _ in range(200):
        _, exc = wg_tick([make_task(WG, f"n{i}", ok, i) for i in range(4)])
        assert exc is None
    assert threading.active_count() <= before + DEFAULT_MAX_CONCURRENCY
    assert get_pool().num_threads <= 256


def test_nested_ticks_do_not_deadlock():
    def inner_node(x):
        return x

    def outer_node(x):
        commits, exc = wg_tick([make_task(WG, f"i{j}", inner_node, j) for j in range(3)])
        assert exc is None
        return len(commits)

    commits, exc = wg_tick([make_task(WG, f"o{i}", outer_node, i) for i in range(8)])
    assert exc is None
    assert sorted(c[1][0][1] for c in commits) == [3] * 8


def test_step_timeout():
    release = threading.Event()

    def slow(x):
        release.wait(5)
        return x

    done: list = []
    tasks = [make_task(WG, "slow", slow, 0), make_task(WG, "fast", ok, 1)]
    threading.Timer(0.3, release.set).start()
    with pytest.raises(TimeoutError):
        PregelRunner().tick(tasks, on_done=lambda t, e: done.append(t.id), timeout=0.05)
    assert sorted(done) == ["0", "1"]  # the running task was waited for


def test_bad_max_concurrency():
    for bad_value in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match="max_concurrency must be a positive int"):
            PregelRunner(max_concurrency=bad_value)


# ----------------------------------------------------------------------------- async


async def test_async_nodes_run_concurrently_on_the_loop():
    n = 4
    arrived = [0]
    all_in = asyncio.Event()

    async def node(x):
        arrived[0] += 1
        if arrived[0] == n:
            all_in.set()
        await asyncio.wait_for(all_in.wait(), 5)
        return x

    commits, exc = await wg_atick([make_task(WG, f"n{i}", node, i) for i in range(n)])
    assert exc is None and len(commits) == n


async def test_sync_nodes_under_atick_run_in_threads_concurrently():
    gate = threading.Barrier(3, timeout=10)
    main = threading.get_ident()
    tids = []

    def node(x):
        gate.wait()
        tids.append(threading.get_ident())
        return x

    commits, exc = await wg_atick([make_task(WG, f"n{i}", node, i) for i in range(3)])
    assert exc is None and len(commits) == 3 and main not in tids


async def test_async_failure_cancels_running_siblings_like_langgraph():
    def scenario(side):
        async def slow(x):
            await asyncio.sleep(5)
            return x

        async def fail(x):
            await asyncio.sleep(0.01)
            raise ValueError("async boom")

        return [make_task(side, "slow", slow, 0), make_task(side, "fail", fail, 1)]

    ours = await wg_atick(scenario(WG))
    theirs = await lg_atick(scenario(LG))
    assert sorted(_norm(ours[0])) == sorted(_norm(theirs[0]))
    assert _norm(ours[1]) == _norm(theirs[1]) == ("ValueError", "async boom")


async def test_async_interrupts_merged():
    def scenario(side):
        async def intr(x):
            raise side.GraphInterrupt((side.Interrupt(value=x, id=f"i{x}"),))

        return [make_task(side, f"n{i}", intr, i) for i in range(3)]

    ours = await wg_atick(scenario(WG))
    theirs = await lg_atick(scenario(LG))
    assert sorted(_norm(ours[0])) == sorted(_norm(theirs[0]))
    assert _norm(ours[1]) == _norm(theirs[1])


async def test_async_max_concurrency():
    running, peak = [0], [0]

    async def node(x):
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.01)
        running[0] -= 1
        return x

    commits, exc = await wg_atick(
        [make_task(WG, f"n{i}", node, i) for i in range(6)], max_concurrency=2
    )
    assert exc is None and len(commits) == 6 and peak[0] == 2


async def test_async_context_and_runtime_injection():
    async def node(x, config, runtime):
        await asyncio.sleep(0)
        return (
            get_config() is config,
            runtime.execution_info.node_attempt,
            runtime.execution_info.node_first_attempt_time is not None,
        )

    commits, exc = await wg_atick([make_task(WG, f"n{i}", node, i) for i in range(2)])
    assert exc is None
    assert [c[1] for c in commits] == [[("out", (True, 1, True))]] * 2


async def test_user_raised_cancelled_error_becomes_node_error():
    from warpgraph.errors import NodeCancelledError

    async def node(x):
        raise asyncio.CancelledError()

    _, exc = await wg_atick([make_task(WG, "n", node)])
    assert isinstance(exc, NodeCancelledError) and exc.node == "n"


async def test_atick_cancelled_from_outside_cancels_tasks():
    started = asyncio.Event()
    done: list = []

    async def node(x):
        started.set()
        await asyncio.sleep(5)

    tasks = [make_task(WG, f"n{i}", node, i) for i in range(2)]
    outer = asyncio.ensure_future(
        PregelRunner().atick(tasks, on_done=lambda t, e: done.append(type(e).__name__))
    )
    await started.wait()
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert done == ["CancelledError", "CancelledError"]


# ---------------------------------------------------------------------------- timeouts


def _timeout_task(side: _Side, fn: Any, **policy: Any) -> Any:
    from langgraph.types import TimeoutPolicy as LGTimeoutPolicy
    from warpgraph.types import TimeoutPolicy

    cls = LGTimeoutPolicy if side is LG else TimeoutPolicy
    task = make_task(side, "t", fn)
    import dataclasses

    return dataclasses.replace(task, timeout=cls(**policy))


def test_sync_node_with_timeout_is_rejected_like_langgraph():
    def sync_node(x):
        return x

    ours = wg_tick([_timeout_task(WG, sync_node, run_timeout=1.0)])
    theirs = lg_tick([_timeout_task(LG, sync_node, run_timeout=1.0)])
    assert _norm(ours) == _norm(theirs)
    assert isinstance(ours[1], ValueError)


@pytest.mark.parametrize("kind", ["run", "idle"])
async def test_async_node_timeout_like_langgraph(kind):
    def scenario(side):
        async def slow(x):
            await asyncio.sleep(5)
            return x

        return [_timeout_task(side, slow, **{f"{kind}_timeout": 0.05})]

    ours = await wg_atick(scenario(WG))
    theirs = await lg_atick(scenario(LG))
    for commits, exc in (ours, theirs):
        assert type(exc).__name__ == "NodeTimeoutError" and exc.kind == kind
        assert [c[1][0][0] for c in commits] == [ERROR]


async def test_heartbeat_keeps_idle_node_alive():
    async def beating(x, runtime):
        for _ in range(6):
            await asyncio.sleep(0.03)
            runtime.heartbeat()
        return x

    commits, exc = await wg_atick([_timeout_task(WG, beating, idle_timeout=0.1)])
    assert exc is None and commits[0][1] == [("out", 0)]


async def test_proc_without_ainvoke_runs_in_worker_under_atick():
    class SyncOnly:
        def invoke(self, input, config):
            config[CONF][CONFIG_KEY_SEND]([("out", threading.get_ident())])

    task = make_task(WG, "s", ok)
    import dataclasses

    task = dataclasses.replace(task, proc=SyncOnly())
    commits, exc = await wg_atick([task])
    assert exc is None and commits[0][1][0][1] != threading.get_ident()


def test_max_concurrency_read_from_run_config():
    running, peak, lock = [0], [0], threading.Lock()

    def node(x):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return x

    tasks = [make_task(WG, f"n{i}", node, i) for i in range(4)]
    for t in tasks:
        t.config["max_concurrency"] = 1
    commits, exc = wg_tick(tasks)
    assert exc is None and len(commits) == 4 and peak[0] == 1


def test_execution_info_filled_when_the_runtime_has_none():
    from warpgraph._internal._constants import CONFIG_KEY_CHECKPOINT_MAP, CONFIG_KEY_TASK_ID

    def node(x, runtime):
        return runtime.execution_info

    task = make_task(WG, "n", node, 4, ns="sub:1|n:4")
    conf = task.config[CONF]
    conf[CONFIG_KEY_RUNTIME] = Runtime()
    conf[CONFIG_KEY_CHECKPOINT_MAP] = {"": "root-ckpt", "sub:1": "sub-ckpt"}
    conf[CONFIG_KEY_TASK_ID] = "4"
    conf["thread_id"] = "th"
    task.config["run_id"] = "run"
    commits, exc = wg_tick([task])
    info = commits[0][1][0][1]
    assert exc is None
    assert (
        info.checkpoint_id,
        info.checkpoint_ns,
        info.task_id,
        info.thread_id,
        info.run_id,
        info.node_attempt,
    ) == ("sub-ckpt", "sub:1|n:4", "4", "th", "run", 1)
    assert info.node_first_attempt_time is not None


def test_invalid_resume_error_does_not_stop_other_tasks():
    from warpgraph.errors import _mark_invalid_resume

    started = []

    def invalid(x):
        started.append(x)
        err = ValueError("bad resume")
        _mark_invalid_resume(err)
        raise err

    def fine(x):
        started.append(x)
        return x

    tasks = [make_task(WG, "a", invalid, 0), make_task(WG, "b", fine, 1)]
    commits, exc = wg_tick(tasks, max_concurrency=1)
    assert started == [0, 1]  # b still ran
    assert isinstance(exc, ValueError) and str(exc) == "bad resume"
    assert sorted(c[0] for c in commits) == ["0", "1"]


def test_run_in_worker_keeps_nothing_once_the_caller_resumes() -> None:
    """The worker thread may be descheduled right after it hands the result over: by then it
    must hold none of the call's objects (its arguments, its context), so a run that ends
    leaves nothing alive (test_run_leaves_no_cycles) even before the worker moves on."""
    import asyncio
    import gc
    import time
    import weakref

    from warpgraph._internal._workers import run_in_worker

    class Arg:
        pass

    async def main() -> tuple:
        loop = asyncio.get_running_loop()
        real = loop.call_soon_threadsafe

        def then_stall(*a, **kw):  # (the worker, descheduled after handing the result over)
            handle = real(*a, **kw)
            time.sleep(0.05)
            return handle

        loop.call_soon_threadsafe = then_stall  # type: ignore[method-assign]
        arg = Arg()
        ref = weakref.ref(arg)
        got = await run_in_worker(lambda x: [type(x).__name__], arg)
        del arg
        return got, ref() is None

    gc.disable()
    try:
        assert asyncio.run(main()) == (["Arg"], True)
    finally:
        gc.enable()
