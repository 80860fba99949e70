"""A graph run as a langchain-core chain run: only for runs that need one.

A run is traced when its config carries callbacks, when it streams "messages" or "tools"
(those modes are callback handlers), or when langchain-core tracing is on ambiently
(LangSmith, debug). Then the run starts a chain run named after the graph (or the config's
`run_name`), every task gets a child callback manager tagged `graph:step:N` and runs under
its node's name (`_algo._task_config`), and the run ends with `on_chain_end(output)` or
`on_chain_error(error)`. Untraced runs only pay `begin`'s test.
"""

from __future__ import annotations

import sys
from typing import Any

from warpgraph._internal import _lc
from warpgraph._internal._constants import CONF, CONFIG_KEY_TASK_ID

__all__ = ("abegin", "begin", "wanted")

_LC_CONTEXT = "langchain_core.tracers.context"  # (ambient tracing lives there)
# configurable key set by v3 event streams (warpgraph.stream): their messages handler
_MESSAGES_V2 = "__pregel_stream_messages_v2"


def wanted(loop: Any) -> bool:
    """Whether `loop`'s run is traced (see module doc)."""
    if loop.config["callbacks"]:
        return True
    own = loop.own_stream
    if own is not None and ("messages" in own.modes or "tools" in own.modes):
        return _lc.available()  # (without langchain-core no chat model can stream)
    return _LC_CONTEXT in sys.modules and _lc.ambient_tracing()


def _prepare(loop: Any, manager: Any, version: str) -> None:
    """Drop inherited stream handlers that only stream their own graph when this run is
    not one of a parent's tasks (a caller's handler would take this graph's chunks for its
    own); mark the integration."""
    if CONFIG_KEY_TASK_ID not in loop.config.get(CONF, {}):
        from warpgraph.pregel._messages import StreamMessagesHandler

        def keep(h: Any) -> bool:
            return not (
                isinstance(h, StreamMessagesHandler) or type(h).__name__ == "StreamToolCallHandler"
            ) or bool(getattr(h, "subgraphs", True))

        manager.handlers = [h for h in manager.handlers if keep(h)]
        manager.inheritable_handlers = [h for h in manager.inheritable_handlers if keep(h)]
    own = loop.own_stream
    if version != "v2" and own is not None and "messages" in own.modes:
        # a v1 messages stream never goes through an inherited v3 (content-block) handler
        from warpgraph.pregel._messages import StreamMessagesHandlerV2 as V2

        manager.handlers = [h for h in manager.handlers if not isinstance(h, V2)]
        manager.inheritable_handlers = [
            h for h in manager.inheritable_handlers if not isinstance(h, V2)
        ]
    if "ls_integration" not in manager.metadata:
        manager.add_metadata({"ls_integration": "langgraph"})


def _attach(graph: Any, loop: Any, run: Any, is_async: bool, version: str) -> Any:
    """Add this run's stream handlers and hand the run to the loop's tasks."""
    stream = loop.own_stream
    if stream is not None:
        modes = stream.modes
        if "messages" in modes:
            from warpgraph.pregel import _messages

            cls = (
                _messages.StreamMessagesHandlerV2
                if version == "v2" and loop.config[CONF].get(_MESSAGES_V2)
                else _messages.StreamMessagesHandler
            )
            run.inheritable_handlers.append(
                cls(stream.put, loop.subgraph_stream, parent_ns=loop.ns)
            )
        if "tools" in modes:
            from warpgraph.pregel._tools import StreamToolCallHandler

            run.inheritable_handlers.append(
                StreamToolCallHandler(stream.put, loop.subgraph_stream, parent_ns=loop.ns)
            )
    loop.run_manager = run
    if _has_graph_handler(loop.config.get("callbacks")):
        from collections import deque

        from warpgraph import callbacks as graph_callbacks

        get = (
            graph_callbacks.get_async_graph_callback_manager_for_config
            if is_async
            else graph_callbacks.get_sync_graph_callback_manager_for_config
        )
        loop._graph_callbacks = get(loop.config, run_id=run.run_id)
        loop.lifecycle = deque()
    # (a run name in the task base turns the lazily configured tasks and lone steps off;
    # each task's config gets its node's name and a child manager: _algo._task_config)
    loop._task_base["run_name"] = graph.get_name()
    return run


def _start_args(graph: Any, loop: Any) -> tuple[str, Any]:
    config = loop.config
    return config.get("run_name", graph.get_name()), config.get("run_id")


def begin(graph: Any, loop: Any, input: Any, version: str = "v1") -> Any:
    """Start the chain run of a sync run whose loop is `wanted`."""
    manager = _lc.manager_for_config(loop.config)
    _prepare(loop, manager, version)
    name, run_id = _start_args(graph, loop)
    run = manager.on_chain_start(None, input, name=name, run_id=run_id)
    return _attach(graph, loop, run, False, version)


async def abegin(graph: Any, loop: Any, input: Any, version: str = "v1") -> Any:
    """Start the chain run of an async run whose loop is `wanted`."""
    manager = _lc.async_manager_for_config(loop.config)
    _prepare(loop, manager, version)
    name, run_id = _start_args(graph, loop)
    run = await manager.on_chain_start(None, input, name=name, run_id=run_id)
    return _attach(graph, loop, run, True, version)


def task_callbacks(cfg: dict, loop: Any, step: int, name: str) -> None:
    """A traced run's task: runs as `name`, under a child manager of the graph's run."""
    cfg["run_name"] = name
    run = loop.run_manager
    if run is not None:
        cfg["callbacks"] = run.get_child(f"graph:step:{step}")


def output(loop: Any) -> Any:
    """What the run's `on_chain_end` reports: the output channels' values."""
    return loop.read_values()


async def shielded(coro: Any) -> None:
    """Await `coro` so that a cancellation of the run does not cut it short."""
    import asyncio

    await asyncio.shield(coro)


def _has_graph_handler(callbacks: Any) -> bool:
    if not callbacks:
        return False
    from warpgraph.callbacks import GraphCallbackHandler

    if isinstance(callbacks, GraphCallbackHandler):
        return True
    handlers = getattr(callbacks, "handlers", None)
    if handlers is not None:  # a callback manager
        return any(isinstance(h, GraphCallbackHandler) for h in handlers)
    return isinstance(callbacks, list) and any(
        isinstance(h, GraphCallbackHandler) for h in callbacks
    )


def _lifecycle_events(loop: Any) -> Any:
    from warpgraph.callbacks import lifecycle_event

    manager = loop._graph_callbacks
    while loop.lifecycle:
        kind, status, checkpoint_id, ns, found = loop.lifecycle.popleft()
        event = lifecycle_event(kind, manager.run_id, status, checkpoint_id, ns, found)
        yield (manager.on_resume if kind == "resume" else manager.on_interrupt), event


def observe(loop: Any, chunks: Any) -> Any:
    """A traced sync run's chunks, with its lifecycle events told to the graph handlers as
    they are recorded (between chunks and at the end)."""
    for chunk in chunks:
        if loop.lifecycle:
            for call, event in _lifecycle_events(loop):
                call(event)
        yield chunk
    if loop.lifecycle:
        for call, event in _lifecycle_events(loop):
            call(event)


async def aobserve(loop: Any, chunks: Any) -> Any:
    """Async twin of `observe`."""
    async for chunk in chunks:
        if loop.lifecycle:
            for call, event in _lifecycle_events(loop):
                await call(event)
        yield chunk
    if loop.lifecycle:
        for call, event in _lifecycle_events(loop):
            await call(event)
