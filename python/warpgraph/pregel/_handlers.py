"""Node error handlers (`StateGraph.add_node(..., error_handler=...)`).

When a task of a node that has a handler fails (its retries spent), the loop saves its
error with an `ERROR_SOURCE_NODE` marker and the runner runs a handler task in the same
step: the handler node called with the failed task's input and a `NodeError`, in a config
derived from the failed task's. A failing handler fails the run. On a later run the
marker tells that the task already failed: the task is not run again, its handler is.
Nothing here runs for graphs without handlers.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_NODE_ERROR,
    CONFIG_KEY_READ,
    CONFIG_KEY_READ_STATE,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    ERROR,
    ERROR_SOURCE_NODE,
    NS_END,
    NS_SEP,
    PUSH,
)
from warpgraph.errors import NodeError
from warpgraph.pregel import _engine
from warpgraph.pregel._algo import _local_read, _task, scratchpad_for
from warpgraph.runtime import Runtime

__all__ = ("handler_task", "resume_handlers")

_TRIGGERS = (PUSH,)


def handler_task(loop: Any, failed: Any, error: BaseException) -> Any:
    """The task running the error handler of `failed` (added to the loop's tasks), or None
    when its node has no handler node."""
    name = loop.graph.node_error_handler_map.get(failed.name)
    info = loop._nodes.get(name) if name is not None else None
    if info is None or info[0] is None:
        return None
    proc, _mapper, metadata, tags, retry, writers, subgraphs, _timeout, _managed = info
    pns = loop.parent_ns
    ns = f"{pns}{NS_SEP}{name}" if pns else name
    task_id = _engine.task_id(
        loop.checkpoint_id,
        (ns, str(loop.step), name, PUSH, "node_error_handler", failed.id),
        loop.checkpoint_v,
    )
    task_ns = f"{ns}{NS_END}{task_id}"
    path = (*failed.path[:3], "node_error_handler", False)
    base = failed.config
    md = {
        **(base.get("metadata") or {}),
        "langgraph_step": loop.step,
        "langgraph_node": name,
        "langgraph_triggers": _TRIGGERS,
        "langgraph_path": path,
        "langgraph_checkpoint_ns": task_ns,
    }
    if metadata:
        md.update(metadata)
    config = {**base, "metadata": md, "run_name": name}
    if tags:
        config["tags"] = [*(base.get("tags") or ()), *tags]
    writes: deque = deque()
    conf = {**base[CONF]}
    runtime = conf.get(CONFIG_KEY_RUNTIME)
    if isinstance(runtime, Runtime):
        runtime = runtime.override(store=loop.store, previous=loop._previous)
    conf[CONFIG_KEY_TASK_ID] = task_id
    conf[CONFIG_KEY_SEND] = writes.extend
    conf[CONFIG_KEY_READ] = partial(_local_read, loop.engine, writes)
    conf[CONFIG_KEY_READ_STATE] = None
    conf[CONFIG_KEY_CHECKPOINT_NS] = task_ns
    conf[CONFIG_KEY_SCRATCHPAD] = scratchpad_for(loop, task_id, task_ns)
    conf[CONFIG_KEY_RUNTIME] = runtime
    conf[CONFIG_KEY_NODE_ERROR] = NodeError(node=failed.name, error=error)
    config[CONF] = conf
    task = _task(
        name,
        failed.input,
        proc,
        writes,
        config,
        _TRIGGERS,
        retry or loop.graph.retry_policy,
        None,
        task_id,
        path,
        writers,
        subgraphs,
        None,
    )
    loop.tasks[task_id] = task
    return task


def resume_handlers(loop: Any) -> None:
    """On resume: tasks whose saved writes say they failed and were routed to a handler
    keep their error (so they are not run again) and get their handler task instead."""
    pending = loop.pending_writes
    failed = {tid for tid, c, _ in pending if c == ERROR_SOURCE_NODE}
    if not failed:
        return
    errors: dict[str, Any] = {}
    for tid, c, v in pending:
        if c == ERROR and tid in failed and tid not in errors:
            errors[tid] = v
    for tid, error in errors.items():
        task = loop.tasks.get(tid)
        if task is None or task.name not in loop.graph.node_error_handler_map:
            continue
        task.writes.append((ERROR, error))
        handler_task(loop, task, error)
