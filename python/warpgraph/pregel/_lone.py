"""Super-steps of one plain task, run inside the step machine without the drivers.

Most steps of chains and loops run exactly one task. When nothing observes a step from
outside (the sync driver with no stream consumer, or one of "updates" / "values" chunks
only, handed on between steps: see `lone_steps`; no interrupts, no retry policy or
timeout, and either no saver, one the session passes ops to unchanged, or a batching /
group-commit session: `loop.perform_write`, `loop.lone_session`) and the task's node has a
plan (`_algo.node_plan`: a plain function and warpgraph's own writers), the whole step is:
prepare, run the function in a copy of the context made for it, commit its writes, apply
them, checkpoint. `lone_steps` does that for as many steps as qualify and returns, without
having changed anything, at the first step that does not: the general loop then does that
step.

This module decides what qualifies and runs the task; everything around the task is the
loop's, through its lone-step methods (`start_lone_task`, `finish_lone_step`,
`fail_lone_task`), which share the general step's bookkeeping: with a session, the loop
makes the driver's calls itself, in the driver's order (`flush` before the task runs, the
task's writes as the runner's hook hands them over, the checkpoint as the driver writes
it); in writer mode the session is the active one while the task runs (nested runs share
its writer). Without a saver, applying, the next checkpoint id and the next step's tasks
take one crossing (`Engine.advance`).

Nothing observable differs from the general path: the same task object (config built on
first use), the same context isolation, the same writes, saver calls, versions and errors.

Under the async driver (`loop.awaits_lone_tasks`: no saver, or one whose async methods only
call its sync ones, `SaverSession.sync_twins`) the step machine cannot run a task itself:
`alone_steps` yields each lone step's task (`LoneRunOp`) and the driver awaits it exactly as
the async runner runs a step's only task (`arun_with_retry`, inline in the driver's asyncio
task: a sync node function still runs on a worker thread, a coroutine on the event loop);
everything else of the step is the same as above. Those steps need no plan (the task runs
as the general path runs it), only a node that is not a subgraph."""

from __future__ import annotations

from collections import deque
from collections.abc import Generator
from contextvars import copy_context
from typing import Any

from warpgraph._internal._constants import (
    CONFIG_KEY_NODE_FINISHED,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_RUNTIME,
    PUSH,
)
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.pregel._algo import _RT_FIELDS, _RT_STD, _stored_config, lazy_plans, lazy_task
from warpgraph.pregel._derived import LonePlan, derived
from warpgraph.pregel._persist import ACTIVE
from warpgraph.pregel._records import (
    LONE_DRAIN_OP,
    LONE_RUN,
    LoneDrainOp,
    LoneRunOp,
    PreparedTask,
)
from warpgraph.pregel._retry import _run_unconfigured

_record = tuple.__new__  # a record of every field without its __new__'s Python frame
from warpgraph.runtime import Runtime


def lone_steps_ok(loop: Any) -> bool:
    """Whether this run may use `lone_steps` at all (decided once per run)."""
    conf = loop.conf
    return (
        FAST_PATHS
        and loop.runs_lone_tasks
        and (loop.saver is None or loop.perform_write is not None)
        and (loop.stream is None or loop.lone_out is not None)
        and not loop.interrupt_before
        and not loop.interrupt_after
        and not loop.graph.retry_policy
        and CONFIG_KEY_NODE_FINISHED not in conf  # (a callback per finished task: on_task_done)
        and type(conf.get(CONFIG_KEY_RUNTIME)) is Runtime
        and _RT_FIELDS == _RT_STD
        and not loop.traces_tasks
        and not loop.has_delta_channels
    )


def lone_steps(loop: Any) -> Generator[LoneDrainOp, Any, None]:
    """Run steps of one planned task until a step needs the general loop (see module doc).
    In a streamed run (`loop.lone_out`, the driver's chunk queue) it yields `LoneDrainOp`
    where the general path's driver hands queued chunks on: before a step's task runs (the
    previous steps' chunks; a consumer that stops there stops the run before the task
    runs) and after a task failed (its chunks before the machine saves its writes)."""
    session = loop.lone_session
    writer = session is not None and session.mode == "writer"
    out = loop.lone_out
    for t in _lone_tasks(loop, False):
        if out:
            yield LONE_DRAIN_OP
        token = ACTIVE.set(session) if writer else None  # nested runs share its writer
        try:  # (its config not built yet: the task holds what building it needs)
            copy_context().run(_run_unconfigured, t, _stored_config(t), True)  # (a copy per task)
        except Exception as exc:
            if out is None:
                loop.fail_lone_task(t, exc)
            else:
                if token is not None:  # (the consumer's code runs while it has the chunks)
                    ACTIVE.reset(token)
                    token = None
                yield from _failed_streamed(loop, t, exc, out)
            raise
        finally:
            if token is not None:
                ACTIVE.reset(token)


def _failed_streamed(loop: Any, t: Any, exc: Exception, out: Any) -> Generator[Any, Any, None]:
    """`fail_lone_task` in a streamed run, in the general path's order: the runner's commit
    of the failure (a session's hook saves its writes at once), the driver hands the
    chunks it made on (an interrupt's), then the step machine saves the queued writes."""
    if loop.lone_session is not None:
        loop.fail_lone_task(t, exc)
        if out:
            yield LONE_DRAIN_OP
        return
    loop.commit_lone_failure(t, exc)
    if out:
        yield LONE_DRAIN_OP
    loop._perform_queued_writes()


def alone_steps(loop: Any) -> Generator[LoneRunOp | LoneDrainOp, Any, None]:
    """`lone_steps` under the async driver (`loop.awaits_lone_tasks`): the step machine
    yields each step's task for the driver to run as the async runner runs a step's only
    task (`arun_with_retry`, in the driver's context); the rest of the step is the same."""
    out = loop.lone_out
    for t in _lone_tasks(loop, True):
        try:  # (the driver hands queued chunks on before it runs the task)
            yield _record(LoneRunOp, (LONE_RUN, t))  # LoneRunOp(...)
        except Exception as exc:
            if out is None:
                loop.fail_lone_task(t, exc)
            else:
                yield from _failed_streamed(loop, t, exc, out)
            raise


def _lone_tasks(loop: Any, is_async: bool) -> Generator[Any, None, None]:
    """The task of each step that lone steps can run, for the caller to run; each step is finished when the caller asks for the next task.
    Stops (having changed nothing) at the first step that needs the general loop: several
    tasks, a PUSH task, a node lone steps cannot run (`lone_plans`; the sync driver's need a
    plan, the async runner's run the node as the general path does)."""
    conf = loop.conf
    if loop.pending_writes or loop.is_replaying:
        return  # neither changes while steps run here
    prepare = loop.engine.prepare_next_tasks
    pns = loop.parent_ns
    v = loop.checkpoint_v
    runs = lone_plans(loop.graph)
    control = loop.control
    perform = loop.perform_write
    streamed = loop.stream is not None
    # the step's tasks, when the previous step's crossing prepared them (the first step's:
    # perhaps the input step's crossing, `prepared_tasks`)
    prepared: list[PreparedTask] | None = loop.prepared_tasks()
    while loop.step <= loop.stop:
        if control is not None and control._drain_reason is not None:
            return  # drained: the general loop stops before the next step
        step, cid = loop.step, loop.checkpoint_id
        if prepared is None:
            prepared = prepare(cid, pns, step, v)
        if len(prepared) != 1:
            loop._next_tasks = (step, cid, prepared)  # (the general step's, unchanged)
            return
        task_id, name, path, triggers, val = prepared[0]
        how = runs.get(name)
        if how is None or path[0] == PUSH or (how.plan is None and not is_async):
            loop._next_tasks = (step, cid, prepared)
            return
        node, mapper, writers, subgraphs, plan = how
        if mapper is not None:
            val = mapper(val)
        deferred = (loop, conf, step, cid, plan)  # (what building its config needs)
        t = lazy_task(
            name,
            val,
            node,
            deque(),
            deferred,
            triggers,
            None,
            None,
            task_id,
            path,
            writers,
            subgraphs,
            None,
        )
        if perform is not None or streamed:
            loop.start_lone_task(t)
        yield t
        prepared = loop.finish_lone_step(t)
        if CONFIG_KEY_RESUMING in conf:  # (the first step's tasks saw the flag)
            loop._end_resuming()
            conf = loop.conf


def lone_plans(graph: Any) -> dict[str, LonePlan]:
    """Per node that lone steps can run (no retry policy, no timeout, no managed values, no
    error handler; the sync driver's also need a plan: `plan` None is a node only the async
    driver's run, one that is not a subgraph); kept with the graph's other derived caches
    (`_derived.py`)."""
    d = derived(graph)
    runs = d.lone_plans
    if runs is None:
        plans = lazy_plans(graph)
        handled = getattr(graph, "node_error_handler_map", ())  # (their failures route)
        runs = d.lone_plans = {
            name: LonePlan(info.node, info.mapper, info.writers, info.subgraphs, plan)
            for name, info in d.nodes.items()
            if ((plan := plans.get(name)) is not None or not info.subgraphs)
            and not info.retry_policy
            and info.timeout is None
            and not info.managed
            and name not in handled
        }
    return runs
