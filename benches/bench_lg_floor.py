"""The floor of LangGraph's own benchmark graphs, beside warpgraph's time on them.

LangGraph's bench graphs (`libs/langgraph/bench` in the LangGraph monorepo: fanout_to_subgraph,
react_agent, wide_state, wide_dict, pydantic_state, sequential) are read from a git copy of the
monorepo at run time (never copied here) and built on warpgraph through `warpgraph.compat`.
Each workload is then timed two ways, turns alternating, in one process:

* `warpgraph`: what `lg_bench.sh` times, `graph.stream(input, config, durability="exit")`
  (a new thread per run; InMemorySaver for the `_checkpoint` variants), sync and async;
* `floor`: the same node bodies, branch functions, reducers and state coercion (each node's
  input built as its schema: a dataclass or pydantic model constructed, a TypedDict's keys
  picked) called by a plain Python loop that runs the graph's super-steps with none of an
  engine's bookkeeping (no versions, no tasks, no streaming, no config), plus, for the
  `_checkpoint` variants, encoding what the one exit checkpoint stores (each channel's final
  value, with warpgraph's serializer).

The floor is what any runtime must spend. Issue 17's per-workload bound is "<= 0.10 of
LangGraph's time or <= 1.3x the floor, whichever is larger": this prints warpgraph / floor
(the second bound); the first comes from `lg_bench.sh`, which times LangGraph beside warpgraph.

    PYTHONPATH=python:benches .venv/bin/python benches/bench_lg_floor.py MIRROR [--quick] [--only NAME]

MIRROR is a git directory of langchain-ai/langgraph (e.g. the one `lg_bench.sh` uses).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import inspect
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Callable
from io import BytesIO
from typing import Any

REF = "f09cfe8ff"  # the LangGraph commit lg_bench.sh's baseline was made at (1.2.11)
END, START = "__end__", "__start__"


# --- the bench graphs, from the monorepo -----------------------------------------------------
def export_bench(mirror: str, into: str) -> str:
    """`libs/langgraph/bench` of `mirror` at REF (else HEAD) extracted under `into`."""
    for ref in (REF, "HEAD"):
        proc = subprocess.run(
            ["git", "-C", mirror, "archive", "--format=tar", ref, "libs/langgraph/bench"],
            capture_output=True,
            check=False,
        )
        if proc.returncode == 0:
            with tarfile.open(fileobj=BytesIO(proc.stdout)) as tar:
                tar.extractall(into, filter="data")
            return os.path.join(into, "libs", "langgraph")
    raise SystemExit(f"{mirror}: no libs/langgraph/bench at {REF} or HEAD")


def workloads(quick: bool) -> list[tuple[str, Callable, Callable, Callable, bool]]:
    """(name, make async graph, make sync graph, make input, checkpointed), as lg_bench.sh."""
    import random

    from bench.fanout_to_subgraph import fanout_to_subgraph, fanout_to_subgraph_sync
    from bench.pydantic_state import pydantic_state
    from bench.react_agent import react_agent
    from bench.sequential import create_sequential
    from bench.wide_dict import wide_dict
    from bench.wide_state import wide_state
    from langchain_core.messages import HumanMessage

    def big(outer: int, inner: int) -> Callable[[], dict]:
        row = ["hi?" * 10, True, 1, 6327816386138, None] * 5
        return lambda: {
            "messages": [
                {str(i) * 10: {str(j) * 10: list(row) for j in range(inner)} for i in range(outer)}
            ]
        }

    def subjects(n: int) -> Callable[[], dict]:
        letters = "abcdefghijklmnopqrstuvwxyz"
        return lambda: {"subjects": [random.choices(letters, k=1000) for _ in range(n)]}

    out = []
    for cp in (False, True):
        sfx = "_checkpoint" if cp else ""
        out.append(
            (
                f"fanout_to_subgraph_10x{sfx}",
                fanout_to_subgraph,
                fanout_to_subgraph_sync,
                subjects(10),
                cp,
            )
        )
        agent = lambda saver: react_agent(10, saver)  # (builds a compiled graph)
        out.append(
            (f"react_agent_10x{sfx}", agent, agent, lambda: {"messages": [HumanMessage("hi?")]}, cp)
        )
    for label, build in (
        ("wide_state", wide_state),
        ("wide_dict", wide_dict),
        ("pydantic_state", pydantic_state),
    ):
        for cp in (False, True):
            sfx = "_checkpoint" if cp else ""
            out.append(
                (
                    f"{label}_25x300{sfx}",
                    lambda b=build: b(300),
                    lambda b=build: b(300),
                    big(5, 5),
                    cp,
                )
            )
    out.append(
        (
            "sequential_10",
            lambda: create_sequential(10),
            lambda: create_sequential(10),
            lambda: {"messages": []},
            False,
        )
    )
    if not quick:
        out.append(
            (
                "sequential_1000",
                lambda: create_sequential(1000),
                lambda: create_sequential(1000),
                lambda: {"messages": []},
                False,
            )
        )
    return out


# --- the floor: a plain loop over the graph's own functions ----------------------------------
class Shape:
    """What the plain loop needs of a StateGraph builder: its nodes' callables and input
    schemas, edges, waiting edges, branches and reducers, read once."""

    def __init__(self, builder: Any) -> None:
        from warpgraph.channels.binop import BinaryOperatorAggregate

        self.builder = builder
        self.reducers = {
            k: ch.operator if isinstance(ch, BinaryOperatorAggregate) else None
            for k, ch in builder.channels.items()
        }
        self.initial = {  # (a reducer's start value: list() for a list, none for `X | None`)
            k: ch.value
            for k, ch in builder.channels.items()
            if isinstance(ch, BinaryOperatorAggregate) and ch.is_available()
        }
        self.edges: dict[str, list[str]] = {}
        for a, b in sorted(builder.edges):
            self.edges.setdefault(a, []).append(b)
        self.waiting = [(frozenset(starts), end) for starts, end in builder.waiting_edges]
        self.branches = {src: list(specs.values()) for src, specs in builder.branches.items()}
        self.nodes = {name: self._callable(spec) for name, spec in builder.nodes.items()}
        self.inputs = {
            name: spec.input_schema or builder.state_schema for name, spec in builder.nodes.items()
        }
        self.input_keys = _keys(builder.input_schema)
        self.output_keys = _keys(builder.output_schema)

    @staticmethod
    def _callable(spec: Any) -> tuple[str, Any]:
        """("graph", Shape) for a subgraph, ("func", f) for a function of the state alone,
        else ("runnable", r) (called with `invoke(state, config)`)."""
        r = spec.runnable
        sub = getattr(r, "builder", None)
        if sub is not None and hasattr(sub, "nodes"):
            return "graph", Shape(sub)
        func = getattr(r, "func", None) or getattr(r, "afunc", None)
        if func is not None and len(_params(func)) == 1:
            return "func", (getattr(r, "func", None), getattr(r, "afunc", None))
        return "runnable", r


def _params(func: Any) -> list[str]:
    try:
        return [
            p.name
            for p in inspect.signature(func).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return ["?", "?"]


def _keys(schema: Any) -> list[str] | None:
    if schema is None:
        return None
    if dataclasses.is_dataclass(schema):
        return [f.name for f in dataclasses.fields(schema)]
    fields = getattr(schema, "model_fields", None)
    if fields is not None:
        return list(fields)
    hints = getattr(schema, "__annotations__", None)
    if hints is None:
        return None
    keys: dict[str, None] = {}
    for klass in reversed(getattr(schema, "__mro__", (schema,))):
        keys.update(dict.fromkeys(getattr(klass, "__annotations__", {})))
    return list(keys)


_SCHEMAS: dict[Any, tuple[list[str] | None, bool]] = {}


def _coerce(schema: Any, values: dict) -> Any:
    """A node's input as its schema: the model or dataclass built, a TypedDict's keys kept
    (what a schema asks for is read once)."""
    known = _SCHEMAS.get(schema)
    if known is None:
        built = dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields")
        known = _SCHEMAS[schema] = (_keys(schema), built)
    keys, built = known
    picked = values if keys is None else {k: values[k] for k in keys if k in values}
    return schema(**picked) if built else picked


def _updates(out: Any) -> list[dict]:
    if out is None:
        return []
    if isinstance(out, dict):
        return [out]
    if isinstance(out, (list, tuple)):
        return [u for item in out for u in _updates(item)]
    update = getattr(out, "update", None)  # a Command
    if update is not None and not callable(update):
        return _updates(update)
    if dataclasses.is_dataclass(out):
        return [{f.name: getattr(out, f.name) for f in dataclasses.fields(out)}]
    if hasattr(out, "model_dump"):
        return [dict(out)]
    return []


def _targets(result: Any, ends: dict | None) -> list[Any]:
    items = result if isinstance(result, (list, tuple)) else [result]
    return [ends[i] if ends and not hasattr(i, "node") and i in ends else i for i in items]


def _runnable_config() -> dict:
    """The least config a runnable node (react_agent's model and tools) can be called with:
    the default runtime (no store, no context)."""
    from warpgraph._internal._constants import CONF, CONFIG_KEY_RUNTIME
    from warpgraph.runtime import DEFAULT_RUNTIME

    return {CONF: {CONFIG_KEY_RUNTIME: DEFAULT_RUNTIME}}


_RUNNABLE_CONFIG: dict = {}


class Floor:
    """Runs a Shape's super-steps with the graph's own functions (sync or async)."""

    def __init__(self, shape: Shape, aio: bool) -> None:
        self.shape, self.aio = shape, aio

    def _apply(self, values: dict, updates: list[dict]) -> None:
        reducers = self.shape.reducers
        for update in updates:
            for k, v in update.items():
                op = reducers.get(k)
                values[k] = v if op is None else op(values.get(k, []), v)

    async def _call(self, kind: str, what: Any, arg: Any) -> Any:
        if kind == "graph":
            return await Floor(what, self.aio).run(arg)
        if kind == "func":
            sync, asy = what
            if self.aio and asy is not None:
                return await asy(arg)
            out = sync(arg)
            return await out if inspect.isawaitable(out) else out
        if self.aio:
            return await what.ainvoke(arg, _RUNNABLE_CONFIG)
        return what.invoke(arg, _RUNNABLE_CONFIG)

    async def run(self, inp: dict) -> dict:
        shape = self.shape
        values: dict = dict(shape.initial)
        keys = shape.input_keys
        self._apply(values, [{k: v for k, v in inp.items() if keys is None or k in keys}])
        ran: list[str] = [START]
        sends: list[tuple[str, Any]] = []
        arrived: dict[int, set[str]] = {}
        while True:
            pushes = [(t.node, t.arg) for t in sends]  # (Sends: one task each)
            pulls: dict[str, None] = {}  # (a node triggered twice in a step runs once)
            for node in ran:
                pulls.update(dict.fromkeys(t for t in shape.edges.get(node, ()) if t != END))
                for i, (starts, end) in enumerate(shape.waiting):
                    if node in starts:
                        seen = arrived.setdefault(i, set())
                        seen.add(node)
                        if seen == starts:
                            pulls[end] = None
                            seen.clear()
                for branch in shape.branches.get(node, ()):
                    path = branch.path
                    state = _coerce(branch.input_schema or shape.builder.state_schema, values)
                    func = getattr(path, "afunc" if self.aio else "func", None) or path.func
                    out = func(state)
                    if inspect.isawaitable(out):
                        out = await out
                    for t in _targets(out, branch.ends):
                        if hasattr(t, "node"):
                            pushes.append((t.node, t.arg))
                        elif t != END:
                            pulls[t] = None
            if not pulls and not pushes:
                break
            ran, sends, updates = [], [], []
            for name, arg in [(p, None) for p in pulls] + pushes:
                kind, what = shape.nodes[name]
                node_in = arg  # (a Send's argument goes as it is)
                if arg is None:
                    node_in = values if kind == "graph" else _coerce(shape.inputs[name], values)
                out = await self._call(kind, what, node_in)
                goto = getattr(out, "goto", None)
                if goto:
                    sends += [
                        g
                        for g in (goto if isinstance(goto, list) else [goto])
                        if hasattr(g, "node")
                    ]
                updates += _updates(out)
                ran.append(name)
            self._apply(values, updates)
        keys = shape.output_keys
        return values if keys is None else {k: values[k] for k in keys if k in values}


def floor_run(
    shape: Shape, inp: dict, aio: bool, loop: asyncio.AbstractEventLoop, encode: Any
) -> Any:
    coro = Floor(shape, aio).run(inp)
    if aio:
        values = loop.run_until_complete(coro)
    else:  # the sync floor never suspends: step the coroutine to its end without a loop
        try:
            coro.send(None)
            raise RuntimeError("the sync floor suspended")
        except StopIteration as stop:
            values = stop.value
    if encode is not None:
        for v in values.values():
            encode(v)
    return values


# --- timing ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mirror", help="git directory of langchain-ai/langgraph")
    ap.add_argument("--quick", action="store_true", help="5 turns (default 15)")
    ap.add_argument("--only", help="workloads whose name contains this")
    args = ap.parse_args(argv)

    import warpgraph.compat

    warpgraph.compat.install()
    tmp = tempfile.mkdtemp(prefix="wg-lg-floor-")
    sys.path.insert(0, export_bench(args.mirror, tmp))
    from warpgraph.checkpoint.memory import InMemorySaver
    from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    encode = JsonPlusSerializer().dumps_typed
    _RUNNABLE_CONFIG.update(_runnable_config())
    loop = asyncio.new_event_loop()
    turns = 5 if args.quick else 15
    rows = []
    for name, mk_async, mk_sync, mk_input, cp in workloads(args.quick):
        if args.only and args.only not in name:
            continue
        for mode, make in (("sync", mk_sync), ("async", mk_async)):
            saver = InMemorySaver() if cp else None
            built = make(saver) if name.startswith("react_agent") else make()
            builder = getattr(built, "builder", built)
            graph = built if builder is not built else builder.compile(checkpointer=saver)
            shape = Shape(builder)
            inp = mk_input()
            w, f, same = measure(graph, shape, inp, mode == "async", cp, loop, encode, turns)
            rows.append((name, mode, w, f, same))
            print(
                f"  {name} {mode}: warpgraph {w * 1e3:.2f} ms, floor {f * 1e3:.2f} ms",
                file=sys.stderr,
            )
    print(
        f"{'workload':34s} {'mode':5s} {'warpgraph ms':>12s} {'floor ms':>9s} {'wg/floor':>8s}  same state"
    )
    for name, mode, w, f, same in rows:
        print(
            f"{name:34s} {mode:5s} {w * 1e3:12.2f} {f * 1e3:9.2f} {w / f:8.2f}  {'yes' if same else 'NO'}"
        )


def measure(
    graph: Any, shape: Shape, inp: dict, aio: bool, cp: bool, loop: Any, encode: Any, turns: int
) -> tuple[float, float, bool]:
    """Medians of warpgraph's and the floor's runs (turns alternating), and whether the
    floor's final state has warpgraph's keys and value sizes."""

    def config() -> dict:
        return {"configurable": {"thread_id": str(uuid.uuid4())}, "recursion_limit": 10**9}

    async def consume() -> None:
        async for _ in graph.astream(inp, config(), durability="exit"):
            pass

    def wg() -> None:
        if aio:
            loop.run_until_complete(consume())
        else:
            for _ in graph.stream(inp, config(), durability="exit"):
                pass

    def fl() -> None:
        floor_run(shape, inp, aio, loop, encode if cp else None)

    if aio:
        want = loop.run_until_complete(graph.ainvoke(inp, config(), durability="exit"))
    else:
        want = graph.invoke(inp, config(), durability="exit")
    got = floor_run(shape, inp, aio, loop, None)
    same = set(got) <= set(want) and all(_size(got[k]) == _size(want[k]) for k in got)
    wg(), fl()  # warm-up
    times: dict[Any, list[float]] = {wg: [], fl: []}
    for i in range(turns):
        for fn in (wg, fl) if i % 2 == 0 else (fl, wg):
            t0 = time.perf_counter()
            fn()
            times[fn].append(time.perf_counter() - t0)
    return statistics.median(times[wg]), statistics.median(times[fl]), same


def _size(v: Any) -> Any:
    """A cheap fingerprint of a final value (random strings differ between runs)."""
    if isinstance(v, (list, tuple, dict)):
        return (type(v).__name__, len(v))
    return type(v).__name__


if __name__ == "__main__":
    main()
