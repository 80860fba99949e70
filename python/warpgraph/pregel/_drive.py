"""Drivers of the loop's step machine: the sync one performs each operation directly, the
async one awaits the runner and the saver's `a*` methods. Both yield stream chunks at the
points where LangGraph's runner yields them. Saver operations go through the run's
`SaverSession` (`_persist.py`: write fencing, one transaction per step, group commit), which
also takes each finished task's writes from the loop as the task finishes (the runner's
`on_done` is wrapped; the loop's queued `put_writes` ops are drained from `loop._io`).
Buffered saver work is committed before a step's tasks run, before any read, and at the
run's end, before the last chunks are yielded."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import warnings
from collections import deque
from collections.abc import AsyncIterator, Generator, Iterator
from dataclasses import is_dataclass
from typing import Any, NamedTuple

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_DURABILITY,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_STREAM,
    NS_SEP,
)
from warpgraph._internal._flags import FAST_PATHS
from warpgraph._internal._machines import Stepping
from warpgraph._internal._workers import get_pool
from warpgraph.config import ensure_config, get_config
from warpgraph.pregel._cache import CACHE_OP, aperform, perform
from warpgraph.pregel._live import LiveOut, tick_live
from warpgraph.pregel._loop import RUN, PregelLoop
from warpgraph.pregel._persist import ACTIVE, SaverSession, _in_memory
from warpgraph.pregel._records import LONE_DRAIN, LONE_RUN, LoneRunOp
from warpgraph.pregel._retry import arun_with_retry
from warpgraph.pregel._runner import PregelRunner
from warpgraph.pregel._stream import Stream
from warpgraph.runtime import DEFAULT_RUNTIME, run_runtime

__all__ = ("adrive", "drive", "setup_loop")


def drive(
    loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> Iterator[tuple]:
    """Sync driver of the loop's step machine; yields stream chunks as they appear."""
    machine = loop.run()
    session = (
        SaverSession(saver, loop.durability, False, loop.is_nested) if saver is not None else None
    )
    if FAST_PATHS:
        _take_fast_paths(loop, saver, session, out, runner, timeout, False)
    else:  # WARPGRAPH_FAST_PATHS=0: every step through the general path
        loop._shares_inputs = False
    try:
        yield from _drive_machine(machine, loop, session, out, runner, timeout)
    except GeneratorExit:
        _settle(machine, session)
        raise
    finally:
        machine.close()
        if session is not None and not session.closed:
            _quiet(session.close)  # the consumer stopped early: keep what was produced


def _take_fast_paths(
    loop: PregelLoop,
    saver: Any,
    session: SaverSession | None,
    out: deque | None,
    runner: Any,
    timeout: Any,
    is_async: bool,
) -> None:
    """A driver's fast paths for this run (`loop.runs_lone_tasks`, `awaits_lone_tasks`,
    `perform_write`, `lone_session`, `packed_puts`, `lone_out`): nobody consumes chunks
    between steps, or only "updates" / "values" chunks made when a step's task finishes
    and its step is applied (`_streams_lone`; the machine has them drained where `_steps`
    drains them: `LoneDrainOp`, before a `LoneRunOp`), so the runner would run a lone task
    in the driver's thread (sync) or inline in its asyncio task (async, `atick`): the loop
    may run it itself (the async driver only awaits the task, `_lone.alone_steps`), and
    hand its saver ops on itself: as they are when the session only passes them on
    (async: when the saver's async methods only call the sync ones,
    `SaverSession.sync_twins`), else, sync only, through the session (batch / writer mode
    taking each task's writes: the same calls the driver makes, in the same order)."""
    if session is None:
        loop.perform_write = None
    elif (
        session.passes_ops_through
        and not session.hooks_tasks
        and (session.sync_twins or not is_async)
    ):
        loop.perform_write = session.call_saver
        # the engine may encode the envelope of each checkpoint it creates for the saver
        loop.packed_puts = _in_memory(saver) and saver.takes_packed_puts()
    elif session.mode != "plain" and session.hooks_tasks and not is_async:
        loop.perform_write = session.perform_write
        loop.lone_session = session
    tick = "atick" if is_async else "tick"  # (the runner's own: no subclass's)
    streamed = out is not None and _streams_lone(loop)
    loop.runs_lone_tasks = (
        (session is None or loop.perform_write is not None)
        and ((out is None and loop.stream is None) or streamed)
        and timeout is None
        and runner.retry_policy is None
        and getattr(type(runner), tick) is getattr(PregelRunner, tick)
    )
    loop.awaits_lone_tasks = is_async and loop.runs_lone_tasks
    if streamed and loop.runs_lone_tasks:
        loop.lone_out = out


# the stream modes whose chunks a lone step makes only when its task finishes and its step
# is applied (through the loop's emission code), to be handed on before the next step runs
_LONE_MODES = frozenset(("updates", "values"))


def _streams_lone(loop: PregelLoop) -> bool:
    """Whether lone steps may run in this streamed run: only its own stream (no parent's),
    only "updates" / "values" chunks, nothing handed on while a step runs (`_eager`)."""
    stream = loop.stream
    return (
        stream is not None
        and stream is loop.own_stream
        and stream.modes <= _LONE_MODES
        and not _eager(loop)
    )


# --- what `_steps` yields to the drivers ---------------------------------------------
class _Emit(NamedTuple):
    """A chunk for the consumer."""

    chunk: Any


class _Call(NamedTuple):
    """Call this session method (sync name; the async driver awaits its `_ASYNC_NAMES`
    twin) and send back its result."""

    method: str
    args: tuple = ()


class _Tick(NamedTuple):
    """Run the step's tasks through the runner."""

    tasks: list
    hook: bool
    """The session takes each finished task's writes (`SaverSession.hook`)."""
    live: bool
    """Chunks go out while the step runs (eager streaming, or several tasks)."""


# (a cache call, `_cache.CACHE_OP`, is yielded as the loop gave it)

_new = tuple.__new__  # a record of every field without its __new__'s Python frame

_CLOSE = _Call("close")
_FLUSH = _Call("flush")
_AWAIT_INFLIGHT = _Call("await_inflight")
_ASYNC_NAMES = {
    "close": "aclose",
    "flush": "aflush",
    "get_tuple": "aget_tuple",
    "get_before": "aget_before",
    "get_delta_history": "aget_delta_history",
    "call_saver": "acall_saver",
    "commit": "acommit",
    "await_inflight": "await_inflight",
}


class StreamClosed(BaseException):
    """Thrown into the step machine when the consumer stops the stream in the middle of
    a run (LangGraph's loop exits with GeneratorExit then): the machine keeps what the
    finished tasks wrote, saves the exit checkpoint under durability="exit", and ends."""


def _closing(machine: Any, session: SaverSession | None) -> Generator[Any, Any, None]:
    """The saver operations of a machine stopped by its consumer (see `StreamClosed`),
    as `_Call`s or cache ops for either driver to perform; nothing is streamed any more."""
    try:
        op = machine.throw(StreamClosed())
    except (StopIteration, StreamClosed):
        return
    while True:
        value: Any = None
        exc: BaseException | None = None
        try:
            kind = op[0]
            if kind is CACHE_OP:
                value = yield op
            elif kind is RUN or kind is LONE_RUN or kind is LONE_DRAIN or session is None:
                pass  # (nothing runs any more)
            elif kind in ("get_tuple", "get_before", "get_delta_history"):
                value = yield _Call(kind, op[1:])
            else:  # a write op
                if session.inflight:
                    yield _AWAIT_INFLIGHT
                if session.passes_ops_through:
                    yield _Call("call_saver", (op,))
                elif items := session.write(op):
                    yield _Call("commit", (items,))
        except BaseException as e:  # noqa: BLE001 - thrown back into the machine
            exc = e
        try:
            op = machine.send(value) if exc is None else machine.throw(exc)
        except (StopIteration, StreamClosed):
            return


def _settle(machine: Any, session: SaverSession | None) -> None:
    """Sync: perform `_closing`'s operations (a failure is a warning: the consumer has
    gone, nobody could catch it)."""
    ops = Stepping(_closing(machine, session))
    try:
        for item in ops:  # (errors are not thrown back: the first one ends it)
            ops.value = _perform(session, item)
    except Exception as e:  # noqa: BLE001
        _warn_lost(e)


async def _asettle(machine: Any, session: SaverSession | None) -> None:
    """`_settle` for the async driver."""
    ops = Stepping(_closing(machine, session))
    try:
        for item in ops:
            ops.value = await _aperform(session, item)
    except Exception as e:  # noqa: BLE001
        _warn_lost(e)


def _perform(session: Any, item: Any) -> Any:
    """A `_Call` (the session's method) or a cache op, performed by the sync driver."""
    if type(item) is _Call:
        return getattr(session, item.method)(*item.args)
    return perform(item)


async def _aperform(session: Any, item: Any) -> Any:
    """`_perform` for the async driver: the session's async twin, the cache's async call;
    and a lone step's task (`LoneRunOp`), run as `atick` runs a step's only task."""
    if type(item) is _Call:
        return await getattr(session, _ASYNC_NAMES[item.method])(*item.args)
    if type(item) is LoneRunOp:
        return await arun_with_retry(item.task, None)
    return await aperform(item)


def _steps(
    machine: Any, loop: PregelLoop, session: SaverSession | None, out: deque | None
) -> Generator[Any, Any, None]:
    """What both drivers do, written once: runs the loop's step machine and yields
    `_Emit` for the consumer, or `_Call` / `_Tick` / a cache op for the driver to perform;
    the driver sends back the result or throws the error."""
    hook = session is not None and session.hooks_tasks
    # LangGraph's runner hands a lone task's chunks on as it finishes only when the stream
    # waits concurrently (eager streaming, subgraphs, "custom" / "messages" modes)
    eager = _eager(loop)
    value: Any = None
    exc: BaseException | None = None
    while True:
        try:
            op = machine.send(value) if exc is None else machine.throw(exc)
        except StopIteration:
            err = None
            if session is not None:
                try:
                    yield _CLOSE
                except BaseException as e:  # noqa: BLE001
                    err = e
            yield from _drain(out)
            if err is not None:
                raise err from None
            return
        except BaseException as run_err:
            if session is not None:
                try:
                    yield _CLOSE
                except BaseException as e:  # noqa: BLE001
                    _note(run_err, e)
            # the step machine failed between two of the points where LangGraph's stream
            # hands queued chunks on (applying a step, preparing the next): it raises
            # without them (those of a lone task, its step's values, ...)
            if out:
                out.clear()
            raise
        value = exc = None
        kind = op[0]
        # a streamed run's lone steps (`_lone.py`): queued chunks go where they go below,
        # before a step's tasks run (and a consumer stopping here stops the run)
        if kind is LONE_DRAIN:
            yield from _drain(out)
            continue
        if kind is LONE_RUN and out:
            yield from _drain(out)
        try:
            if kind is LONE_RUN:  # (the async driver's: `_lone.alone_steps`)
                value = yield op
            elif kind is RUN:
                if session is not None:
                    yield _FLUSH  # the previous step's checkpoint commits before this one
            elif kind == "get_tuple":
                value = yield _Call("get_tuple", (op.config,))
            elif kind == "get_before" or kind == "get_delta_history":
                # a subgraph under a replay (pregel/_replay.py), a DeltaChannel's history
                # (pregel/_delta.py)
                value = yield _Call(kind, op[1:])
            elif kind is CACHE_OP:  # a cache call (pregel/_cache.py)
                value = yield op
            else:  # a write op
                if session.inflight:
                    yield _AWAIT_INFLIGHT  # task writes commit before what follows
                if session.passes_ops_through:
                    yield _Call("call_saver", (op,))
                else:
                    items = session.write(op)
                    if items:
                        yield _Call("commit", (items,))
        except BaseException as e:  # noqa: BLE001
            exc = e
            yield from _drain(out)
            continue
        if kind is not RUN:
            continue
        # LangGraph's runner yields queued output before running a step's tasks, after
        # several tasks, and before raising a task's error
        yield from _drain(out)
        tasks = op.tasks
        if not tasks:
            continue
        token = ACTIVE.set(session) if hook and session.mode == "writer" else None
        # LangGraph's runner also hands each task's chunks on as it finishes when several
        # run (and a consumer stopping there leaves the others to finish or be cancelled)
        live = (eager or len(tasks) > 1) and out is not None
        try:
            # (the sync driver hands chunks on while the step runs; the async one does
            # when the run's queue is a LiveOut)
            yield _new(_Tick, (tasks, hook, live))  # _Tick(...)
        except GeneratorExit:
            raise  # the consumer stopped during a live step
        except BaseException as e:  # noqa: BLE001
            exc = e
        finally:
            if token is not None:
                ACTIVE.reset(token)
        if exc is not None or len(tasks) > 1 or eager:
            yield from _drain(out)


def _eager(loop: PregelLoop) -> bool:
    stream = loop.stream
    return stream is not None and (
        loop.subgraph_stream
        or "custom" in stream.modes
        or "messages" in stream.modes
        or getattr(loop.graph, "stream_eager", False)
    )


def _drain(out: deque | None) -> Iterator[_Emit]:
    while out:
        yield _new(_Emit, (out.popleft(),))  # _Emit(chunk), without __new__'s frame


def _drive_machine(
    machine: Any,
    loop: PregelLoop,
    session: SaverSession | None,
    out: deque | None,
    runner: Any,
    timeout: Any,
) -> Iterator[tuple]:
    steps = Stepping(_steps(machine, loop, session, out))
    for item in steps:
        kind = type(item)
        if kind is _Emit:
            yield item.chunk
            continue
        try:
            if kind is not _Tick:  # a session call or a cache op
                steps.value = _perform(session, item)
            elif item.live:
                done = _on_done(loop, session, item, False)
                yield from _live_tick(runner, item.tasks, done, timeout, out)
            else:
                runner.tick(
                    item.tasks, on_done=_on_done(loop, session, item, False), timeout=timeout
                )
        except GeneratorExit:
            raise  # the consumer stopped (during a live step): nothing more may be yielded
        except BaseException as e:  # noqa: BLE001
            steps.error = e


def _on_done(loop: PregelLoop, session: Any, tick: _Tick, is_async: bool) -> Any:
    """The runner's `on_done` for a step: the loop's, wrapped by the session's hook when
    it takes each finished task's writes (committed at once; async: started on the event
    loop, awaited before the session's next operation)."""
    if not tick.hook:
        return loop.on_task_done
    return session.hook(loop, len(tick.tasks), session.start_commit if is_async else session.commit)


async def adrive(
    loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> AsyncIterator[tuple]:
    """Async driver: the same step machine, awaiting the runner and the saver."""
    machine = loop.run()
    loop.aio_loop = asyncio.get_running_loop()  # (task calls run on it: pregel/_calls.py)
    session = (
        SaverSession(saver, loop.durability, True, loop.is_nested) if saver is not None else None
    )
    if FAST_PATHS:
        _take_fast_paths(loop, saver, session, out, runner, timeout, True)
    else:
        loop._shares_inputs = False
    steps = _adrive_machine(machine, loop, session, out, runner, timeout)
    closed = False
    try:
        async for chunk in steps:
            yield chunk
    except GeneratorExit:
        closed = True
        raise
    finally:
        if closed and loop.durability == "exit":
            # LangGraph's loop saves its exit checkpoint before the step's running tasks
            # are cancelled (their cancellation is no pending write of it)
            await _asettle(machine, session)
            await steps.aclose()
        else:
            await steps.aclose()  # a stop mid-step (live ticks) cancels the step's tasks
            if closed:
                await _asettle(machine, session)
        machine.close()
        if session is not None and not session.closed:
            try:
                await session.aclose()
            except Exception as e:  # noqa: BLE001
                _warn_lost(e)


async def _adrive_machine(
    machine: Any,
    loop: PregelLoop,
    session: SaverSession | None,
    out: deque | None,
    runner: Any,
    timeout: Any,
) -> AsyncIterator[tuple]:
    steps = Stepping(_steps(machine, loop, session, out))
    live = isinstance(out, LiveOut)
    for item in steps:
        if type(item) is _Emit:
            yield item.chunk
        elif type(item) is not _Tick:  # a session call or a cache op
            try:
                steps.value = await _aperform(session, item)
            except BaseException as e:  # noqa: BLE001 - thrown into the steps
                steps.error = e
        elif live and item.live:  # chunks go out while the step runs (_live.py)
            done = _on_done(loop, session, item, True)
            chunks = tick_live(out, runner.atick(item.tasks, on_done=done, timeout=timeout))
            try:
                while True:
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                    except BaseException as e:  # noqa: BLE001 - the tick's error
                        steps.error = e
                        break
                    yield chunk  # a close here cancels the step (tick_live's cleanup)
            finally:
                await chunks.aclose()
        else:
            done = _on_done(loop, session, item, True)
            try:
                await runner.atick(item.tasks, on_done=done, timeout=timeout)
            except BaseException as e:  # noqa: BLE001 - thrown into the steps
                steps.error = e


# How often a live step looks for chunks its running tasks queued (seconds).
LIVE_POLL = 0.001


def _live_tick(runner: Any, tasks: Any, done: Any, timeout: Any, out: Any) -> Iterator[tuple]:
    """Sync driver's live step (the async one's is `_live.tick_live`, woken by its queue):
    the step's tasks run on a thread of their own while this one hands on the chunks
    they queue as they appear ("custom" / "messages" modes, subgraph streaming: a node's
    writer and a model's tokens reach the consumer while the node runs, as in LangGraph).
    The chunks still queued when the step ends are left for the driver's drain."""
    ctx = contextvars.copy_context()
    finished = threading.Event()
    failed: list[BaseException] = []

    pool = get_pool()

    def step(pooled: bool = True) -> None:
        if pooled:
            pool.started(1)
        try:
            ctx.run(runner.tick, tasks, on_done=done, timeout=timeout)
        except BaseException as e:  # noqa: BLE001 - raised in the driver's thread
            failed.append(e)
        finally:
            finished.set()

    # a pooled worker thread (a new thread per step would cost more than most steps);
    # a thread of its own when the pool is saturated (its workers may be waiting on us)
    if not pool.submit_now(step):
        threading.Thread(
            target=step, args=(False,), name="warpgraph-live-step", daemon=True
        ).start()
    try:
        while not finished.wait(LIVE_POLL):
            while out:
                yield out.popleft()
    except GeneratorExit:
        finished.wait()  # the consumer stopped: the step's tasks still finish
        raise
    if failed:
        raise failed[0]


def _note(run_err: BaseException, e: BaseException) -> None:
    add_note = getattr(run_err, "add_note", None)  # Python 3.11+
    if e is not run_err and add_note is not None:
        add_note(f"while saving this run's last checkpoint writes: {e!r}")


def _quiet(fn: Any) -> None:
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        _warn_lost(e)


def _warn_lost(e: BaseException) -> None:
    warnings.warn(f"a stopped run's last checkpoint writes were not saved: {e!r}", stacklevel=3)


def setup_loop(
    graph: Any,
    input: Any,
    config: dict | None,
    *,
    context: Any,
    stream_mode: Any,
    print_mode: Any,
    output_keys: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    durability: Any,
    subgraphs: bool,
    put: Any,
    capture: list | None,
    control: Any = None,
) -> tuple[PregelLoop, Any]:
    """The run's config/runtime/stream set up like LangGraph's `stream()`, and its loop."""
    config = ensure_config(graph.config, config)
    if config["recursion_limit"] < 1:
        raise ValueError("recursion_limit must be at least 1")
    if output_keys is None:
        output_keys = graph.stream_channels_asis
    else:
        for k in [output_keys] if isinstance(output_keys, str) else output_keys:
            if k not in graph.channels:
                raise ValueError(f"Key {k} not in channels")
    modes = {stream_mode} if isinstance(stream_mode, str) else set(stream_mode)
    modes.update([print_mode] if isinstance(print_mode, str) else print_mode)
    saver = graph._resolve_checkpointer(config)
    conf = config[CONF]
    if saver is not None and not conf:
        raise ValueError(
            "Checkpointer requires one or more of the following 'configurable' "
            "keys: thread_id, checkpoint_ns, checkpoint_id"
        )
    store = (
        getattr(conf[CONFIG_KEY_RUNTIME], "store", None)
        if CONFIG_KEY_RUNTIME in conf
        else graph.store
    )
    if graph.checkpointer is True:
        config = graph._own_checkpoint_config(config)
        conf = config[CONF]
    if saver is None and durability is not None:
        warnings.warn("`durability` has no effect when no checkpointer is present.", stacklevel=3)
    dur = durability if durability is not None else conf.get(CONFIG_KEY_DURABILITY, "async")
    if durability is not None:
        conf[CONFIG_KEY_DURABILITY] = dur
    if "custom" in modes:

        def writer(c: Any) -> None:
            ns = get_config()[CONF][CONFIG_KEY_CHECKPOINT_NS]
            put((tuple(ns.split(NS_SEP)[:-1]), "custom", c))
    elif CONFIG_KEY_STREAM in conf:
        writer = conf[CONFIG_KEY_RUNTIME].stream_writer
    else:  # not streamed: a parent's custom writer is not this run's (LangGraph's no-op)
        writer = _unstreamed
    conf[CONFIG_KEY_RUNTIME] = run_runtime(
        conf.get(CONFIG_KEY_RUNTIME, DEFAULT_RUNTIME),
        context=_coerce_context(graph.context_schema, context),
        store=store,
        stream_writer=writer,
        configurable=conf,
        control=control,
    )
    loop = PregelLoop(
        graph,
        input,
        config=config,
        checkpointer=saver,
        store=store,
        stream=Stream(put, modes) if put is not None else None,
        output_keys=output_keys,
        stream_keys=graph.stream_channels_asis,
        interrupt_before=interrupt_before or graph.interrupt_before_nodes,
        interrupt_after=interrupt_after or graph.interrupt_after_nodes,
        durability=dur,
        capture_interrupts=capture,
    )
    if subgraphs:
        loop.subgraph_stream = True
    return loop, saver


def _unstreamed(_: Any) -> None:
    """The custom writer of a run that streams no custom chunks."""


def _coerce_context(schema: Any, context: Any) -> Any:
    """A dict context becomes an instance of a dataclass / pydantic context schema."""
    if schema is None or context is None or not isinstance(context, dict):
        return context
    if is_dataclass(schema) or (isinstance(schema, type) and hasattr(schema, "model_validate")):
        return schema(**context)
    return context
