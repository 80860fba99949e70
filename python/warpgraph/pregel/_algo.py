"""Task construction for one super-step: per-task config, scratchpad, runtime, and the
cheap constructors of the frozen task dataclasses (LangGraph's `prepare_single_task` part
that is not the engine's)."""

from __future__ import annotations

import dataclasses
import random
import time
from collections import deque
from datetime import datetime, timezone
from functools import partial
from itertools import count
from typing import Any

from warpgraph._internal._constants import (
    CONF,
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
)
from warpgraph._internal._scratchpad import PregelScratchpad
from warpgraph.pregel._io import read_channels
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


_TS_CACHE: list = [None, ""]


def now() -> str:
    """`datetime.now(timezone.utc).isoformat()`, with the seconds part formatted once per
    second (checkpoint timestamps are taken every step)."""
    t = time.time()
    sec = int(t)
    us = round((t - sec) * 1e6)
    if us >= 1_000_000:
        sec, us = sec + 1, us - 1_000_000
    if _TS_CACHE[0] != sec:
        _TS_CACHE[0] = sec
        _TS_CACHE[1] = datetime.fromtimestamp(sec, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if us:
        return f"{_TS_CACHE[1]}.{us:06d}+00:00"
    return f"{_TS_CACHE[1]}+00:00"


class LazyCounter:
    """A lazily created atomic counter (itertools.count is atomic under the GIL)."""

    __slots__ = ("_c",)

    def __init__(self) -> None:
        self._c = None

    def __call__(self) -> int:
        if self._c is None:
            self._c = count(0).__next__
        return self._c()


def id_prefix() -> str:
    h = f"{random.getrandbits(80):020x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-"


def fast_id(prefix: str, step: int) -> str:
    """A cheap unique uuid-shaped id for runs without a checkpointer (random prefix + step)."""
    return f"{prefix}{step & 0xFFFFFFFFFFFF:012x}"


def _no_null_resume(consume: bool = False) -> None:
    return None


# Building the frozen slotted dataclasses through their slot descriptors skips the keyword
# parsing and per-field object.__setattr__ of the generated __init__ (half the cost).
_new = object.__new__
_SP_FIELDS = (
    "step",
    "stop",
    "call_counter",
    "interrupt_counter",
    "get_null_resume",
    "resume",
    "subgraph_counter",
)


def _scratch(step: int, stop: int, get_null_resume: Any, resume: list) -> PregelScratchpad:
    return _scratchpad(
        step, stop, LazyCounter(), LazyCounter(), get_null_resume, resume, LazyCounter()
    )


_EI_FIELDS = (
    "checkpoint_id",
    "checkpoint_ns",
    "task_id",
    "thread_id",
    "run_id",
    "node_attempt",
    "node_first_attempt_time",
)
_RT_FIELDS = tuple(f.name for f in dataclasses.fields(Runtime))
_TK_FIELDS = (
    "name",
    "input",
    "proc",
    "writes",
    "config",
    "triggers",
    "retry_policy",
    "cache_key",
    "id",
    "path",
    "writers",
    "subgraphs",
    "timeout",
)


def _compile_builder(cls: type, fields: tuple[str, ...], name: str) -> Any:
    """A positional constructor for a frozen slotted dataclass that sets the slots directly
    (same object as the generated __init__ would build, without kw parsing/object.__setattr__)."""
    ns = {"_new": _new, "_cls": cls}
    lines = [f"def {name}({', '.join(fields)}):", "    o = _new(_cls)"]
    for f in fields:
        ns[f"_s_{f}"] = getattr(cls, f).__set__
        lines.append(f"    _s_{f}(o, {f})")
    lines.append("    return o")
    exec("\n".join(lines), ns)  # noqa: S102 - generated from dataclass field names only
    return ns[name]


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
_scratchpad = _compile_builder(PregelScratchpad, _SP_FIELDS, "_scratchpad")
_exec_info = _compile_builder(ExecutionInfo, _EI_FIELDS, "_exec_info")
_runtime = _compile_builder(Runtime, _RT_FIELDS, "_runtime")
_task = _compile_builder(PregelExecutableTask, _TK_FIELDS, "_task")


def _local_read(engine: Any, writes: deque, select: Any, fresh: bool = False) -> Any:
    if fresh:
        return engine.read(select, fresh_writes=list(writes))
    return read_channels(engine, select)


def step_conf(loop: Any) -> dict:
    """The configurable keys shared by every task of this step (built once per step)."""
    sc = loop._step_cache
    if sc is not None and sc[0] == loop.checkpoint_id and sc[1] is loop.conf:
        return sc[2]
    conf = loop.conf
    d = {
        **conf,
        CONFIG_KEY_CHECKPOINTER: loop.saver or conf.get(CONFIG_KEY_CHECKPOINTER),
        CONFIG_KEY_CHECKPOINT_MAP: {
            **conf.get(CONFIG_KEY_CHECKPOINT_MAP, {}),
            loop.parent_ns: loop.checkpoint_id,
        },
        CONFIG_KEY_CHECKPOINT_ID: None,
    }
    loop._step_cache = (loop.checkpoint_id, conf, d)
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


def make_tasks(loop: Any, raw: list) -> dict:
    """PregelExecutableTasks (LangGraph's per-task config, scratchpad, runtime) for the
    engine's prepared tasks `(id, name, path, triggers, input)`, keyed by id in order."""
    out: dict = {}
    if not raw:
        return out
    nodes = loop._nodes
    engine = loop.engine
    pns = loop.parent_ns
    step = loop.step
    base = loop._task_base
    base_tags = base.get("tags")
    base_md = {**base["metadata"], "langgraph_step": step}
    sconf = step_conf(loop)
    default_retry = loop.graph.retry_policy
    simple_pad = not loop.pending_writes and loop.conf.get(CONFIG_KEY_SCRATCHPAD) is None
    rt_base = loop.conf.get(CONFIG_KEY_RUNTIME)
    rt_fast = type(rt_base) is Runtime and _RT_FIELDS == _RT_STD
    for task_id, name, path, triggers, val in raw:
        node, mapper, metadata, tags, retry, writers, subgraphs, timeout, managed = nodes[name]
        if node is None:
            continue
        push = path[0] == PUSH
        if mapper is not None and not push:
            val = mapper(val)
        task_ns = f"{pns}{NS_SEP}{name}{NS_END}{task_id}" if pns else f"{name}{NS_END}{task_id}"
        if simple_pad:
            pad = _scratchpad(
                step, loop.stop, LazyCounter(), LazyCounter(), _no_null_resume, [], LazyCounter()
            )
        else:
            pad = scratchpad_for(loop, task_id, task_ns)
        if managed and not push:
            val = {
                k: (m(pad) if m is not None else val[k])
                for k, m in managed
                if m is not None or k in val
            }
        if rt_fast:
            rt = _runtime(
                rt_base.context,
                rt_base.store,
                rt_base.stream_writer,
                rt_base.heartbeat,
                loop._previous,
                _exec_info(
                    loop.checkpoint_id,
                    task_ns,
                    task_id,
                    loop._thread_id,
                    loop._run_id,
                    1,
                    time.time(),
                ),
                rt_base.server_info,
                rt_base.control,
            )
        else:
            rt = runtime_for(loop, task_ns, task_id)
        writes: deque = deque()
        md = {
            **base_md,
            "langgraph_node": name,
            "langgraph_triggers": triggers,
            "langgraph_path": path,
            "langgraph_checkpoint_ns": task_ns,
        }
        if metadata:
            md.update(metadata)
        cfg = {
            **base,
            "metadata": md,
            CONF: {
                **sconf,
                CONFIG_KEY_TASK_ID: task_id,
                CONFIG_KEY_SEND: writes.extend,
                CONFIG_KEY_READ: partial(_local_read, engine, writes),
                CONFIG_KEY_READ_STATE: partial(_read_state, engine, loop.graph.nodes[name].channels)
                if push
                else None,
                CONFIG_KEY_CHECKPOINT_NS: task_ns,
                CONFIG_KEY_SCRATCHPAD: pad,
                CONFIG_KEY_RUNTIME: rt,
            },
        }
        if tags:
            cfg["tags"] = base_tags + tags if base_tags else tags
        out[task_id] = _task(
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


def scratchpad_for(loop: Any, task_id: str, task_ns: str) -> PregelScratchpad:
    pw = loop.pending_writes
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
                resume = w[2] if isinstance(w[2], list) else [w[2]]
                resume = list(resume)
                break
        rmap = loop.conf.get(CONFIG_KEY_RESUME_MAP)
        if rmap:
            nxt = hexdigest(f"{task_ns}{NS_SEP}{len(resume)}" if resume else task_ns)
            first = hexdigest(task_ns)
            if nxt in rmap:
                resume.append(rmap[nxt])
            elif first in rmap:
                resume.append(rmap[first])

    def get_null_resume(consume: bool = False) -> Any:
        if null_resume is None:
            if parent is not None:
                return parent.get_null_resume(consume)
            return None
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
    from warpgraph.config import _DefaultRecursionLimit

    out = {k: v for k, v in config.items() if k != "run_id"}
    if isinstance(out.get("recursion_limit"), _DefaultRecursionLimit):
        del out["recursion_limit"]
    out.setdefault("metadata", {})
    if not out.get("tags"):
        out.pop("tags", None)
    return out


def _read_state(engine: Any, reads: Any) -> Any:
    """CONFIG_KEY_READ_STATE of a Send task: the target node's regular input, read now."""
    return read_channels(engine, reads)


def is_hidden_task(task: Any) -> bool:
    tags = task.config.get("tags")
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
