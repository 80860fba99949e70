"""Super-steps of one plain task, run inside the step machine without the drivers.

Most steps of chains and loops run exactly one task. When nothing observes a step from
outside (the sync driver with no stream consumer, no interrupts, no retry policy or
timeout, and either no saver, one the session passes ops to unchanged, or a batching /
group-commit session: `loop.direct`, `loop.lone_session`) and the task's node has a plan (`_algo.node_plan`: a plain function and warpgraph's own
writers), the whole step is: prepare, run the function in a copy of the context made for
it, commit its writes, apply them, checkpoint. Without a saver, applying, the next
checkpoint id and the next step's tasks take one crossing (`Engine.advance`).
`lone_steps` does that for as many steps as qualify and returns, without having changed
anything, at the first step that does not: the general loop then does that step.

With a session, the loop makes the driver's calls itself, in the driver's order: `flush`
before the task runs (the previous checkpoint commits first), the task's writes through
`task_done` (the runner hook's `task_writes(ops, last=True)`), the checkpoint through
`write_now`; in writer mode the session is the active one while the task runs (nested
runs share its writer).

Nothing observable differs from the general path: the same task object (config built on
first use), the same context isolation, the same writes, saver calls, versions and errors."""

from __future__ import annotations

from collections import deque
from contextvars import copy_context
from typing import Any

from warpgraph._internal._constants import (
    CONFIG_KEY_NODE_FINISHED,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    NO_WRITES,
    PUSH,
)
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.pregel._algo import (
    _RT_FIELDS,
    _RT_STD,
    CONTROL_WRITES,
    draw_checkpoint_id,
    lazy_plans,
    lazy_task,
)
from warpgraph.pregel._derived import LonePlan, derived
from warpgraph.pregel._persist import ACTIVE
from warpgraph.pregel._retry import _run_unconfigured
from warpgraph.pregel._stream import LATEST
from warpgraph.runtime import Runtime


def lone_steps_ok(loop: Any) -> bool:
    """Whether this run may use `lone_steps` at all (decided once per run)."""
    conf = loop.conf
    return (
        FAST_PATHS
        and loop.inline
        and (loop.saver is None or loop.direct is not None)
        and loop.stream is None
        and not loop.interrupt_before
        and not loop.interrupt_after
        and not loop.graph.retry_policy
        and conf.get(CONFIG_KEY_SCRATCHPAD) is None
        and CONFIG_KEY_NODE_FINISHED not in conf  # (a callback per finished task: on_task_done)
        and type(conf.get(CONFIG_KEY_RUNTIME)) is Runtime
        and _RT_FIELDS == _RT_STD
        and "run_name" not in loop._task_base
        and loop._delta is None
    )


def lone_steps(loop: Any) -> None:
    """Run steps of one planned task until a step needs the general loop (see module doc)."""
    conf = loop.conf
    if loop.pending_writes or loop.is_replaying or CONFIG_KEY_RESUMING in conf:
        return  # none of these changes while steps run here
    engine = loop.engine
    prepare = engine.prepare_next_tasks
    apply = engine.apply_writes
    runs = lone_plans(loop.graph)
    pns = loop.parent_ns
    nv = loop.next_version
    stop = loop.stop
    id_base = loop._id_base
    out_set = loop._out_set
    track = loop._track_values or loop._want_values
    lazy_values = loop._lazy_values
    direct = loop.direct
    session = loop.lone_session
    writer = session is not None and session.mode == "writer"
    advance = engine.advance
    v = loop.checkpoint_v
    step = loop.step
    raw = None  # the step's tasks, when the previous step's crossing prepared them
    control = loop.control
    while step <= stop:
        if control is not None and control._drain_reason is not None:
            return  # drained: the general loop stops before the next step
        cid = loop.checkpoint_id
        if raw is None:
            raw = prepare(cid, pns, step, v)
        if len(raw) != 1:
            return
        task_id, name, path, triggers, val = raw[0]
        how = runs.get(name)
        if how is None or path[0] == PUSH:
            return
        node, mapper, writers, subgraphs, plan = how
        if mapper is not None:
            val = mapper(val)
        raw_config = (loop, conf, step, cid, plan)
        t = lazy_task(
            name,
            val,
            node,
            deque(),
            raw_config,
            triggers,
            None,
            None,
            task_id,
            path,
            writers,
            subgraphs,
            None,
        )
        if direct is not None:
            loop.tasks = {task_id: t}
            if session is not None:
                session.flush()  # the previous checkpoint commits before this task runs
        token = ACTIVE.set(session) if writer else None  # nested runs share its writer
        try:
            copy_context().run(_run_unconfigured, t, raw_config, True)  # (a copy per task)
        except Exception as exc:
            if loop.tasks.get(task_id) is not t:  # (keeping the tasks it called)
                loop.tasks = {task_id: t}
            loop.on_task_done(t, exc)
            _perform(loop, direct, session)
            raise
        finally:
            if token is not None:
                ACTIVE.reset(token)
        ws = t.writes
        if direct is not None:
            loop.on_task_done(t, None)  # pending writes, and the saver's put_writes
            _perform(loop, direct, session)
        elif not ws or (ws[0][0] in CONTROL_WRITES and all(c in CONTROL_WRITES for c, _ in ws)):
            ws.append((NO_WRITES, None))
        step_writes = [(name, path, triggers, ws)]
        if loop._calls is not None:  # tasks it called (functional API) apply with it
            step_writes += loop._calls.applied((cid, step))
        if direct is None:  # apply, next id and next tasks in one crossing
            updated, loop.checkpoint_id, raw = advance(step_writes, nv, id_base, pns, step, stop, v)
            draw_checkpoint_id()
        else:
            updated = apply(step_writes, nv)
            raw = None
        loop._cp_updated = updated
        if updated and track and not out_set.isdisjoint(updated):
            if lazy_values:
                loop.latest_values = LATEST
            else:
                loop._emit_values(ws)
        loop._written = False
        if direct is None:
            step = loop.step = step + 1
            continue
        loop.is_replaying = False
        if loop.pending_writes:
            loop.pending_writes = []
            loop._pending_ids = set()
        for op in loop._put_checkpoint({"source": "loop"}):
            direct(op)
        step = loop.step


def lone_plans(graph: Any) -> dict[str, LonePlan]:
    """Per node that lone steps can run (a plan, no retry policy, no timeout, no managed
    values, no error handler); kept with the graph's other derived caches (`_derived.py`)."""
    d = derived(graph)
    runs = d.lone_plans
    if runs is None:
        plans = lazy_plans(graph)
        handled = getattr(graph, "node_error_handler_map", ())  # (their failures route)
        runs = d.lone_plans = {
            name: LonePlan(info.node, info.mapper, info.writers, info.subgraphs, plan)
            for name, info in d.nodes.items()
            if (plan := plans.get(name)) is not None
            and not info.retry_policy
            and info.timeout is None
            and not info.managed
            and name not in handled
        }
    return runs


def _perform(loop: Any, direct: Any, session: Any) -> None:
    """The saver ops the loop queued for a finished task, performed now (what the driver
    would do next)."""
    while loop._io:
        ops, loop._io = loop._io, []
        if session is not None:
            session.task_done(ops)
            continue
        for op in ops:
            direct(op)
