"""Run one scenario on two libraries and compare everything observable.

A scenario is `build(lib) -> (compiled_graph, inputs, configs[, call_kwargs])`: `inputs` is a
list of inputs run one after another on the same graph; `configs` is one config for all of
them, a list with one config per input, or None; an input may be a `Call`, whose input and
config can be computed from the graph right before the call (interrupt ids, an earlier
checkpoint's config) and which adds keyword arguments of its own. The harness builds a fresh graph for every
API it exercises (invoke, stream per mode, a list of modes, subgraphs=True), sync or async,
and records: results / chunks / exceptions of every call and, when the graph has a
checkpointer, the saver's full checkpoint list per thread, get_state (with and without
subgraphs) and get_state_history. Both traces are normalised (see normalize.py) and must be
identical; within one super-step the order in which parallel tasks finish is not
deterministic, so scenarios marked `parallel` compare those chunks as a multiset per step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from .libs import Lib, get_lib, in_ci, target_name, warpgraph_import_error
from .normalize import UUID_RE, Normalizer, first_difference, sort_key
from .savers import SaverLib

ALL_MODES = ["updates", "values", "custom", "tasks", "checkpoints"]
# API variants: (name, stream_mode or None for invoke, subgraphs)
APIS: dict[str, tuple[Any, bool]] = {
    "invoke": (None, False),
    "values": ("values", False),
    "updates": ("updates", False),
    "debug": ("debug", False),
    "tasks": ("tasks", False),
    "checkpoints": ("checkpoints", False),
    "custom": ("custom", False),
    "multi": (ALL_MODES, False),
}
SUBGRAPH_APIS: dict[str, tuple[Any, bool]] = {
    "updates-sub": ("updates", True),
    "multi-sub": (ALL_MODES, True),
    "debug-sub": ("debug", True),
}
LONG = os.environ.get("WARPGRAPH_LONG_TESTS") == "1"


@dataclass
class Scenario:
    name: str
    build: Callable[[Lib], tuple]
    parallel: bool = False  # parallel tasks: chunk order within a step is free
    subgraphs: bool = False  # also stream with subgraphs=True
    aio: tuple[bool, ...] = (False, True)  # sync and/or async API
    durabilities: tuple[str | None, ...] = (None,)  # None = library default
    apis: tuple[str, ...] = field(default_factory=lambda: tuple(APIS))
    build_errors: bool = False  # building may raise; the error is then compared

    def all_apis(self) -> list[str]:
        return list(self.apis) + (list(SUBGRAPH_APIS) if self.subgraphs else [])


REGISTRY: dict[str, Scenario] = {}


@dataclass(frozen=True)
class Call:
    """One call of a scenario: `input` and `config` are values or callables `(graph) ->
    value` evaluated just before the call (they may read the graph's state with the sync
    API); `config` None keeps the scenario's config for this call; `kwargs` are added to
    the call's keyword arguments."""

    input: Any = None
    config: Any = None
    kwargs: dict = field(default_factory=dict)

    def resolve(self, graph: Any, config: Any, kw: dict) -> tuple[Any, Any, dict]:
        inp = self.input(graph) if callable(self.input) else self.input
        cfg = self.config(graph) if callable(self.config) else self.config
        return inp, config if cfg is None else cfg, {**kw, **self.kwargs}


def _resolve(inp: Any, cfg: Any, graph: Any, kw: dict) -> tuple[Any, Any, dict]:
    return inp.resolve(graph, cfg, kw) if isinstance(inp, Call) else (inp, cfg, kw)


def scenario(**opts: Any) -> Callable:
    """Decorator registering `build(lib)` as a Scenario named after the function."""

    def deco(fn: Callable) -> Callable:
        if fn.__name__ in REGISTRY:
            raise ValueError(f"duplicate scenario name {fn.__name__!r}")
        REGISTRY[fn.__name__] = Scenario(fn.__name__, fn, **opts)
        return fn

    return deco


def _calls(built: tuple) -> tuple[Any, list[tuple[Any, Any]], dict]:
    if len(built) not in (3, 4):
        raise ValueError("build(lib) must return (graph, inputs, configs[, call_kwargs])")
    graph, inputs, configs = built[:3]
    kwargs = built[3] if len(built) == 4 else {}
    if not isinstance(inputs, list):
        raise TypeError(f"inputs must be a list of inputs, got {type(inputs).__name__}")
    if configs is None or isinstance(configs, dict):
        configs = [configs] * len(inputs)
    if len(configs) != len(inputs):
        raise ValueError(f"{len(configs)} configs for {len(inputs)} inputs")
    return graph, list(zip(inputs, configs)), kwargs


def _build(scn: Scenario, lib: Lib) -> tuple | dict:
    """scn.build(lib); with scn.build_errors, a raised exception is the whole trace."""
    if not scn.build_errors:
        return scn.build(lib)
    try:
        return scn.build(lib)
    except Exception as exc:  # noqa: BLE001 - compared between libraries
        return {"build_error": exc}


def _threads(calls: list) -> list[dict]:
    seen: dict[str, dict] = {}
    for call, cfg in calls:
        if isinstance(call, Call) and isinstance(call.config, dict):
            cfg = call.config
        tid = ((cfg or {}).get("configurable") or {}).get("thread_id")
        if tid is not None and tid not in seen:
            seen[tid] = {"configurable": {"thread_id": tid}}
    return list(seen.values())


def _checkpoint_rows(tuples: list) -> list[dict]:
    """The saver's checkpoints as rows (for SQL savers the keys of their dicts are sorted
    later: see `_finish`)."""
    rows = [
        {
            "config": t.config,
            "checkpoint": t.checkpoint,
            "metadata": t.metadata,
            "parent_config": t.parent_config,
            "pending_writes": sorted(t.pending_writes or [], key=sort_key),
        }
        for t in tuples
    ]
    return sort_rows(rows)


def sort_rows(rows: list[dict]) -> list[dict]:
    """Rows grouped by namespace, in an order that does not depend on the task ids inside
    namespaces (random per run) nor on the saver's order of namespaces (not part of the
    contract): by the namespace with its task ids masked, then by when the namespace got
    its first checkpoint (checkpoint ids are time-ordered uuid6), so two runs of one
    subgraph on a thread keep their order; within a namespace, the saver's order."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(r["config"]["configurable"].get("checkpoint_ns", ""), []).append(r)

    def key(item: tuple[str, list[dict]]) -> tuple[str, str, str, str]:
        ns, group = item
        oldest = min(group, key=lambda r: r["config"]["configurable"]["checkpoint_id"])
        # the parent checkpoint a run started under orders runs made one after another;
        # runs started in one step (parallel Sends) start in any order, so those are
        # ordered by what they hold (ids masked), and only then by their first checkpoint
        known = ((oldest.get("metadata") or {}).get("parents") or {}).values()
        if not known:  # (no parent recorded: creation order)
            return (
                UUID_RE.sub("<id>", ns),
                "",
                "",
                oldest["config"]["configurable"]["checkpoint_id"],
            )
        parents = repr(sorted(known))
        held = UUID_RE.sub(
            "<id>", repr([(r.get("checkpoint") or {}).get("channel_values") for r in group])
        )
        first = oldest["config"]["configurable"]["checkpoint_id"]
        return (UUID_RE.sub("<id>", ns), parents, held, first)

    return [r for _, group in sorted(groups.items(), key=key) for r in group]


def _stream_kwargs(
    api: str, durability: str | None, kwargs: dict, modes: list | None = None
) -> dict:
    mode, subgraphs = {**APIS, **SUBGRAPH_APIS}[api]
    if modes is not None:
        mode = modes
    kw = dict(kwargs)
    if durability is not None:
        kw["durability"] = durability
    if mode is not None:
        kw["stream_mode"] = mode
        if subgraphs:
            kw["subgraphs"] = True
    return kw


def run_sync(
    scn: Scenario,
    lib: Lib,
    api: str,
    durability: str | None,
    saver: Any = None,
    modes: list | None = None,
) -> dict:
    """One library's trace (`saver`: see `compare_sync`; `modes`: stream these modes
    instead of `api`'s, with its subgraphs flag)."""
    with _trace_plan(scn, lib, api, durability, saver, modes, aio=False) as plan:
        return _traced(plan)


async def run_async(
    scn: Scenario,
    lib: Lib,
    api: str,
    durability: str | None,
    saver: Any = None,
    modes: list | None = None,
) -> dict:
    """`run_sync` through the async API."""
    with _trace_plan(scn, lib, api, durability, saver, modes, aio=True) as plan:
        return await _atraced(plan)


async def _alist(aiter, then=list):
    return then([x async for x in aiter])


async def _acollect(aiter, into: list) -> None:
    async for chunk in aiter:
        into.append(chunk)


# A trace plan is a generator: it yields each library call to make (a thunk; under `aio` the
# thunk returns an awaitable), which the driver calls at once, and is sent back
# (error, result); it returns the trace. An error is an Exception the call raised: errors
# are part of the trace.
class _Plan:
    """A trace plan's generator and, once it has returned, the trace; leaving its `with`
    block closes the generator (and so the saver environment it opened)."""

    def __init__(self, gen: Any) -> None:
        self.gen, self.trace = gen, None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.gen.close()


def _next_call(plan: _Plan, reply: Any) -> Any:
    try:
        return plan.gen.send(reply)
    except StopIteration as stop:
        plan.trace = stop.value
        return None


def _traced(plan: _Plan) -> dict:
    reply: Any = None
    while (thunk := _next_call(plan, reply)) is not None:
        reply = _outcome(thunk)
    return plan.trace


async def _atraced(plan: _Plan) -> dict:
    reply: Any = None
    while (thunk := _next_call(plan, reply)) is not None:
        reply = await _aoutcome(thunk)
    return plan.trace


def _outcome(thunk: Any) -> tuple:
    try:
        return None, thunk()
    except Exception as exc:  # noqa: BLE001 - errors are part of the trace
        return exc, None


async def _aoutcome(thunk: Any) -> tuple:
    try:
        return None, await thunk()
    except Exception as exc:  # noqa: BLE001 - errors are part of the trace
        return exc, None


def _trace_plan(
    scn: Any, lib: Any, api: str, durability: str | None, saver: Any, modes: Any, aio: bool
) -> _Plan:
    return _Plan(_saver_trace(scn, lib, api, durability, saver, modes, aio))


def _saver_trace(scn: Any, lib: Any, api: str, durability: str | None, saver: Any, *rest: Any):
    """`_trace_gen` on `lib`, or (with `saver`) on it with the saver kind's environment,
    closed at the end."""
    if saver is None:
        return (yield from _trace_gen(scn, lib, api, durability, *rest))
    env = saver.env(lib.name)
    try:
        return (yield from _trace_gen(scn, SaverLib(lib, env.make), api, durability, *rest))
    finally:
        env.close()


def _trace_gen(scn: Any, lib: Any, api: str, durability: str | None, modes: Any, aio: bool):
    built = _build(scn, lib)
    if isinstance(built, dict):
        return built
    graph, calls, kwargs = _calls(built)
    kw = _stream_kwargs(api, durability, kwargs, modes)
    trace: dict[str, Any] = {"calls": []}
    for call, call_cfg in calls:
        rec: dict[str, Any] = {}
        try:
            inp, cfg, ckw = _resolve(call, call_cfg, graph, kw)
        except Exception as exc:  # noqa: BLE001 - errors are part of the trace
            rec["error"] = exc
        else:
            if api == "invoke" and modes is None:
                invoke = graph.ainvoke if aio else graph.invoke
                error, result = yield lambda: invoke(inp, cfg, **ckw)  # noqa: B023 - called at once
                if error is None:
                    rec["result"] = result
            else:
                rec["chunks"] = chunks = []  # the chunks before an error are kept
                if aio:
                    error, _ = yield lambda: _acollect(graph.astream(inp, cfg, **ckw), chunks)  # noqa: B023
                else:
                    error, _ = yield lambda: chunks.extend(graph.stream(inp, cfg, **ckw))  # noqa: B023
            if error is not None:
                rec["error"] = error
        trace["calls"].append(rec)
    saver = graph.checkpointer
    if saver not in (None, True, False):
        for cfg in _threads(calls):
            tid = cfg["configurable"]["thread_id"]
            if aio:
                probes = {
                    "checkpoints": lambda cfg=cfg: _alist(saver.alist(cfg), _checkpoint_rows),
                    "state": lambda cfg=cfg: graph.aget_state(cfg),
                    "state_sub": lambda cfg=cfg: graph.aget_state(cfg, subgraphs=True),
                    "history": lambda cfg=cfg: _alist(graph.aget_state_history(cfg)),
                }
            else:
                probes = {
                    "checkpoints": lambda cfg=cfg: _checkpoint_rows(list(saver.list(cfg))),
                    "state": lambda cfg=cfg: graph.get_state(cfg),
                    "state_sub": lambda cfg=cfg: graph.get_state(cfg, subgraphs=True),
                    "history": lambda cfg=cfg: list(graph.get_state_history(cfg)),
                }
            for key, probe in probes.items():
                error, result = yield probe
                trace[f"{key}:{tid}"] = result if error is None else {"error": error}
    return trace


def _parts(chunk: Any, api: str) -> tuple[tuple, str | None, Any]:
    """(namespace, mode, payload) of a chunk of `api`'s stream (mode None for invoke)."""
    mode, subgraphs = {**APIS, **SUBGRAPH_APIS}[api]
    multi = isinstance(mode, list)
    if subgraphs and multi:
        return chunk
    if subgraphs:
        return chunk[0], mode, chunk[1]
    if multi:
        return (), chunk[0], chunk[1]
    return (), mode, chunk


def _fixed(mode: str | None, payload: Any) -> bool:
    """Chunks whose place LangGraph fixes: a step's values and checkpoint, its task starts
    (all emitted before the step's tasks run, in task order) and the debug twins of those.
    The others (updates, custom chunks, task results, an interrupt's values chunk) come as
    parallel tasks finish."""
    if mode == "values":  # (an interrupt's values chunk comes as its task finishes)
        return not (isinstance(payload, dict) and "__interrupt__" in payload)
    if mode == "checkpoints":
        return True
    if mode == "tasks":
        return isinstance(payload, dict) and "input" in payload and not _is_call_start(payload)
    if mode == "debug":
        if not isinstance(payload, dict) or payload.get("type") not in ("checkpoint", "task"):
            return False
        return payload["type"] == "checkpoint" or not _is_call_start(payload.get("payload"))
    return False


def _is_call_start(payload: Any) -> bool:
    """The start of a task call (functional API): it starts while its step runs, when its
    caller calls it; its input is the call's `(args, kwargs)`."""
    if not isinstance(payload, dict) or payload.get("triggers") != ("__pregel_push",):
        return False
    inp = payload.get("input")
    return (
        isinstance(inp, tuple)
        and len(inp) == 2
        and isinstance(inp[0], tuple)
        and isinstance(inp[1], dict)
    )


def _root_start(chunk: Any, api: str) -> bool:
    ns, mode, payload = _parts(chunk, api)
    return (
        ns == ()
        and mode == "tasks"
        and isinstance(payload, dict)
        and "input" in payload
        and not _is_call_start(payload)  # (task calls start inside their step)
    )


def _unorder(
    chunks: list, api: str, segments: list[int] | None = None, key: Any = sort_key
) -> list:
    """Chunks in order, except that a run of chunks whose order parallel tasks decide (see
    `_fixed`) between two fixed chunks is sorted. `segments`: for streams without fixed
    chunks (a single "updates" or "custom" mode), how many chunks each super-step emitted
    (see `step_segments`); each step's chunks are sorted."""
    return [chunks[i] for i in _order(chunks, api, segments, key)]


def _order(
    chunks: list, api: str, segments: list[int] | None, key: Any, lanes: bool = True
) -> list[int]:
    """The permutation `_unorder` applies (indices into `chunks`). With subgraphs=True,
    the chunks of parallel subgraph calls (root-level nodes that ran subgraphs: "lanes")
    interleave freely, so each lane keeps its own order and the lanes follow one another."""

    def ranked(idx: list[int]) -> list[int]:
        return sorted(idx, key=lambda i: key(chunks[i]))

    out: list[int] = []
    if lanes and segments is None and SUBGRAPH_APIS.get(api, (None, False))[1]:
        lanes = _lanes(chunks, api)
        if len(lanes) > 1:  # parallel subgraphs: each lane in its own order, lane by lane
            for lane in sorted(lanes):
                idx = lanes[lane]
                sub = _order([chunks[i] for i in idx], api, None, key, lanes=False)
                out.extend(idx[j] for j in sub)
            return out
    if segments is not None:
        pos = 0
        for n in segments:
            out.extend(ranked(list(range(pos, min(pos + n, len(chunks))))))
            pos += n
        out.extend(ranked(list(range(pos, len(chunks)))))
        return out
    group: list[int] = []
    for i, c in enumerate(chunks):
        if _fixed(*_parts(c, api)[1:]):
            out.extend(ranked(group))
            group = []
            out.append(i)
        else:
            group.append(i)
    out.extend(ranked(group))
    return out


def _lanes(chunks: list, api: str) -> dict[str, list[int]]:
    """Chunk indices by the root-level node a chunk's namespace starts with ("" for the
    root graph's own chunks)."""
    lanes: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        ns = _parts(c, api)[0]
        lanes.setdefault(ns[0].split(":")[0] if ns else "", []).append(i)
    return lanes


_TOKEN_RE = re.compile(r"<id\d+>")


def _normalised_key(chunk: Any) -> tuple[str, str]:
    """A normalised chunk's sort key: as `sort_key` (ids masked), then with the ids'
    tokens, so chunks equal but for their ids take one order in both traces."""
    text = repr(chunk)
    return (_TOKEN_RE.sub("<id>", text), text)


def _segment_api(scn: Scenario, api: str) -> tuple[str, bool] | None:
    """(mode, subgraphs) when `api`'s stream of a parallel scenario has no fixed chunks."""
    mode, subgraphs = {**APIS, **SUBGRAPH_APIS}[api]
    if scn.parallel and mode in ("updates", "custom"):
        return mode, subgraphs
    return None


def _count_segments(chunks: list, mode: str, subgraphs: bool) -> list[int]:
    """Per root super-step of a `[mode, "tasks"]` stream: how many `mode` chunks it has."""
    api = "multi-sub" if subgraphs else "multi"
    counts: list[int] = []
    prev_start = False
    for c in chunks:
        start = _root_start(c, api)
        if start and not prev_start:
            counts.append(0)
        prev_start = start
        if _parts(c, api)[1] == mode:
            if not counts:
                counts.append(0)
            counts[-1] += 1
    return counts


def step_segments(scn: Scenario, api: str, durability: str | None, saver: Any) -> list | None:
    """For a stream without fixed chunks: the reference's chunks per super-step, per call
    (from the same scenario streamed with "tasks" added), else None."""
    seg = _segment_api(scn, api)
    if seg is None:
        return None
    mode, subgraphs = seg
    trace = run_sync(scn, get_lib("langgraph"), api, durability, saver, modes=[mode, "tasks"])
    return _call_segments(trace, mode, subgraphs)


async def astep_segments(
    scn: Scenario, api: str, durability: str | None, saver: Any
) -> list | None:
    seg = _segment_api(scn, api)
    if seg is None:
        return None
    mode, subgraphs = seg
    trace = await run_async(
        scn, get_lib("langgraph"), api, durability, saver, modes=[mode, "tasks"]
    )
    return _call_segments(trace, mode, subgraphs)


def _call_segments(trace: dict, mode: str, subgraphs: bool) -> list:
    return [
        _count_segments(rec["chunks"], mode, subgraphs) if "chunks" in rec else None
        for rec in trace.get("calls", ())
    ]


def _sort_interrupts(obj: Any) -> Any:
    """Interrupt lists (`__interrupt__`, a task's `interrupts`) in a fixed order: parallel
    tasks that interrupt in one step report in the order they finish."""
    if isinstance(obj, dict):
        out = {k: _sort_interrupts(v) for k, v in obj.items()}
        for key in ("__interrupt__", "interrupts"):
            ints = out.get(key)
            if isinstance(ints, (list, tuple)):
                out[key] = type(ints)(sorted(ints, key=sort_key))
        return out
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_sort_interrupts(v) for v in obj)
    return obj


def _resort_pending_writes(trace: dict, out: dict) -> bool:
    """Pending writes of parallel tasks are saved as the tasks finish, so writes equal but
    for their ids (two tasks interrupting with the same value) keep no fixed order. Put
    them in the order of their normalised ids, as `normalise_trace` does with chunks;
    True when something moved."""
    moved = False
    for key, rows in trace.items():
        if not key.startswith("checkpoints:") or not isinstance(rows, list):
            continue
        for row, nrow in zip(rows, out[key]):
            writes, nwrites = row.get("pending_writes"), nrow.get("pending_writes")
            if not writes:
                continue
            perm = sorted(range(len(nwrites)), key=lambda i: _normalised_key(nwrites[i]))
            if perm != list(range(len(perm))):
                row["pending_writes"] = [writes[i] for i in perm]
                moved = True
    return moved


def normalise_trace(
    trace: dict, parallel: bool, api: str = "multi", segments: list | None = None
) -> dict:
    if not parallel:
        return Normalizer()(trace)
    for rec in trace.get("calls", ()):
        for key in ("result", "chunks"):
            if key in rec:
                rec[key] = _sort_interrupts(rec[key])
    calls = [rec for rec in trace.get("calls", ()) if "chunks" in rec]

    def seg(rec: dict) -> list | None:
        i = trace["calls"].index(rec)
        return segments[i] if segments is not None and i < len(segments) else None

    for rec in calls:  # ids masked: the order both traces share, up to chunks equal but
        rec["chunks"] = _unorder(rec["chunks"], api, seg(rec))  # for their ids
    for _ in range(4):
        # Ids are numbered in order of appearance: among chunks equal but for their ids
        # (parallel twins), take the order of the ids' numbers, renumber, until stable
        # (ids first seen in such chunks - an interrupt's - then follow their task's).
        out = _sort_normalised_interrupts(_anchored_normalizer(trace)(trace))
        changed = False
        for rec, nrec in zip(calls, (r for r in out["calls"] if "chunks" in r)):
            perm = _order(nrec["chunks"], api, seg(rec), _normalised_key)
            if perm != list(range(len(perm))):
                rec["chunks"] = [rec["chunks"][i] for i in perm]
                changed = True
        changed |= _resort_pending_writes(trace, out)
        if not changed:
            return out
    return out


def _anchored_normalizer(trace: dict) -> Normalizer:
    """A normalizer that has seen the thread's state history first: snapshots list their
    tasks (with the tasks' interrupts) in the order the step planned them, which does not
    depend on which parallel task finished first, so ids numbered there (task ids, the
    interrupt ids they raised) get the same numbers in both traces, whatever order results
    and pending writes then show them in."""
    norm = Normalizer()
    for key in sorted(k for k in trace if k.startswith(("history:", "state_sub:"))):
        norm(trace[key])
    return norm


def _sort_normalised_interrupts(obj: Any) -> Any:
    """`_sort_interrupts` again on normalised data: interrupts equal but for their ids then
    take the order of their (anchored) id numbers."""
    if isinstance(obj, dict):
        out = {k: _sort_normalised_interrupts(v) for k, v in obj.items()}
        ints = out.get("__interrupt__")
        if isinstance(ints, (list, tuple)):
            out["__interrupt__"] = type(ints)(sorted(ints, key=_normalised_key))
        return out
    if isinstance(obj, (list, tuple)):
        return type(obj)(_sort_normalised_interrupts(v) for v in obj)
    return obj


def assert_same(ref: dict, got: dict, label: str) -> None:
    diff = first_difference(ref, got)
    if diff is not None:
        pytest.fail(f"{label}: reference and target differ at {diff}", pytrace=False)


def target_lib() -> Lib:
    """The library under test (under CI=true, warpgraph must be importable: no skip)."""
    name = target_name()
    if name == "warpgraph":
        err = warpgraph_import_error()
        if err is not None:
            if in_ci():
                pytest.fail(f"warpgraph not importable ({err}); CI=true", pytrace=False)
            pytest.skip(f"warpgraph not importable yet ({err})")
    return get_lib(name)


def _key_sorted(obj: Any) -> Any:
    """`obj` (normalised) with the keys of every dict in it sorted."""
    if isinstance(obj, dict):
        return {k: _key_sorted(obj[k]) for k in sorted(obj, key=repr)}
    if isinstance(obj, list):
        return [_key_sorted(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_key_sorted(v) for v in obj)
    return obj


def _finish(
    scn: Scenario,
    traces: list[dict],
    label: str,
    api: str,
    segments: list | None,
    sql: bool = False,
) -> dict:
    ref, got = (normalise_trace(t, scn.parallel, api, segments) for t in traces)
    if sql:  # what the saver gives back: each SQL saver orders the keys of dicts its own way
        ref, got = (
            {k: v if k == "calls" else _key_sorted(v) for k, v in t.items()} for t in (ref, got)
        )
    assert_same(ref, got, f"{scn.name}[{label}]")
    return ref


def compare_sync(
    scn: Scenario,
    api: str,
    durability: str | None,
    target: Lib | None = None,
    saver: Any = None,
) -> dict:
    """Run the sync API on the reference and the target; fail on any difference.
    `saver`: a `SaverKind` whose savers replace the scenario's InMemorySaver."""
    target = target or target_lib()
    traces = [run_sync(scn, lib, api, durability, saver) for lib in (get_lib("langgraph"), target)]
    segments = step_segments(scn, api, durability, saver)
    label = f"{api}, sync, durability={durability}" + (f", {saver.kind}" if saver else "")
    return _finish(scn, traces, label, api, segments, saver is not None)


async def compare_async(
    scn: Scenario,
    api: str,
    durability: str | None,
    target: Lib | None = None,
    saver: Any = None,
) -> dict:
    """Run the async API on the reference and the target; fail on any difference."""
    target = target or target_lib()
    traces = [
        await run_async(scn, lib, api, durability, saver) for lib in (get_lib("langgraph"), target)
    ]
    segments = await astep_segments(scn, api, durability, saver)
    label = f"{api}, async, durability={durability}" + (f", {saver.kind}" if saver else "")
    return _finish(scn, traces, label, api, segments, saver is not None)


def params(
    aio: bool, names: list[str] | None = None, registry: dict[str, Scenario] | None = None
) -> list:
    """pytest params (scenario, api, durability) for the registered scenarios (or those of
    `registry`).

    Non-default durabilities run only for invoke and the multi-mode stream to keep the default
    run short; WARPGRAPH_LONG_TESTS=1 runs every API under every durability.
    """
    out = []
    for name, scn in (REGISTRY if registry is None else registry).items():
        if (names is not None and name not in names) or aio not in scn.aio:
            continue
        for dur in scn.durabilities:
            for api in scn.all_apis():
                if dur is not None and not LONG and api not in ("invoke", "multi"):
                    continue
                out.append(pytest.param(scn, api, dur, id=f"{name}-{api}-{dur or 'default'}"))
    return out


def comparison_tests(registry: dict[str, Scenario] | None = None) -> tuple[Any, Any]:
    """The two tests of a scenario module, (test_sync, test_async): each of the
    registered scenarios (or `registry`'s) compared with the reference per API."""

    @pytest.mark.parametrize(("scn", "api", "durability"), params(False, registry=registry))
    def test_sync(scn, api, durability):
        compare_sync(scn, api, durability)

    @pytest.mark.parametrize(("scn", "api", "durability"), params(True, registry=registry))
    async def test_async(scn, api, durability):
        await compare_async(scn, api, durability)

    return test_sync, test_async
