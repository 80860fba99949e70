"""Task calls (the functional API) inside a running step.

Every task config of a loop carries a `CallHook` under `configurable["__pregel_call"]`.
Calling a `@task` function (`pregel/_call.py`) hands the hook a `Call`; the hook makes it a
PUSH task of the current step - path `(PUSH, caller path, call index, True)`, id and
namespace as LangGraph computes them, so a resumed step finds the writes a call saved -
and returns a future of its value:

- a call whose task already has writes (saved before an interrupt or a crash, or the same
  call made again by a retried caller) is answered from them without running;
- otherwise the task runs concurrently: on the worker pool in a sync run, as an asyncio
  task of the run's event loop in an async one. When it ends its writes are committed
  through the loop (saver writes, stream chunks) and then the future is resolved.

A caller does not finish before the calls it made: `run_with_retry` / `arun_with_retry`
wait for them (`join` / `ajoin`) before returning, so a task's calls are committed before
the task itself, and the step ends only once every call has ended. Nothing here runs
unless a task is called.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
import time
import weakref
from collections import deque
from contextvars import ContextVar, copy_context
from functools import partial
from typing import Any

from warpgraph._internal._constants import (
    CACHE_NS_WRITES,
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_TASK_ID,
    ERROR,
    NS_END,
    NS_SEP,
    PUSH,
    RETURN,
)
from warpgraph._internal._typing import MISSING
from warpgraph.config import _CONFIG, get_config
from warpgraph.types import PregelExecutableTask

__all__ = ("CHILDREN", "STEP_LOCK", "CallHook", "ajoin", "join")

PUSH_TRIGGER = (PUSH,)

CHILDREN: dict[str, list[Any]] = {}
"""Calls still running, by the id of the task that made them (process-wide: task ids are
unique). Empty unless tasks are being called."""

STEP_LOCK: ContextVar[Any] = ContextVar("warpgraph_step_lock", default=None)
"""The lock a sync runner holds while it reports a finished task of a step of several
tasks; call tasks made in that step report under it too."""

_REGISTRY_LOCK = threading.Lock()


# ------------------------------------------------------------------ waiting for calls


def _untaken_calls(task: Any) -> list[Any]:
    """The calls `task` made since this was last asked (empty: none)."""
    if task.id not in CHILDREN:  # (made no call: no lock taken)
        return []
    with _REGISTRY_LOCK:
        return CHILDREN.pop(task.id, None) or []


def join(task: Any) -> None:
    """Wait until every call `task` made has ended and been committed (sync runs)."""
    while kids := _untaken_calls(task):
        for k in kids:
            if isinstance(k, _CallFuture) and not k.done():
                k._run_here()
        waits = [k for k in kids if isinstance(k, concurrent.futures.Future) and not k.done()]
        if waits:
            concurrent.futures.wait(waits)
        for k in kids:
            if not isinstance(k, concurrent.futures.Future):
                k.wait()


async def ajoin(task: Any) -> None:
    """Async twin of `join`: the calls are asyncio tasks of the running loop."""
    while kids := _untaken_calls(task):
        # (an ended call whose commit has not run yet is waited for too)
        waits = [
            k for k in kids if isinstance(k, asyncio.Future) and (not k.done() or k in _UNCOMMITTED)
        ]
        if waits:
            await asyncio.wait(waits)
        for k in kids:
            if isinstance(k, concurrent.futures.Future):
                await asyncio.wrap_future(k)


def _register(parent_id: str, fut: Any) -> None:
    with _REGISTRY_LOCK:
        CHILDREN.setdefault(parent_id, []).append(fut)


# ------------------------------------------------------------------ the hook

# (modules that import this one; bound by `_load` once the first hook is made)
_engine: Any = None
_RT_FIELDS = _RT_STD = _exec_info = _local_read = _runtime = _task = hexdigest = None
scratchpad_for = map_debug_tasks = read_task_statuses = None
run_with_retry = arun_with_retry = Call = get_runnable_for_task = identifier = None
_call_config = _lazy_call_task = _run_unconfigured = _arun_unconfigured = None
_LazyCallTask = _stored_config = _LoopView = None


def _load() -> None:
    global _engine, _RT_FIELDS, _RT_STD, _exec_info, _local_read, _runtime, _task, hexdigest
    global scratchpad_for, map_debug_tasks, read_task_statuses
    global run_with_retry, arun_with_retry, Call, get_runnable_for_task, identifier
    global _call_config, _lazy_call_task, _run_unconfigured, _arun_unconfigured
    global _LazyCallTask, _stored_config, _LoopView
    from warpgraph.pregel import _algo, _call_tasks, _retry, debug
    from warpgraph.pregel import _call as call_mod
    from warpgraph.pregel import _engine as engine_mod

    _RT_FIELDS, _RT_STD, _exec_info = _algo._RT_FIELDS, _algo._RT_STD, _algo._exec_info
    _local_read, _runtime, _task = _algo._local_read, _algo._runtime, _algo._task
    hexdigest, scratchpad_for = _algo.hexdigest, _algo.scratchpad_for
    map_debug_tasks, read_task_statuses = debug.map_debug_tasks, debug.read_task_statuses
    run_with_retry, arun_with_retry = _retry.run_with_retry, _retry.arun_with_retry
    Call, identifier = call_mod.Call, call_mod.identifier
    get_runnable_for_task = call_mod.get_runnable_for_task
    _engine = engine_mod
    _call_config, _lazy_call_task = _call_tasks.call_config, _call_tasks.lazy_call_task
    _run_unconfigured, _arun_unconfigured = _retry._run_unconfigured, _retry._arun_unconfigured
    _LazyCallTask, _stored_config = _call_tasks.LazyCallTask, _algo._stored_config
    _LoopView = _call_tasks.LoopView


class _CallState:
    """Per loop: the call tasks of the current step and the futures of those running."""

    __slots__ = (
        "callers",
        "condition",
        "created",
        "lock",
        "running",
        "step_key",
        "sync_queue",
        "view",
    )

    def __init__(self, cap: int) -> None:
        self.lock = threading.RLock()
        self.condition = threading.Condition()  # (shared by the run's sync call futures)
        self.sync_queue = _SyncQueue(cap)
        self.step_key: Any = None
        self.created: list[Any] = []  # call tasks made in the step `step_key`
        self.running: dict[str, Any] = {}  # task id -> future of a call still running
        self.callers: dict[str, tuple] = {}  # caller id -> (its namespace, path string)
        self.view: Any = None  # (the loop's `_call_tasks.LoopView`, made on first use)

    def for_step(self, key: Any) -> None:
        if key != self.step_key:
            self.step_key = key
            self.created = []
            self.running = {}
            self.callers = {}

    def applied(self, key: Any) -> list[tuple]:
        """`(name, path, triggers, writes)` of the call tasks made in step `key`, for a
        step the loop applies itself (`pregel/_lone.py`)."""
        if key != self.step_key or not self.created:
            return []
        out, self.created = self.created, []
        return [(t.name, t.path, t.triggers, t.writes) for t in out]


def call_state(loop: Any) -> _CallState:
    state = loop._calls
    if state is None:
        from warpgraph.pregel._runner import DEFAULT_MAX_CONCURRENCY

        cap = loop.config.get("max_concurrency")
        if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
            cap = DEFAULT_MAX_CONCURRENCY
        state = loop._calls = _CallState(cap)
    return state


class CallHook:
    """`configurable["__pregel_call"]` of a loop's tasks (holds the loop weakly)."""

    __slots__ = ("_loop",)

    def __init__(self, loop: Any) -> None:
        if _engine is None:
            _load()
        self._loop = weakref.ref(loop)

    def __call__(
        self,
        func: Any,
        input: tuple[tuple[Any, ...], dict[str, Any]],
        *,
        retry_policy: Any = None,
        cache_policy: Any = None,
        callbacks: Any = None,
        timeout: Any = None,
    ) -> Any:
        call = Call(
            func,
            input,
            retry_policy=retry_policy,
            cache_policy=cache_policy,
            callbacks=callbacks,
            timeout=timeout,
        )
        return self.submit(call, inspect.iscoroutinefunction(func))

    def submit(self, call: Any, is_async: bool, config: Any = None) -> Any:
        """Make `call` a task of the running step (`is_async`: its function is a coroutine
        function; `config`: the caller's current config, when the caller has it)."""
        loop = self._loop()
        if loop is None:
            raise RuntimeError("Task called after its graph run ended")
        parent = _calling_task(loop, config)
        aio = getattr(loop, "aio_loop", None)
        if aio is None:
            if is_async:
                raise RuntimeError("In an sync context async tasks cannot be called")
            return _call_sync(loop, parent, call)
        return _call_async(loop, aio, parent, call)


def _calling_task(loop: Any, config: Any = None) -> Any:
    """The task whose code is running (the caller of the task function); `config`: the
    current config, when the caller already looked it up."""
    current = _CONFIG.get()
    if isinstance(current, PregelExecutableTask):  # (a task standing in for its config)
        return current
    if config is None:
        config = get_config()
    tid = config[CONF].get(CONFIG_KEY_TASK_ID)
    task = loop.tasks.get(tid) if tid is not None else None
    if task is None:
        # (a lone step's task is not in `loop.tasks`: what the call needs of it is in its
        # config, which a runnable the task called made the current one)
        path = (config.get("metadata") or {}).get("langgraph_path")
        if tid is None or path is None:
            raise RuntimeError("Task called outside of a running graph task")
        return _Caller(tid, tuple(path), config)
    return task


class _Caller:
    """What a call needs of its caller: id, path, config."""

    __slots__ = ("config", "id", "path")

    def __init__(self, id: str, path: tuple, config: dict) -> None:
        self.id, self.path, self.config = id, path, config


# ------------------------------------------------------------------ preparing call tasks


def prepare_call(
    loop: Any, parent: Any, index: int, call: Any, async_run: bool = False, state: Any = None
) -> Any:
    """The PUSH task of `call`, the `index`-th call `parent` made (LangGraph's ids, paths,
    namespaces and config; a plain call's config is built on first use: `_call_tasks`).
    `async_run`: the task runs on the run's event loop; `state`: the loop's call state, set
    to the current step (it keeps what the step's calls of one caller share)."""
    prepared = getattr(call, "prepared", None)
    if prepared is None:
        proc, plans = get_runnable_for_task(call.func), None
    else:
        proc, plans = prepared
    name = proc.name
    if name is None:
        raise ValueError("`call` functions must have a `__name__` attribute")
    pconfig = parent.config
    pconf = pconfig[CONF]
    cid = loop.checkpoint_id
    step = loop.step
    known = state.callers.get(parent.id) if state is not None else None
    if known is None or known[2] is not parent:
        caller = pconf.get(CONFIG_KEY_CHECKPOINT_NS, ""), _engine.task_path_str(parent.path)
        known = (*caller, parent, str(step))
        if state is not None:
            state.callers[parent.id] = known
    caller_ns, path_str, _, step_str = known
    ns = f"{caller_ns}{NS_SEP}{name}" if caller_ns else name
    task_id = _engine.task_id(
        cid, [ns, step_str, name, PUSH, path_str, str(index)], loop.checkpoint_v
    )
    task_ns = f"{ns}{NS_END}{task_id}"
    path = (*(PUSH, parent.path, index), True)
    writes: deque = deque()
    policy = call.cache_policy or loop.graph.cache_policy
    cache_key = None
    if policy:
        from warpgraph.types import CacheKey

        key = policy.key_func(*call.input[0], **call.input[1])
        cache_key = CacheKey(
            (CACHE_NS_WRITES, identifier(call.func) or "__dynamic__"),
            hexdigest(key) if isinstance(key, str) else _hex_bytes(key),
            policy.ttl,
        )
    retry = call.retry_policy or loop.graph.retry_policy
    if cache_key is None and not retry and call.timeout is None and not call.callbacks:
        plan = plans[1 if async_run else 0] if plans is not None else None
        if plan is not None and state is not None and not loop.pending_writes:
            view = state.view  # (config built on first use)
            if view is None:
                view = state.view = _LoopView(loop)
            deferred = (view, (parent, task_ns), step, cid, plan)
            return _lazy_call_task(
                name,
                call.input,
                proc,
                writes,
                deferred,
                PUSH_TRIGGER,
                retry,
                None,
                task_id,
                path,
                (),
                (),
                None,
            )
    pad = scratchpad_for(loop, task_id, task_ns, pconf.get(CONFIG_KEY_SCRATCHPAD))
    config = _call_config(
        loop, parent, name, task_id, task_ns, path, step, cid, writes, pad, call.callbacks
    )
    return _task(
        name,
        call.input,
        proc,
        writes,
        config,
        PUSH_TRIGGER,
        retry,
        cache_key,
        task_id,
        path,
        (),
        (),
        call.timeout,
    )


def _unbuilt(task: Any) -> tuple | None:
    """What builds the config of a lazily configured call task not built yet (its
    `Deferred` tuple), else None."""
    if type(task) is _LazyCallTask:
        deferred = _stored_config(task)
        if type(deferred) is tuple:
            return deferred
    return None


def _hex_bytes(key: bytes) -> str:
    from xxhash import xxh3_128_hexdigest

    return xxh3_128_hexdigest(key)


def _accept(loop: Any, parent: Any, call: Any, async_run: bool = False) -> tuple[Any, _CallState]:
    """Prepare the call's task and add it to the step (LangGraph's `accept_push`): the
    `tasks` stream announces it, writes saved for it are put back on it."""
    state = call_state(loop)
    with state.lock:
        return _accept_locked(loop, state, parent, call, async_run), state


def _accept_locked(loop: Any, state: _CallState, parent: Any, call: Any, async_run: bool) -> Any:
    """`_accept` under the call state's lock: the call's task (the known one for a call
    made again)."""
    index = parent.config[CONF][CONFIG_KEY_SCRATCHPAD].call_counter()
    state.for_step((loop.checkpoint_id, loop.step))
    task = prepare_call(loop, parent, index, call, async_run, state)
    known = loop.tasks.get(task.id)
    if known is not None:  # the same call again (a retried caller): the same task
        return known
    loop.tasks[task.id] = task
    state.created.append(task)
    if loop._want_tasks:
        for payload in map_debug_tasks([task]):
            loop._emit("tasks", payload)
    if loop.pending_writes:
        mine = (w for w in loop.pending_writes if w[0] == task.id)
        for st in read_task_statuses(mine).values():
            task.writes.extend(st.output)
    return task


def _settle_from_writes(task: Any, fut: Any) -> None:
    """Resolve `fut` from a finished task's writes: its return value, else its error."""
    value, err = _outcome(task)
    if err is None:
        fut.set_result(value)
    else:
        fut.set_exception(err)


def _outcome(task: Any) -> tuple[Any, BaseException | None]:
    """(return value, None), or (None, error), of a finished task from its writes."""
    ret = next((v for c, v in task.writes if c == RETURN), MISSING)
    if ret is not MISSING:
        return ret, None
    err = next((v for c, v in task.writes if c == ERROR), None)
    if err is not None:
        return None, err if isinstance(err, BaseException) else Exception(err)
    return None, None


def _locked(state: _CallState, fn: Any, *args: Any) -> Any:
    """Run `fn` under the call state's lock and, in a sync run, the step's lock."""
    lock = STEP_LOCK.get()
    with state.lock:
        if lock is None:
            return fn(*args)
        with lock:
            return fn(*args)


def _from_cache(loop: Any, state: _CallState, task: Any) -> bool:
    """A call with a cache policy answered from the graph's cache (its writes put, marked
    cached, as node hits are): True if it was."""
    if task.cache_key is None or loop.cache is None:
        return False
    from warpgraph.pregel._cache import match_pushed

    return bool(_locked(state, match_pushed, loop, [task]))


async def _afrom_cache(loop: Any, task: Any) -> bool:
    if task.cache_key is None or loop.cache is None:
        return False
    from warpgraph.pregel._cache import amatch_pushed

    return bool(await amatch_pushed(loop, [task]))


def _commit(loop: Any, state: _CallState, task: Any, exc: BaseException | None) -> None:
    """Report a finished call task to the loop (its saver writes and stream chunks)."""
    _locked(state, loop.on_task_done, task, exc)


# ------------------------------------------------------------------ sync runs


_PENDING, _FINISHED = "PENDING", "FINISHED"  # (concurrent.futures' state names)
_DONE_STATES = frozenset((_FINISHED, "CANCELLED", "CANCELLED_AND_NOTIFIED"))


class _CallFuture(concurrent.futures.Future):
    """The future of a sync task call. Asking for its result while the call has not
    started yet runs the call in the asking thread (no thread hand-off, the same outcome:
    `_SyncQueue`). The futures of one run share their condition (a Condition per future
    cost more than the call), so waits re-check their own state."""

    _queue: Any = None  # the call's queue while it may still be pending
    _key: Any = None

    def __init__(self, condition: threading.Condition) -> None:  # (no super().__init__)
        self._condition = condition
        self._state = _PENDING
        self._result = None
        self._exception = None
        self._waiters: list = []
        self._done_callbacks: list = []

    def _run_here(self) -> None:
        queue = self._queue
        if queue is not None:
            self._queue = None
            queue.run_pending(self._key)

    def _wait(self, timeout: float | None) -> None:
        if self._state == _FINISHED:
            return
        self._run_here()
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._condition:
            while self._state == _PENDING or self._state == "RUNNING":
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._condition.wait(left)

    def done(self) -> bool:
        # (one attribute read: a state is only ever replaced whole, under the condition)
        return self._state in _DONE_STATES

    def result(self, timeout: float | None = None) -> Any:
        if self._state == _FINISHED and self._exception is None:
            return self._result
        self._wait(timeout)
        return super().result(0)

    def exception(self, timeout: float | None = None) -> Any:
        self._wait(timeout)
        return super().exception(0)


class _SyncQueue:
    """Sync calls not started yet. Pool helpers take them in call order; whenever calls
    are waiting and no helper is on its way, one more helper is asked for (so as many
    run at once as are waiting, like an executor's threads, joining one by one). A caller
    waiting for a call that no helper took yet runs it itself."""

    __slots__ = ("cap", "helpers", "lock", "pending", "queued")

    def __init__(self, cap: int) -> None:
        self.lock = threading.Lock()
        self.pending: dict[Any, tuple] = {}  # key -> (run, fut), in call order
        self.queued = 0  # helpers submitted and not started
        self.helpers = 0  # helpers submitted or running
        self.cap = cap  # helpers at most (LangGraph's executor: its max_workers)

    def put(self, key: Any, item: tuple) -> None:
        with self.lock:
            self.pending[key] = item
            ask = self.queued == 0 and self.helpers < self.cap
            if ask:
                self.queued = 1
                self.helpers += 1
        if ask:
            _pool().submit(self._helper)

    def run_pending(self, key: Any) -> None:
        with self.lock:
            item = self.pending.pop(key, None)
        if item is not None:
            item[0]()

    def _helper(self) -> None:
        pool = _pool()
        pool.started(1)
        with self.lock:
            self.queued -= 1
        while True:
            with self.lock:
                if not self.pending:
                    self.helpers -= 1
                    return
                key = next(iter(self.pending))
                item = self.pending.pop(key)
                ask = bool(self.pending) and self.queued == 0 and self.helpers < self.cap
                if ask:
                    self.queued = 1
                    self.helpers += 1
            if ask:
                pool.submit(self._helper)
            item[1]._queue = None
            item[0]()


def _pool() -> Any:
    global _get_pool
    if _get_pool is None:
        from warpgraph._internal._workers import get_pool  # (imports nothing of pregel's)

        _get_pool = get_pool
    return _get_pool()


_get_pool: Any = None


def _call_sync(loop: Any, parent: Any, call: Any) -> concurrent.futures.Future:
    state = call_state(loop)
    with state.lock:
        task = _accept_locked(loop, state, parent, call, False)
        running = state.running.get(task.id)
        if running is not None:
            return running
        fut = _CallFuture(state.condition)
        if task.writes:
            _settle_from_writes(task, fut)
            return fut
        state.running[task.id] = fut
    queue = state.sync_queue
    fut._queue, fut._key = queue, task.id
    run = partial(copy_context().run, _run_sync, loop, state, task, fut)
    _register(parent.id, fut)
    queue.put(task.id, (run, fut))
    return fut


def _run_sync(loop: Any, state: _CallState, task: Any, fut: concurrent.futures.Future) -> None:
    value: Any = None
    exc: BaseException | None = None
    try:
        deferred = _unbuilt(task)
        if deferred is not None:
            value = _run_unconfigured(task, deferred, True)  # (in a context copy of its own)
        elif _from_cache(loop, state, task):
            _settle_from_writes(task, fut)
            return
        else:
            value = run_with_retry(task, None)
    except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
        exc = e
    try:
        _commit(loop, state, task, exc)
    except BaseException as e:  # noqa: BLE001
        exc = exc or e
    if exc is None:
        fut.set_result(value)
    else:
        fut.set_exception(exc)


# ------------------------------------------------------------------ async runs


def _call_async(loop: Any, aio: asyncio.AbstractEventLoop, parent: Any, call: Any) -> Any:
    try:
        on_loop = asyncio.get_running_loop() is aio and asyncio.current_task() is not None
    except RuntimeError:
        on_loop = False
    if on_loop:
        return _start_async(loop, aio, parent, call, None)
    # a sync function's thread: the call is scheduled on the run's loop
    cdest: concurrent.futures.Future = concurrent.futures.Future()
    ctx = copy_context()
    done = threading.Event()

    def start() -> None:
        try:
            ctx.run(_start_async, loop, aio, parent, call, cdest)
        except BaseException as e:  # noqa: BLE001
            if not cdest.done():
                cdest.set_exception(e)
        finally:
            done.set()

    aio.call_soon_threadsafe(start)
    done.wait()  # (the call is registered before its caller can finish)
    return cdest


def _start_async(
    loop: Any, aio: asyncio.AbstractEventLoop, parent: Any, call: Any, dest: Any
) -> Any:
    """Start the call on the run's loop; the caller's future: `dest` (a concurrent future,
    for a caller on a worker thread) or, when None, the call's asyncio task (its value the
    call's; cancelling it cancels the call)."""
    task, state = _accept(loop, parent, call, True)
    running = state.running.get(task.id)
    if running is not None:
        dest = aio.create_future() if dest is None else dest
        _chain(running, dest)
        return dest
    if task.writes:
        dest = aio.create_future() if dest is None else dest
        _settle_from_writes(task, dest)
        return dest
    streamed = loop.stream is not None
    child = aio.create_task(_run_async(loop, task, streamed), name=task.name)
    if streamed:  # (first of its done callbacks: the commit runs before its callers resume)
        child.add_done_callback(_commit_done)
    state.running[task.id] = child
    _register(parent.id, child)
    if dest is None:  # the caller gets the call's own task
        return child
    _chain(child, dest)

    def cancelled(d: Any) -> None:  # cancelling the caller's future cancels the call
        if d.cancelled() and not child.done():
            if asyncio._get_running_loop() is aio:
                child.cancel()
            else:
                aio.call_soon_threadsafe(child.cancel)

    dest.add_done_callback(cancelled)
    return dest


_UNCOMMITTED: dict[asyncio.Future, tuple[Any, Any, BaseException | None]] = {}
"""Async calls of streamed runs that ended and wait for their commit (a done callback),
by asyncio task: (the loop, the call task, its error)."""


async def _run_async(loop: Any, task: Any, streamed: bool) -> Any:
    """The call's asyncio task: runs it, then ends with its value or error.

    In a streamed run it is committed in its first done callback (`_commit_done`), as
    LangGraph commits a call in its future's: after it ended and before its callers
    resume, so a caller resumes before the driver a chunk of the commit wakes up (the
    order of `astream_events`). A run without a stream has nobody to wake: its calls
    commit here, a loop turn's callback sooner (and a failing commit fails the call)."""
    value: Any = None
    exc: BaseException | None = None
    cached = False
    try:
        deferred = _unbuilt(task)
        if deferred is not None:
            value = await _arun_unconfigured(task, deferred)
        elif await _afrom_cache(loop, task):
            cached = True
        else:
            value = await arun_with_retry(task, None)
    except BaseException as e:  # noqa: BLE001 - handed to the caller through the task
        exc = e
    if cached:  # (its writes are in the loop already)
        value, exc = _outcome(task)
    elif streamed:
        _UNCOMMITTED[asyncio.current_task()] = (loop, task, exc)  # type: ignore[index]
    else:
        try:
            loop.on_task_done(task, exc)
        except BaseException as e:  # noqa: BLE001
            exc = exc or e
    if exc is not None:
        raise exc
    return value


def _commit_done(child: asyncio.Future) -> None:
    """Commit an ended async call of a streamed run (a call cancelled before it started,
    or answered from the cache, has nothing to commit). A failing commit is the event
    loop's to report, as in LangGraph: the call's callers have its outcome already."""
    entry = _UNCOMMITTED.pop(child, None)
    if entry is not None:
        entry[0].on_task_done(entry[1], entry[2])


def _chain(source: asyncio.Future, dest: Any) -> None:
    """Resolve `dest` (asyncio or concurrent future) like `source` once it is done."""

    def copy(src: asyncio.Future) -> None:
        if dest.done():
            return
        if src.cancelled():
            dest.cancel()
        elif src.exception() is not None:
            dest.set_exception(src.exception())
        else:
            dest.set_result(src.result())

    if source.done():
        copy(source)
    else:
        source.add_done_callback(copy)
