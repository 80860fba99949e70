"""Call tasks (the functional API's `@task` calls) whose config is built on first use.

Most task calls never look at their config: a plain function (no injected `config`,
`writer`, `store`... parameter) called without retry or cache policy, callbacks or
timeout, in a step with no saved writes. `prepare_call` (`pregel/_calls.py`) makes those a
`LazyCallTask` holding what building the config needs; it runs through the same
unconfigured path as lazily configured node tasks (`_retry._run_unconfigured`: the task
stands in the config variable, so `get_config()` and task calls made inside build it), and
everything that reads `task.config` later gets exactly the config an eager task has.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_READ,
    CONFIG_KEY_READ_STATE,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    PUSH,
)
from warpgraph._internal._runnable import RunnableCallable, RunnableSeq
from warpgraph.config import LAZY_CONFIG_HOLDERS
from warpgraph.pregel._algo import (
    _RT_FIELDS,
    _RT_STD,
    D_CONF,
    LazyTask,
    _builder_of,
    _exec_info,
    _local_read,
    _no_null_resume,
    _runtime,
    _scratch,
    _stored_config,
)
from warpgraph.pregel._write import ChannelWrite
from warpgraph.runtime import ExecutionInfo, Runtime

__all__ = (
    "PUSH_TRIGGER",
    "LazyCallTask",
    "LoopView",
    "call_config",
    "call_plans",
    "lazy_call_task",
)

PUSH_TRIGGER = (PUSH,)


def call_config(
    loop: Any,
    parent: Any,
    name: str,
    task_id: str,
    task_ns: str,
    path: tuple,
    step: int,
    cid: str,
    writes: Any,
    pad: Any,
    callbacks: Any,
) -> dict:
    """The config of a call task (LangGraph's): the caller's, with the call's own ids,
    namespace, scratchpad, runtime and writers (`loop`: the loop or its `LoopView`)."""
    pconfig = parent.config
    pconf = pconfig[CONF]
    runtime = pconf.get(CONFIG_KEY_RUNTIME)
    if runtime is not None and hasattr(runtime, "override"):
        rid = pconfig.get("run_id")
        rid = str(rid) if rid else None
        tid = pconf.get("thread_id")
        if type(runtime) is Runtime and _RT_FIELDS == _RT_STD:  # (the loop's builders)
            runtime = _runtime(
                runtime.context,
                loop.store,
                runtime.stream_writer,
                runtime.heartbeat,
                runtime.previous,
                _exec_info(cid, task_ns, task_id, tid, rid, 1, time.time()),
                runtime.server_info,
                runtime.control,
            )
        else:
            runtime = runtime.override(
                store=loop.store, execution_info=ExecutionInfo(cid, task_ns, task_id, tid, rid)
            )
    conf = dict(pconf)
    conf[CONFIG_KEY_TASK_ID] = task_id
    conf[CONFIG_KEY_SEND] = writes.extend
    conf[CONFIG_KEY_READ] = partial(_local_read, loop.engine, writes)
    conf[CONFIG_KEY_READ_STATE] = None
    conf[CONFIG_KEY_CHECKPOINTER] = loop.saver or pconf.get(CONFIG_KEY_CHECKPOINTER)
    conf[CONFIG_KEY_CHECKPOINT_MAP] = {
        **(pconf.get(CONFIG_KEY_CHECKPOINT_MAP) or {}),
        loop.parent_ns: cid,
    }
    conf[CONFIG_KEY_CHECKPOINT_ID] = None
    conf[CONFIG_KEY_CHECKPOINT_NS] = task_ns
    conf[CONFIG_KEY_SCRATCHPAD] = pad
    conf[CONFIG_KEY_RUNTIME] = runtime
    config = {k: v for k, v in pconfig.items() if k != CONF}
    config["metadata"] = {
        **(pconfig.get("metadata") or {}),
        "langgraph_step": step,
        "langgraph_node": name,
        "langgraph_triggers": PUSH_TRIGGER,
        "langgraph_path": path,
        "langgraph_checkpoint_ns": task_ns,
    }
    config["run_name"] = name
    if callbacks:
        config["callbacks"] = callbacks
    config[CONF] = conf
    return config


def _fresh_pad(loop: Any, caller_pad: Any, step: int) -> Any:
    """The scratchpad `_algo.scratchpad_for` makes for a call task when the loop has no
    pending writes: no resume values, the caller's null resume, fresh counters."""
    if caller_pad is None:
        return _scratch(step, loop.stop, _no_null_resume, [])
    return _scratch(step, loop.stop, caller_pad.get_null_resume, [])


class LoopView:
    """What building a call task's config reads of its loop (constant while the loop
    runs). Lazy call tasks hold this rather than the loop, so a finished run's loop and
    tasks are freed by reference counting, not left to the cyclic collector."""

    __slots__ = ("engine", "parent_ns", "saver", "stop", "store")

    def __init__(self, loop: Any) -> None:
        self.engine, self.parent_ns, self.saver = loop.engine, loop.parent_ns, loop.saver
        self.stop, self.store = loop.stop, loop.store


class LazyCallTask(LazyTask):
    """A call task whose config is built on first access. Its `Deferred` tuple is
    `(LoopView, (parent, task_ns), step, checkpoint id, plan)`; `plan` is what
    `_retry._run_unconfigured` runs (see `call_plans`)."""

    __slots__ = ()

    def _build(self, loop: Any, ctx: tuple, step: int, cid: str) -> dict:
        parent, task_ns = ctx
        pad = _fresh_pad(loop, parent.config[CONF].get(CONFIG_KEY_SCRATCHPAD), step)
        return call_config(
            loop, parent, self.name, self.id, task_ns, self.path, step, cid, self.writes, pad, None
        )

    def config_tags(self) -> Any:
        """The config's tags without building it (the caller's)."""
        deferred = _stored_config(self)
        if type(deferred) is tuple:
            return deferred[D_CONF][0].config.get("tags")  # (the parent's)
        return deferred.get("tags")


LazyCallTask.__name__ = LazyCallTask.__qualname__ = LazyTask.__name__
LazyCallTask.__module__ = LazyTask.__module__
LAZY_CONFIG_HOLDERS.add(LazyCallTask)

# lazy_call_task(name, input, proc, writes, (view, (parent, task_ns), step, cid, plan),
#                triggers, retry_policy, None, id, path, (), (), None)
lazy_call_task = _builder_of(LazyCallTask)


def call_plans(proc: Any) -> tuple[Any, Any]:
    """(sync plan, async plan) of a task function's runnable (`get_runnable_for_task`), each
    None when that kind of run must build the config: the function asks for injected
    arguments, or (async) it is a sync function run on a worker thread. A plan is
    `(runner, False, ((0, writer),))`: `runner((args, kwargs))` calls the function (an async
    one returns its coroutine) and the writer records its value as RETURN."""
    if type(proc) is not RunnableSeq or len(proc._rest) != 1:
        return None, None
    run, writer = proc._first, proc._rest[0]
    if type(run) is not RunnableCallable or type(writer) is not ChannelWrite:
        return None, None
    if run._inject or run.kwargs or not run.explode_args:
        return None, None
    steps = ((0, writer),)
    sync_plan = async_plan = None
    if run.func is not None:
        func = run.func
        sync_plan = (lambda inp: func(*inp[0], **inp[1]), False, steps)
    else:
        afunc = run.afunc
        async_plan = (lambda inp: afunc(*inp[0], **inp[1]), False, steps)
    return sync_plan, async_plan
