"""Drivers of the loop's step machine: the sync one performs each operation directly, the
async one awaits the runner and the saver's `a*` methods. Both yield stream chunks at the
points where LangGraph's runner yields them."""

from __future__ import annotations

import inspect
import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import is_dataclass
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_DURABILITY,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_STREAM,
    NS_SEP,
)
from warpgraph.config import ensure_config, get_config
from warpgraph.pregel._loop import RUN, PregelLoop, Stream

__all__ = ("adrive", "drive", "setup_loop")

_TASK_PATH_CACHE: dict[tuple[type, str], bool] = {}


def drive(
    loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> Iterator[tuple]:
    """Sync driver of the loop's step machine; yields stream chunks as they appear."""
    machine = loop.run()
    try:
        yield from _drive_machine(machine, loop, saver, out, runner, timeout)
    finally:
        machine.close()


def _drive_machine(
    machine: Any, loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> Iterator[tuple]:
    pw_path = _accepts_task_path(saver)
    value: Any = None
    exc: BaseException | None = None
    while True:
        try:
            op = machine.send(value) if exc is None else machine.throw(exc)
        except StopIteration:
            if out:
                while out:
                    yield out.popleft()
            break
        except BaseException:
            if out:
                while out:
                    yield out.popleft()
            raise
        value = exc = None
        kind = op[0]
        # LangGraph's runner yields queued output before running a step's tasks, after
        # several tasks, and before raising a task's error
        if kind is RUN:
            while out:
                yield out.popleft()
        try:
            if kind is RUN:
                runner.tick(op[1], on_done=loop.on_task_done, timeout=timeout)
            elif kind == "put":
                saver.put(*op[1:])
            elif kind == "put_writes":
                saver.put_writes(*op[1:]) if pw_path else saver.put_writes(*op[1:4])
            else:
                value = saver.get_tuple(op[1])
        except BaseException as e:  # noqa: BLE001
            exc = e
            while out:
                yield out.popleft()
        else:
            if kind is RUN and len(op[1]) > 1:
                while out:
                    yield out.popleft()


async def adrive(
    loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> AsyncIterator[tuple]:
    """Async driver: the same step machine, awaiting the runner and the saver."""
    machine = loop.run()
    try:
        async for chunk in _adrive_machine(machine, loop, saver, out, runner, timeout):
            yield chunk
    finally:
        machine.close()


async def _adrive_machine(
    machine: Any, loop: PregelLoop, saver: Any, out: deque | None, runner: Any, timeout: Any
) -> AsyncIterator[tuple]:
    pw_path = _accepts_task_path(saver, "aput_writes")
    value: Any = None
    exc: BaseException | None = None
    while True:
        try:
            op = machine.send(value) if exc is None else machine.throw(exc)
        except StopIteration:
            if out:
                while out:
                    yield out.popleft()
            break
        except BaseException:
            if out:
                while out:
                    yield out.popleft()
            raise
        value = exc = None
        kind = op[0]
        # LangGraph's runner yields queued output before running a step's tasks, after
        # several tasks, and before raising a task's error
        if kind is RUN:
            while out:
                yield out.popleft()
        try:
            if kind is RUN:
                await runner.atick(op[1], on_done=loop.on_task_done, timeout=timeout)
            elif kind == "put":
                await saver.aput(*op[1:])
            elif kind == "put_writes":
                await (saver.aput_writes(*op[1:]) if pw_path else saver.aput_writes(*op[1:4]))
            else:
                value = await saver.aget_tuple(op[1])
        except BaseException as e:  # noqa: BLE001
            exc = e
            while out:
                yield out.popleft()
        else:
            if kind is RUN and len(op[1]) > 1:
                while out:
                    yield out.popleft()


def _accepts_task_path(saver: Any, meth: str = "put_writes") -> bool:
    if saver is None:
        return False
    key = (type(saver), meth)
    if key not in _TASK_PATH_CACHE:
        try:
            params = inspect.signature(getattr(saver, meth)).parameters
            _TASK_PATH_CACHE[key] = "task_path" in params or any(
                p.kind is p.VAR_POSITIONAL for p in params.values()
            )
        except (TypeError, ValueError):
            _TASK_PATH_CACHE[key] = False
    return _TASK_PATH_CACHE[key]


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
    store = conf[CONFIG_KEY_RUNTIME].store if CONFIG_KEY_RUNTIME in conf else graph.store
    if graph.checkpointer is True:
        config = graph._own_checkpoint_config(config)
        conf = config[CONF]
    if saver is None and durability is not None:
        warnings.warn("`durability` has no effect when no checkpointer is present.", stacklevel=3)
    dur = durability if durability is not None else conf.get(CONFIG_KEY_DURABILITY, "async")
    if durability is not None:
        conf[CONFIG_KEY_DURABILITY] = dur
    from warpgraph.runtime import DEFAULT_RUNTIME, Runtime

    if "custom" in modes:

        def writer(c: Any) -> None:
            ns = get_config()[CONF][CONFIG_KEY_CHECKPOINT_NS]
            put((tuple(ns.split(NS_SEP)[:-1]), "custom", c))
    elif CONFIG_KEY_STREAM in conf:
        writer = conf[CONFIG_KEY_RUNTIME].stream_writer
    else:
        writer = None
    parent_rt = conf.get(CONFIG_KEY_RUNTIME, DEFAULT_RUNTIME)
    rt = Runtime(context=_coerce_context(graph.context_schema, context), store=store)
    if writer is not None:
        rt = rt.override(stream_writer=writer)
    conf[CONFIG_KEY_RUNTIME] = parent_rt.merge(rt)
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


def _coerce_context(schema: Any, context: Any) -> Any:
    """A dict context becomes an instance of a dataclass / pydantic context schema."""
    if schema is None or context is None or not isinstance(context, dict):
        return context
    if is_dataclass(schema) or (isinstance(schema, type) and hasattr(schema, "model_validate")):
        return schema(**context)
    return context
