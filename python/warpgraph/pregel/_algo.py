"""Task construction for one super-step: per-task config, scratchpad, runtime, and the
cheap constructors of the frozen task dataclasses (LangGraph's `prepare_single_task` part
that is not the engine's)."""

from __future__ import annotations

import dataclasses
import os
import random
import threading
import time
from collections import deque
from functools import partial
from itertools import count
from typing import Any

from warpgraph import _core
from warpgraph._internal._codegen import slot_builder
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CALL,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_READ,
    CONFIG_KEY_READ_STATE,
    CONFIG_KEY_RESUME_MAP,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    ERROR,
    INTERRUPT,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    PUSH,
    RESUME,
    TAG_HIDDEN,
    TASKS,
)
from warpgraph._internal._scratchpad import PregelScratchpad
from warpgraph.config import LAZY_CONFIG_HOLDERS, _DefaultRecursionLimit
from warpgraph.pregel._calls import CallHook
from warpgraph.pregel._derived import GraphDerived, derived
from warpgraph.pregel._io import read_channels
from warpgraph.pregel._records import PreparedTask
from warpgraph.pregel._tracing import task_callbacks
from warpgraph.pregel._write import ChannelWrite, is_config_free_writer
from warpgraph.runtime import ExecutionInfo, Runtime
from warpgraph.types import PregelExecutableTask, Send

WRITES_IDX_MAP = {ERROR: -1, "__scheduled__": -2, INTERRUPT: -3, RESUME: -4}
CONTROL_WRITES = frozenset((ERROR, "__error_source_node__", INTERRUPT, RESUME))
_XXH: Any = None


def hexdigest(s: str) -> str:
    """xxh3_128 hex digest of `s` (interrupt ids, resume-map keys)."""
    global _XXH
    if _XXH is None:
        from xxhash import xxh3_128_hexdigest as _XXH
    return _XXH(s.encode())


now = _core.utc_now
"""`datetime.now(timezone.utc).isoformat()` (natively: a checkpoint timestamp per step)."""


class LazyCounter:
    """A lazily created atomic counter (itertools.count is atomic under the GIL)."""

    _c: Any = None  # no __init__: creating one is the cheapest object creation there is

    def __call__(self) -> int:
        c = self._c
        if c is None:
            c = self._c = count(0).__next__
        return c()


_own_random = random.Random()
"""The random prefixes of run-local ids come from here, not from the global `random`:
a seeded program's draws must be those LangGraph leaves it (see `draw_checkpoint_id`)."""

_runs = count()  # (next() on a count is atomic under the GIL)
_run_base = ""


def _new_run_base() -> None:
    """The process's random part of run prefixes (drawn again in a forked child, which
    must not repeat its parent's)."""
    global _run_base, _runs
    _own_random.seed()
    _run_base = "%08x-%04x-" % (_own_random.getrandbits(32), _own_random.getrandbits(16))  # noqa: UP031
    _runs = count()


_new_run_base()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_run_base)


def id_prefix() -> str:
    """A run's id prefix "xxxxxxxx-xxxx-xxxx-xxxx-": the process's random part, then the
    run's number in this process (unique among the process's runs, cheap to make)."""
    n = next(_runs)
    return "%s%04x-%04x-" % (_run_base, (n >> 16) & 0xFFFF, n & 0xFFFF)  # noqa: UP031


def draw_checkpoint_id() -> None:
    """Take from the global `random` what LangGraph's checkpoint id takes (48 node bits of
    its uuid6, drawn for every checkpoint its loop creates, saved or not), so that a program
    seeding `random` draws in its nodes the values it draws under LangGraph. Called where
    LangGraph's loop creates a checkpoint: the empty one of a new thread, the input one and
    one per step (not the exit checkpoint, which keeps the last id)."""
    random.getrandbits(48)


def fast_id(prefix: str, step: int) -> str:
    """A cheap unique uuid-shaped id for runs without a checkpointer (random prefix + step)."""
    return "%s%012x" % (prefix, step & 0xFFFFFFFFFFFF)  # noqa: UP031 - faster than f-string


def _no_null_resume(consume: bool = False) -> None:
    return None


_RT_FIELDS = tuple(f.name for f in dataclasses.fields(Runtime))
_RT_STD = (
    "context",
    "store",
    "stream_writer",
    "heartbeat",
    "previous",
    "execution_info",
    "server_info",
    "control",
)
# _scratchpad(step, stop, call_counter, interrupt_counter, get_null_resume, resume,
#             subgraph_counter) -> a PregelScratchpad
_scratchpad = slot_builder(PregelScratchpad)
# _exec_info(checkpoint_id, checkpoint_ns, task_id, thread_id, run_id, node_attempt,
#            node_first_attempt_time) -> an ExecutionInfo
_exec_info = slot_builder(ExecutionInfo)
# _runtime(*_RT_FIELDS) -> a Runtime (called with `_RT_STD`'s order only when they agree)
_runtime = slot_builder(Runtime)
# _task(name, input, proc, writes, config, triggers, retry_policy, cache_key, id, path,
#       writers, subgraphs, timeout) -> a PregelExecutableTask
_task = slot_builder(PregelExecutableTask)
_builder_of = slot_builder  # (the task subclasses' builders: lazy_task, lazy_call_task)


def _scratch(step: int, stop: int, get_null_resume: Any, resume: list) -> PregelScratchpad:
    return _scratchpad(
        step, stop, LazyCounter(), LazyCounter(), get_null_resume, resume, LazyCounter()
    )


def _local_read(engine: Any, writes: deque, select: Any, fresh: bool = False) -> Any:
    if fresh:
        return engine.read(select, fresh_writes=list(writes))
    return read_channels(engine, select)


def step_conf(loop: Any) -> dict:
    """The configurable keys shared by every task of this step (built once per step)."""
    return _step_conf(loop, loop.conf, loop.checkpoint_id)


def _step_conf(loop: Any, conf: dict, cid: str) -> dict:
    sc = loop._step_cache
    if sc is not None and sc[1] is conf:
        if sc[0] == cid:
            return sc[2]
        template, cmap = sc[3], sc[4]
    else:
        # the parts that only change with loop.conf (same key order as the spread below)
        template = {
            **conf,
            CONFIG_KEY_CHECKPOINTER: loop.saver or conf.get(CONFIG_KEY_CHECKPOINTER),
            CONFIG_KEY_CHECKPOINT_MAP: None,
            CONFIG_KEY_CHECKPOINT_ID: None,
            CONFIG_KEY_CALL: CallHook(loop),  # task calls (functional API: pregel/_calls.py)
        }
        cmap = {**conf.get(CONFIG_KEY_CHECKPOINT_MAP, {}), loop.parent_ns: None}
    d = template.copy()
    m = cmap.copy()
    m[loop.parent_ns] = cid
    d[CONFIG_KEY_CHECKPOINT_MAP] = m
    loop._step_cache = (cid, conf, d, template, cmap)
    return d


def runtime_for(loop: Any, task_ns: str, task_id: str) -> Any:
    """The run's Runtime with `previous` and this task's ExecutionInfo (attempt 1 with its
    start time, so the runner keeps it as is)."""
    base = loop.conf.get(CONFIG_KEY_RUNTIME)
    if type(base) is not Runtime:
        return base
    info = _exec_info(
        loop.checkpoint_id, task_ns, task_id, loop._thread_id, loop._run_id, 1, time.time()
    )
    if _RT_FIELDS == _RT_STD:
        return _runtime(
            base.context,
            base.store,
            base.stream_writer,
            base.heartbeat,
            loop._previous,
            info,
            base.server_info,
            base.control,
        )
    return dataclasses.replace(base, previous=loop._previous, execution_info=info)


class _StepCtx:
    """What every task config of one step shares (see `_task_config`): the step and
    checkpoint id it was prepared at; the rest is the run's and read from the loop."""

    __slots__ = ("_md", "_sconf", "cid", "conf", "loop", "step")

    def __init__(self, loop: Any, conf: dict, step: int, cid: str) -> None:
        self.loop = loop
        self.conf = conf
        self.step = step
        self.cid = cid
        self._sconf = None

    # constant for a run once its first step is prepared
    base = property(lambda self: self.loop._task_base)
    base_tags = property(lambda self: self.loop._task_base.get("tags"))
    engine = property(lambda self: self.loop.engine)
    graph = property(lambda self: self.loop.graph)
    previous = property(lambda self: self.loop._previous)
    rt_base = property(lambda self: self.conf.get(CONFIG_KEY_RUNTIME))
    run_id = property(lambda self: self.loop._run_id)
    stop = property(lambda self: self.loop.stop)
    thread_id = property(lambda self: self.loop._thread_id)

    def shared(self) -> tuple[dict, dict]:
        """(configurable keys, metadata) common to the step's tasks, built on first use
        from the loop's conf and checkpoint id as they were when the step was prepared."""
        sconf = self._sconf
        if sconf is None:
            sconf = self._sconf = _step_conf(self.loop, self.conf, self.cid)
            self._md = {**self.base["metadata"], "langgraph_step": self.step}
        return sconf, self._md


def _task_config(
    ctx: _StepCtx,
    name: str,
    task_id: str,
    path: tuple,
    triggers: tuple,
    task_ns: str,
    metadata: Any,
    tags: Any,
    push: bool,
    writes: deque,
    pad: Any = None,
    rt: Any = None,
) -> dict:
    """A task's config as LangGraph builds it (pad None: a fresh simple scratchpad; rt
    None: the run's plain Runtime with this task's execution info)."""
    if pad is None:
        pad = _scratchpad(
            ctx.step, ctx.stop, LazyCounter(), LazyCounter(), _no_null_resume, [], LazyCounter()
        )
    if rt is None:
        rb = ctx.rt_base
        rt = _runtime(
            rb.context,
            rb.store,
            rb.stream_writer,
            rb.heartbeat,
            ctx.previous,
            _exec_info(ctx.cid, task_ns, task_id, ctx.thread_id, ctx.run_id, 1, time.time()),
            rb.server_info,
            rb.control,
        )
    engine = ctx.engine
    sconf, base_md = ctx.shared()
    md = {
        **base_md,
        "langgraph_node": name,
        "langgraph_triggers": triggers,
        "langgraph_path": path,
        "langgraph_checkpoint_ns": task_ns,
    }
    if metadata:
        md.update(metadata)
    conf = sconf.copy()
    conf[CONFIG_KEY_TASK_ID] = task_id
    conf[CONFIG_KEY_SEND] = writes.extend
    conf[CONFIG_KEY_READ] = partial(_local_read, engine, writes)
    conf[CONFIG_KEY_READ_STATE] = (
        partial(_read_state, engine, ctx.graph.nodes[name].channels) if push else None
    )
    conf[CONFIG_KEY_CHECKPOINT_NS] = task_ns
    conf[CONFIG_KEY_SCRATCHPAD] = pad
    conf[CONFIG_KEY_RUNTIME] = rt
    cfg = ctx.base.copy()
    cfg["metadata"] = md
    cfg[CONF] = conf
    if tags:
        base_tags = ctx.base_tags
        cfg["tags"] = base_tags + tags if base_tags else tags
    if "run_name" in cfg:  # the task runs as its node (traced: a child run, _tracing.py)
        task_callbacks(cfg, ctx.loop, ctx.step, name)
    return cfg


def make_tasks(loop: Any, prepared: list[PreparedTask]) -> dict:
    """PregelExecutableTasks (LangGraph's per-task config, scratchpad, runtime) for the
    engine's prepared tasks `(id, name, path, triggers, input)`, keyed by id in order.

    A task whose node only runs a plain function and warpgraph's own writers gets its
    config built on first use (see `LazyTask`); nothing observable differs."""
    out: dict = {}
    if not prepared:
        return out
    nodes = loop._nodes
    pns = loop.parent_ns
    base = loop._task_base
    lconf = loop.conf
    step, cid = loop.step, loop.checkpoint_id
    ctx = _StepCtx(loop, lconf, step, cid)
    default_retry = loop.graph.retry_policy
    simple_pad = not loop.pending_writes and lconf.get(CONFIG_KEY_SCRATCHPAD) is None
    rt_base = lconf.get(CONFIG_KEY_RUNTIME)
    rt_fast = type(rt_base) is Runtime and _RT_FIELDS == _RT_STD
    # (a nested run's tasks too: their scratchpad only adds the parent's null resume)
    lazy = rt_fast and not loop.pending_writes and "run_name" not in base
    plans = plans_of(loop.derived) if lazy else None
    aplans = async_plans_of(loop.derived) if lazy else None  # (nodes with an async plan only)
    sends = None
    for task_id, name, path, triggers, val in prepared:
        node, mapper, metadata, tags, retry, writers, subgraphs, timeout, managed = nodes[name]
        if node is None:
            continue
        push = path[0] == PUSH
        if push and Send.timed:  # a Send's own timeout overrides its node's
            if sends is None:
                sends = loop.engine.read([TASKS]).get(TASKS) or ()
            i = path[1] if len(path) > 1 and type(path[1]) is int else len(sends)
            packet = sends[i] if i < len(sends) else None
            if isinstance(packet, Send) and packet.timeout is not None:
                timeout = packet.timeout
        if mapper is not None and not push:
            val = mapper(val)
        if (
            lazy
            and not push
            and not managed
            and ((plan := plans.get(name)) is not None or aplans.get(name) is not None)
        ):
            # configured on first use (`LazyTask`): the slot holds what building it needs
            # (its plan None: the sync runner builds its config, the async one runs its
            # async plan, `_retry.arun_with_retry`)
            make, writes, cfg = lazy_task, deque(), (loop, lconf, step, cid, plan)
        else:
            task_ns = f"{pns}{NS_SEP}{name}{NS_END}{task_id}" if pns else f"{name}{NS_END}{task_id}"
            writes = deque()
            pad = None if simple_pad else scratchpad_for(loop, task_id, task_ns)
            if managed and not push:
                if pad is None:
                    pad = _scratch(ctx.step, ctx.stop, _no_null_resume, [])
                val = {
                    k: (m(pad) if m is not None else val[k])
                    for k, m in managed
                    if m is not None or k in val
                }
            cfg = _task_config(
                ctx,
                name,
                task_id,
                path,
                triggers,
                task_ns,
                metadata,
                tags,
                push,
                writes,
                pad,
                None if rt_fast else runtime_for(loop, task_ns, task_id),
            )
            make = _task
        out[task_id] = make(
            name,
            val,
            node,
            writes,
            cfg,
            triggers,
            retry or default_retry,
            None,
            task_id,
            path,
            writers,
            subgraphs,
            timeout,
        )
    return out


# ------------------------------------------------------------------ lazily configured tasks

_BUILD_LOCK = threading.RLock()
# What the config slot holds: the built config, or, for a LazyTask not built yet, its
# `Deferred` tuple: (the loop, or a call task's LoopView; the loop's conf, or a call
# task's (parent task, task ns); step; checkpoint id; the node's plan). A plain tuple,
# read through the positions named here: one is made for every lone step, and a named
# record's constructor costs 4-7x a tuple display (~180-320 ns against ~45 ns measured).
Deferred = tuple
D_LOOP, D_CONF, D_STEP, D_CID, D_PLAN = range(5)
_stored_config = PregelExecutableTask.config.__get__  # type: ignore[attr-defined]
_set_config = PregelExecutableTask.config.__set__  # type: ignore[attr-defined]


class LazyTask(PregelExecutableTask):
    """A PregelExecutableTask whose `config` is built on first access (from the arguments
    make_tasks stored in its place). Everything else is the frozen dataclass."""

    __slots__ = ()

    @property
    def config(self) -> dict:  # type: ignore[override]
        stored = _stored_config(self)
        if type(stored) is tuple:
            with _BUILD_LOCK:  # built once even if two threads ask at the same time
                stored = _stored_config(self)
                if type(stored) is tuple:
                    stored = self._build(*stored[D_LOOP:D_PLAN])
                    _set_config(self, stored)
        return stored

    def _build(self, loop: Any, conf: dict, step: int, cid: str) -> dict:
        name, task_id, pns = self.name, self.id, loop.parent_ns
        info = loop._nodes[name]
        # made with no pending writes: the scratchpad `scratchpad_for` gives then (fresh, or,
        # in a nested run, with the parent task's null resume)
        parent = conf.get(CONFIG_KEY_SCRATCHPAD)
        return _task_config(
            _StepCtx(loop, conf, step, cid),
            name,
            task_id,
            self.path,
            self.triggers,
            f"{pns}{NS_SEP}{name}{NS_END}{task_id}" if pns else f"{name}{NS_END}{task_id}",
            info.metadata,
            info.tags,
            False,
            self.writes,
            None if parent is None else _scratch(step, loop.stop, parent.get_null_resume, []),
        )


LazyTask.__name__ = LazyTask.__qualname__ = PregelExecutableTask.__name__
LAZY_CONFIG_HOLDERS.add(LazyTask)
LazyTask.__module__ = PregelExecutableTask.__module__


# lazy_task(name, input, proc, writes, Deferred, triggers, retry_policy,
#           None, id, path, writers, subgraphs, timeout): a pull task of a node with a plan
# (see `node_plan`) prepared at `step`/`cid` with the loop's `conf`; its config is built on
# first use
lazy_task = _builder_of(LazyTask)


def is_lazy_unbuilt(task: Any) -> bool:
    """A LazyTask whose config was not built yet."""
    return type(task) is LazyTask and type(_stored_config(task)) is tuple


def lazy_plans(graph: Any) -> dict:
    """Per node: how to run it without its config (see `node_plan`), or None (kept with the
    graph's other derived caches: `_derived.py`)."""
    return plans_of(derived(graph))


def plans_of(d: GraphDerived) -> dict:
    """`lazy_plans` of the graph `d` was derived from."""
    plans = d.lazy_plans
    if plans is None:
        plans = d.lazy_plans = {n: node_plan(info.node) for n, info in d.nodes.items()}
    return plans


def async_plans_of(d: GraphDerived) -> dict:
    """Per node of the graph `d` was derived from: `async_node_plan` of it, or None."""
    plans = d.async_plans
    if plans is None:
        plans = d.async_plans = {n: async_node_plan(info.node) for n, info in d.nodes.items()}
    return plans


def node_plan(proc: Any) -> tuple | None:
    """`(func, recurse, steps)` when `proc` is a RunnableSeq of a plain RunnableCallable
    followed by ChannelWrites / config-free writers (`_write.is_config_free_writer`: the
    graph's conditional-edge writers) whose callable is a plain RunnableCallable (or a lone
    ChannelWrite: func None): nothing in it reads the task config except through
    get_config()."""
    return _seq_plan(proc, "func")


def async_node_plan(proc: Any) -> tuple | None:
    """`node_plan` for the async drivers: `(afunc, recurse, steps)` where `afunc` is the
    node's async form (a coroutine function, or the worker-thread form of a sync one; None
    for a lone ChannelWrite) and every config-free writer's callable has an async form too."""
    return _seq_plan(proc, "afunc")


def _seq_plan(proc: Any, form: str) -> tuple | None:
    from warpgraph._internal._runnable import RunnableCallable, RunnableSeq

    def plain(r: Any) -> bool:
        return type(r) is RunnableCallable and r._plain and getattr(r, form) is not None

    if type(proc) is ChannelWrite:  # a writer alone (e.g. __start__): writes its input
        return (None, False, ((0, proc),))
    if type(proc) is not RunnableSeq or not plain(proc._first):
        return None
    steps = []
    for w in proc._rest:
        if type(w) is ChannelWrite:
            steps.append((0, w))
        elif is_config_free_writer(w) and plain(w.config_free_callable()):
            steps.append((1, w))
        else:
            return None
    return (getattr(proc._first, form), proc._first.recurse, tuple(steps))


_LOOP_PAD: Any = object()  # `scratchpad_for`'s default `parent`: the loop's own scratchpad


def scratchpad_for(
    loop: Any, task_id: str, task_ns: str, parent: Any = _LOOP_PAD
) -> PregelScratchpad:
    """A task's scratchpad (LangGraph's `_scratchpad`): its resume values saved in the loop's
    pending writes, plus the resume map's value for its next interrupt; the run's null
    resume, else `parent`'s; fresh counters. `parent`: the enclosing scratchpad (None: none),
    by default the loop's (a subgraph's parent task's); a call task passes its caller's
    (`_calls.prepare_call`)."""
    pw = loop.pending_writes
    if parent is _LOOP_PAD:
        parent = loop.conf.get(CONFIG_KEY_SCRATCHPAD)
    if not pw and parent is None:
        return _scratch(loop.step, loop.stop, _no_null_resume, [])
    null_resume = None
    resume: list = []
    if pw:
        for w in pw:
            if w[0] == NULL_TASK_ID and w[1] == RESUME:
                null_resume = w
                break
        for w in pw:
            if w[0] == task_id and w[1] == RESUME:
                resume = list(w[2]) if isinstance(w[2], list) else [w[2]]
                break
        rmap = loop.conf.get(CONFIG_KEY_RESUME_MAP)
        if rmap:
            nxt = hexdigest(f"{task_ns}{NS_SEP}{len(resume)}" if resume else task_ns)
            first = hexdigest(task_ns)
            if nxt in rmap:
                resume.append(rmap[nxt])
            elif first in rmap:
                resume.append(rmap[first])
    if null_resume is None and parent is None:
        return _scratch(loop.step, loop.stop, _no_null_resume, resume)

    def get_null_resume(consume: bool = False) -> Any:
        if null_resume is None:
            return parent.get_null_resume(consume)
        if consume:
            try:
                pw.remove(null_resume)
            except ValueError:
                return None
        return null_resume[2]

    return _scratch(loop.step, loop.stop, get_null_resume, resume)


def task_base_config(config: dict) -> dict:
    """What LangGraph's merge_configs keeps of the run config for a task: no run_id, no empty
    tags, no default recursion_limit (tags/metadata are then merged per task)."""
    out = config.copy()
    if "run_id" in out:
        del out["run_id"]
    if isinstance(out.get("recursion_limit"), _DefaultRecursionLimit):
        del out["recursion_limit"]
    if "metadata" not in out:
        out["metadata"] = {}
    if not out.get("tags"):
        out.pop("tags", None)
    return out


def _read_state(engine: Any, reads: Any) -> Any:
    """CONFIG_KEY_READ_STATE of a Send task: the target node's regular input, read now."""
    return read_channels(engine, reads)


def is_hidden_task(task: Any) -> bool:
    if type(task) is LazyTask:
        stored = _stored_config(task)
        if type(stored) is tuple:  # (unbuilt: its tags are its node's and the run's)
            loop = stored[D_LOOP]
            if task.name in loop.derived.hidden:
                return True
            tags = loop._task_base.get("tags")
        else:
            tags = stored.get("tags")
    elif (config_tags := getattr(type(task), "config_tags", None)) is not None:
        tags = config_tags(task)  # (a lazy call task's, without building its config)
    else:
        tags = task.config.get("tags") if task.config else None
    return bool(tags) and TAG_HIDDEN in tags


def is_xxh3(s: Any) -> bool:
    if not isinstance(s, str) or len(s) != 32:
        return False
    try:
        int(s, 16)
    except ValueError:
        return False
    return s == s.lower()


def sanitize_send(packet: Any, untracked: frozenset) -> Any:
    if not isinstance(packet.arg, dict):
        return packet
    return Send(packet.node, {k: v for k, v in packet.arg.items() if k not in untracked})


# LangGraph's free-standing helpers (its tests and tools import them from here)
from warpgraph.pregel._engine import task_path_str  # noqa: F401
from warpgraph.pregel._standalone import prepare_next_tasks  # noqa: F401
