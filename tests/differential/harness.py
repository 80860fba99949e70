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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from .libs import Lib, get_lib, target_name, warpgraph_import_error
from .normalize import Normalizer, first_difference, sort_key

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
    # the saver's rows are compared modulo two known differences of warpgraph's SQL savers
    # (see `_relax_saver_rows`); everything read through the graph is compared as is
    sql_saver_rows: bool = False

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
    rows = []
    for t in tuples:
        rows.append(
            {
                "config": t.config,
                "checkpoint": t.checkpoint,
                "metadata": t.metadata,
                "parent_config": t.parent_config,
                "pending_writes": sorted(t.pending_writes or [], key=sort_key),
            }
        )
    # group by namespace (saver order of namespaces is not part of the contract)
    rows.sort(key=lambda r: r["config"]["configurable"].get("checkpoint_ns", ""))
    return rows


def _stream_kwargs(api: str, durability: str | None, kwargs: dict) -> dict:
    mode, subgraphs = {**APIS, **SUBGRAPH_APIS}[api]
    kw = dict(kwargs)
    if durability is not None:
        kw["durability"] = durability
    if mode is not None:
        kw["stream_mode"] = mode
        if subgraphs:
            kw["subgraphs"] = True
    return kw


def run_sync(scn: Scenario, lib: Lib, api: str, durability: str | None) -> dict:
    built = _build(scn, lib)
    if isinstance(built, dict):
        return built
    graph, calls, kwargs = _calls(built)
    kw = _stream_kwargs(api, durability, kwargs)
    trace: dict[str, Any] = {"calls": []}
    for call, call_cfg in calls:
        rec: dict[str, Any] = {}
        try:
            inp, cfg, ckw = _resolve(call, call_cfg, graph, kw)
            if api == "invoke":
                rec["result"] = graph.invoke(inp, cfg, **ckw)
            else:
                rec["chunks"] = chunks = []
                for chunk in graph.stream(inp, cfg, **ckw):
                    chunks.append(chunk)  # noqa: PERF402 - keep chunks before an error
        except Exception as exc:  # noqa: BLE001 - errors are part of the trace
            rec["error"] = exc
        trace["calls"].append(rec)
    saver = graph.checkpointer
    if saver not in (None, True, False):
        for cfg in _threads(calls):
            tid = cfg["configurable"]["thread_id"]
            probes = {
                "checkpoints": lambda cfg=cfg: _checkpoint_rows(list(saver.list(cfg))),
                "state": lambda cfg=cfg: graph.get_state(cfg),
                "state_sub": lambda cfg=cfg: graph.get_state(cfg, subgraphs=True),
                "history": lambda cfg=cfg: list(graph.get_state_history(cfg)),
            }
            for key, probe in probes.items():
                try:
                    trace[f"{key}:{tid}"] = probe()
                except Exception as exc:  # noqa: BLE001 - errors are part of the trace
                    trace[f"{key}:{tid}"] = {"error": exc}
    return trace


async def _alist(aiter, then=list):
    return then([x async for x in aiter])


async def run_async(scn: Scenario, lib: Lib, api: str, durability: str | None) -> dict:
    built = _build(scn, lib)
    if isinstance(built, dict):
        return built
    graph, calls, kwargs = _calls(built)
    kw = _stream_kwargs(api, durability, kwargs)
    trace: dict[str, Any] = {"calls": []}
    for call, call_cfg in calls:
        rec: dict[str, Any] = {}
        try:
            inp, cfg, ckw = _resolve(call, call_cfg, graph, kw)
            if api == "invoke":
                rec["result"] = await graph.ainvoke(inp, cfg, **ckw)
            else:
                rec["chunks"] = chunks = []
                async for chunk in graph.astream(inp, cfg, **ckw):
                    chunks.append(chunk)
        except Exception as exc:  # noqa: BLE001 - errors are part of the trace
            rec["error"] = exc
        trace["calls"].append(rec)
    saver = graph.checkpointer
    if saver not in (None, True, False):
        for cfg in _threads(calls):
            tid = cfg["configurable"]["thread_id"]
            probes = {
                "checkpoints": lambda cfg=cfg: _alist(saver.alist(cfg), _checkpoint_rows),
                "state": lambda cfg=cfg: graph.aget_state(cfg),
                "state_sub": lambda cfg=cfg: graph.aget_state(cfg, subgraphs=True),
                "history": lambda cfg=cfg: _alist(graph.aget_state_history(cfg)),
            }
            for key, probe in probes.items():
                try:
                    trace[f"{key}:{tid}"] = await probe()
                except Exception as exc:  # noqa: BLE001 - errors are part of the trace
                    trace[f"{key}:{tid}"] = {"error": exc}
    return trace


def _carries_interrupt(payload: Any) -> bool:
    return isinstance(payload, dict) and "__interrupt__" in payload


def _is_barrier(chunk: Any) -> bool:
    """Chunks emitted once a super-step's tasks have all finished (not the values chunk an
    interrupted task emits as it stops, while others may still run)."""
    if isinstance(chunk, tuple) and len(chunk) == 3:  # (ns, mode, payload)
        if chunk[1] == "values":
            return not _carries_interrupt(chunk[2])
        return chunk[1] == "checkpoints" or _is_barrier(chunk[2])
    if isinstance(chunk, tuple) and len(chunk) == 2:  # (mode, payload) or (ns, payload)
        if chunk[0] == "values":
            return not _carries_interrupt(chunk[1])
        if chunk[0] == "checkpoints":
            return True
        return _is_barrier(chunk[1])
    return isinstance(chunk, dict) and chunk.get("type") == "checkpoint" and "step" in chunk


def _unorder(chunks: list) -> list:
    """Sort chunks within each run between barriers (parallel tasks finish in any order)."""
    out: list = []
    group: list = []
    for c in chunks:
        if _is_barrier(c):
            out.extend(sorted(group, key=sort_key))
            group = []
            out.append(c)
        else:
            group.append(c)
    out.extend(sorted(group, key=sort_key))
    return out


def _sort_interrupts(obj: Any) -> Any:
    """Interrupt lists in results and chunks (`__interrupt__`, a task's `interrupts`) in a
    fixed order (parallel tasks that interrupt in one step report in the order they
    finish)."""
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


def _lane(chunk: Any) -> str:
    """The root-level node a subgraphs=True chunk comes from ("" for the root graph)."""
    if isinstance(chunk, tuple) and chunk and isinstance(chunk[0], tuple):
        return chunk[0][0].split(":")[0] if chunk[0] else ""
    return ""


def _unorder_lanes(chunks: list) -> list:
    """Parallel subgraphs interleave their steps freely: each lane's chunks in order of
    their own steps, lane after lane."""
    lanes: dict[str, list] = {}
    for c in chunks:
        lanes.setdefault(_lane(c), []).append(c)
    return [c for lane in sorted(lanes) for c in _unorder(lanes[lane])]


def _relax_saver_rows(trace: dict) -> None:
    """Saver rows of warpgraph's SQL savers differ from LangGraph's in two known ways:
    `channel_values` come in another key order, and a special write (`__resume__`, ...)
    replaces the stored one where LangGraph's savers keep the first unless all of a call's
    writes are special (InMemorySaver's rule); compare the rest."""
    for key, rows in trace.items():
        if not key.startswith("checkpoints:") or not isinstance(rows, list):
            continue
        for row in rows:
            cp = row["checkpoint"]
            cp["channel_values"] = dict(sorted(cp["channel_values"].items()))
            row["pending_writes"] = [w for w in row["pending_writes"] if w[1] != "__resume__"]


def normalise_trace(trace: dict, parallel: bool, sql_saver_rows: bool = False) -> dict:
    if parallel:
        for rec in trace.get("calls", ()):
            if "chunks" in rec:
                rec["chunks"] = _unorder_lanes(_sort_interrupts(rec["chunks"]))
            if "result" in rec:
                rec["result"] = _sort_interrupts(rec["result"])
    if sql_saver_rows:
        _relax_saver_rows(trace)
    return Normalizer()(trace)


def assert_same(ref: dict, got: dict, label: str) -> None:
    diff = first_difference(ref, got)
    if diff is not None:
        pytest.fail(f"{label}: reference and target differ at {diff}", pytrace=False)


def target_lib() -> Lib:
    """The library under test; skips while warpgraph is not importable yet."""
    name = target_name()
    if name == "warpgraph":
        err = warpgraph_import_error()
        if err is not None:
            pytest.skip(f"warpgraph not importable yet ({err})")
    return get_lib(name)


def _finish(scn: Scenario, traces: list[dict], label: str) -> dict:
    ref, got = (normalise_trace(t, scn.parallel, scn.sql_saver_rows) for t in traces)
    assert_same(ref, got, f"{scn.name}[{label}]")
    return ref


def compare_sync(
    scn: Scenario, api: str, durability: str | None, target: Lib | None = None
) -> dict:
    """Run the sync API on the reference and the target; fail on any difference."""
    target = target or target_lib()
    traces = [run_sync(scn, lib, api, durability) for lib in (get_lib("langgraph"), target)]
    return _finish(scn, traces, f"{api}, sync, durability={durability}")


async def compare_async(
    scn: Scenario, api: str, durability: str | None, target: Lib | None = None
) -> dict:
    """Run the async API on the reference and the target; fail on any difference."""
    target = target or target_lib()
    traces = [await run_async(scn, lib, api, durability) for lib in (get_lib("langgraph"), target)]
    return _finish(scn, traces, f"{api}, async, durability={durability}")


def params(aio: bool, names: list[str] | None = None) -> list:
    """pytest params (scenario, api, durability) for the registered scenarios.

    Non-default durabilities run only for invoke and the multi-mode stream to keep the default
    run short; WARPGRAPH_LONG_TESTS=1 runs every API under every durability.
    """
    out = []
    for name, scn in REGISTRY.items():
        if (names is not None and name not in names) or aio not in scn.aio:
            continue
        for dur in scn.durabilities:
            for api in scn.all_apis():
                if dur is not None and not LONG and api not in ("invoke", "multi"):
                    continue
                out.append(pytest.param(scn, api, dur, id=f"{name}-{api}-{dur or 'default'}"))
    return out
