"""The benchmark workloads, defined once: `warpgraph bench` and `benches/` both run these.

A workload's `prepare(lib, handle, size, durability)` builds its graph (or saver inputs)
outside the timing and returns a `Prepared`, whose `run(thread_id)` does the timed work on a
fresh thread and returns `{metric: (units, seconds)}` (plus, for storage-growth, the bytes
stored against history length). The same definition runs on warpgraph and, in the worker
process, on LangGraph (`lib` holds the names of either).
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from warpgraph._cli.bench.lib import Lib


class S3(TypedDict):
    a: int
    b: int
    c: int


class Fan(TypedDict, total=False):
    a: int
    acc: Annotated[int, operator.add]


class Agent(TypedDict, total=False):
    messages: Annotated[list, operator.add]
    turn: int


class Hub(TypedDict, total=False):
    visits: int
    target: int


class Parent(TypedDict, total=False):
    n: int
    results: Annotated[list, operator.add]
    total: int


class Sub(TypedDict, total=False):
    x: int
    results: Annotated[list, operator.add]


class Growth(TypedDict, total=False):
    context: str
    n: int
    target: int
    log: Annotated[list, operator.add]


@dataclass
class RunResult:
    metrics: dict[str, tuple[int, float]]  # metric -> (units, seconds)
    series: list[tuple[int, int]] | None = None  # (history length, bytes stored)


@dataclass
class Prepared:
    run: Callable[[str], RunResult]


@dataclass(frozen=True)
class Workload:
    name: str
    summary: str
    unit: str
    metrics: tuple[str, ...]
    quick_size: int
    full_size: int
    prepare: Callable[..., Prepared]
    size_name: str = "size"
    min_size: int = 1


class WrongResult(AssertionError):
    """A workload's run did not produce the state it must (a broken engine or saver)."""


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 1_000_000}


def _graph_run(
    graph: Any, inp: Any, expected: Any, units: int, durability: str, metric: str = "run"
) -> Prepared:
    def run(thread_id: str) -> RunResult:
        config = _config(thread_id)
        t0 = time.perf_counter()
        out = graph.invoke(inp, config, durability=durability)
        seconds = time.perf_counter() - t0
        if out != expected:
            raise WrongResult(f"unexpected final state {str(out)[:200]}")
        return RunResult({metric: (units, seconds)})

    return Prepared(run)


# --- graph workloads -------------------------------------------------------------------
# Each graph builder returns (compiled graph, input, expected output, units); the
# benchmarks in benches/graphs.py build the same graphs through them.
def chain_graph(lib: Lib, saver: Any, size: int) -> tuple[Any, Any, Any, int]:
    g = lib.StateGraph(S3)
    for i in range(size):
        g.add_node(f"n{i}", lambda s: {"a": s["a"] + 1})
    g.add_edge(lib.START, "n0")
    for i in range(size - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    g.add_edge(f"n{size - 1}", lib.END)
    graph = g.compile(checkpointer=saver)
    return graph, {"a": 0, "b": 0, "c": 0}, {"a": size, "b": 0, "c": 0}, size + 1


def loop_graph(lib: Lib, saver: Any, size: int) -> tuple[Any, Any, Any, int]:
    g = lib.StateGraph(S3)
    g.add_node("tick", lambda s: {"a": s["a"] + 1})
    g.add_edge(lib.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["a"] < size else lib.END)
    graph = g.compile(checkpointer=saver)
    return graph, {"a": 0, "b": 0, "c": 0}, {"a": size, "b": 0, "c": 0}, size + 1


def fanout_graph(lib: Lib, saver: Any, size: int) -> tuple[Any, Any, Any, int]:
    g = lib.StateGraph(Fan)
    g.add_node("src", lambda s: {"a": s["a"] + 1})
    g.add_node("join", lambda s: {"a": s["acc"]})
    for i in range(size):
        g.add_node(f"p{i}", lambda s: {"acc": 1})
        g.add_edge("src", f"p{i}")
    g.add_edge([f"p{i}" for i in range(size)], "join")
    g.add_edge(lib.START, "src")
    g.add_edge("join", lib.END)
    graph = g.compile(checkpointer=saver)
    return graph, {"a": 0, "acc": 0}, {"a": size, "acc": size}, size + 3


def wide_graph(lib: Lib, saver: Any, size: int) -> tuple[Any, Any, Any, int]:
    wide = TypedDict("Wide", {f"k{i}": int for i in range(size)})  # type: ignore[misc]
    g = lib.StateGraph(wide)
    for i in range(size):
        g.add_node(f"n{i}", lambda s, i=i: {f"k{i}": s[f"k{i}"] + i})
    g.add_edge(lib.START, "n0")
    for i in range(size - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    g.add_edge(f"n{size - 1}", lib.END)
    graph = g.compile(checkpointer=saver)
    inp = {f"k{i}": 1 for i in range(size)}
    return graph, inp, {f"k{i}": 1 + i for i in range(size)}, size + 1


def chain(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    return _graph_run(*chain_graph(lib, handle.saver, size), durability, "steps")


def loop(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    return _graph_run(*loop_graph(lib, handle.saver, size), durability, "steps")


def fanout(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    return _graph_run(*fanout_graph(lib, handle.saver, size), durability, "tasks")


def wide_state(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    return _graph_run(*wide_graph(lib, handle.saver, size), durability, "steps")


LARGE_GRAPH_VISITS = 50
SMALL_GRAPH_NODES = 10
LARGE = "steps, N-node graph"
SMALL = f"steps, {SMALL_GRAPH_NODES}-node graph"


def _hub_graph(lib: Lib, saver: Any, nodes: int) -> Any:
    """A hub routing to one of `nodes` leaves per visit (each leaf returns to the hub):
    a run takes the same steps whatever the graph's size."""
    g = lib.StateGraph(Hub)
    names = [f"leaf{i}" for i in range(nodes)]

    def route(s: Hub) -> str:
        if s["visits"] >= s["target"]:
            return lib.END
        return names[(s["visits"] * 7919) % nodes]

    g.add_node("hub", lambda s: {})
    for name in names:
        g.add_node(name, lambda s: {"visits": s["visits"] + 1})
        g.add_edge(name, "hub")
    g.add_edge(lib.START, "hub")
    g.add_conditional_edges("hub", route, [*names, lib.END])
    return g.compile(checkpointer=saver)


def large_graph(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    big = _hub_graph(lib, handle.saver, size)
    small = _hub_graph(lib, handle.saver, SMALL_GRAPH_NODES)
    inp = {"visits": 0, "target": LARGE_GRAPH_VISITS}
    expected = {"visits": LARGE_GRAPH_VISITS, "target": LARGE_GRAPH_VISITS}
    steps = 2 * LARGE_GRAPH_VISITS + 1

    def run(thread_id: str) -> RunResult:
        out: dict[str, tuple[int, float]] = {}
        for metric, graph, suffix in ((LARGE, big, "big"), (SMALL, small, "small")):
            t0 = time.perf_counter()
            res = graph.invoke(inp, _config(f"{thread_id}-{suffix}"), durability=durability)
            out[metric] = (steps, time.perf_counter() - t0)
            if res != expected:
                raise WrongResult(f"unexpected final state {str(res)[:200]}")
        return RunResult(out)

    return Prepared(run)


def agent(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    """A ReAct-style loop: a fake model asks for a tool `size` times, then answers; the
    message list grows by two messages a turn."""

    def model(s: Agent) -> dict[str, Any]:
        turn = s["turn"]
        if turn < size:
            call = {"name": "search", "args": {"query": f"q{turn}"}, "id": f"call{turn}"}
            msg = {"role": "ai", "content": f"looking up q{turn}", "tool_calls": [call]}
        else:
            msg = {"role": "ai", "content": "done", "tool_calls": []}
        return {"messages": [msg], "turn": turn + 1}

    def tools(s: Agent) -> dict[str, Any]:
        call = s["messages"][-1]["tool_calls"][0]
        result = f"result for {call['args']['query']}: " + "lorem ipsum " * 12
        return {"messages": [{"role": "tool", "content": result, "tool_call_id": call["id"]}]}

    g = lib.StateGraph(Agent)
    g.add_node("model", model)
    g.add_node("tools", tools)
    g.add_edge(lib.START, "model")
    g.add_conditional_edges(
        "model", lambda s: "tools" if s["messages"][-1]["tool_calls"] else lib.END
    )
    g.add_edge("tools", "model")
    graph = g.compile(checkpointer=handle.saver)
    inp = {"messages": [{"role": "user", "content": "find it", "tool_calls": []}], "turn": 0}

    def check_and_run(thread_id: str) -> RunResult:
        t0 = time.perf_counter()
        out = graph.invoke(inp, _config(thread_id), durability=durability)
        seconds = time.perf_counter() - t0
        if out["turn"] != size + 1 or len(out["messages"]) != 2 * size + 2:
            raise WrongResult(f"unexpected final state {str(out)[:200]}")
        return RunResult({"steps": (2 * size + 2, seconds)})

    return Prepared(check_and_run)


def subgraph_fanout(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    sg = lib.StateGraph(Sub)
    sg.add_node("double", lambda s: {"x": s["x"] * 2})
    sg.add_node("emit", lambda s: {"results": [s["x"] + 1]})
    sg.add_edge(lib.START, "double")
    sg.add_edge("double", "emit")
    sg.add_edge("emit", lib.END)
    sub = sg.compile()

    g = lib.StateGraph(Parent)
    g.add_node("spread", lambda s: {})
    g.add_node("worker", sub)
    g.add_node("join", lambda s: {"total": sum(s["results"])})
    g.add_edge(lib.START, "spread")
    g.add_conditional_edges(
        "spread", lambda s: [lib.Send("worker", {"x": i, "results": []}) for i in range(s["n"])]
    )
    g.add_edge("worker", "join")
    g.add_edge("join", lib.END)
    graph = g.compile(checkpointer=handle.saver)
    total = sum(2 * i + 1 for i in range(size))

    def run(thread_id: str) -> RunResult:
        t0 = time.perf_counter()
        out = graph.invoke({"n": size, "results": []}, _config(thread_id), durability=durability)
        seconds = time.perf_counter() - t0
        if out.get("total") != total or sorted(out["results"]) != [2 * i + 1 for i in range(size)]:
            raise WrongResult(f"unexpected final state {str(out)[:200]}")
        return RunResult({"subgraphs": (size, seconds)})

    return Prepared(run)


STORAGE_SAMPLES = 10
CONTEXT_BYTES = 4096
CONTEXT = ("You are a careful assistant. " * 200)[:CONTEXT_BYTES]


def storage_growth(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    """One thread grown to `size` checkpoints in `STORAGE_SAMPLES` invocations; after each
    one, the bytes the database holds for the run. The state: a CONTEXT_BYTES context set
    by the first input and never changed (a system prompt, retrieved documents), a
    counter, and a log that every step appends an entry to (a message list)."""
    g = lib.StateGraph(Growth)
    g.add_node("tick", lambda s: {"n": s["n"] + 1, "log": [f"entry {s['n']:06d} " + "x" * 40]})
    g.add_edge(lib.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < s["target"] else lib.END)
    graph = g.compile(checkpointer=handle.saver)
    # an invocation writes its input checkpoint, one after START's step (the thread's
    # first only) and one per tick
    per = max(1, size // STORAGE_SAMPLES - 1)

    def run(thread_id: str) -> RunResult:
        config = _config(thread_id)
        base = handle.stored_bytes()
        series: list[tuple[int, int]] = []
        seconds = 0.0
        for k in range(1, STORAGE_SAMPLES + 1):
            target = k * per
            inp = {"context": CONTEXT, "n": 0, "log": [], "target": target}
            if k > 1:
                inp = {"target": target}
            t0 = time.perf_counter()
            out = graph.invoke(inp, config, durability=durability)
            seconds += time.perf_counter() - t0
            if out["n"] != target or len(out["log"]) != target:
                raise WrongResult(f"unexpected final state {str(out)[:200]}")
            series.append((handle.checkpoint_count(thread_id), handle.stored_bytes() - base))
        return RunResult({"checkpoints": (series[-1][0], seconds)}, series)

    return Prepared(run)


# --- saver operations ------------------------------------------------------------------
@dataclass
class _SaverInputs:
    checkpoints: list[dict[str, Any]] = field(default_factory=list)
    new_versions: list[dict[str, Any]] = field(default_factory=list)


LIST_LIMIT = 10


def saver_ops(lib: Lib, handle: Any, size: int, durability: str) -> Prepared:
    """`size` calls each of put (one channel changed) and put_writes (three writes on the
    checkpoint just put), then of get_tuple (the thread's head) and list (the newest
    LIST_LIMIT checkpoints), on one thread."""
    saver = handle.saver
    messages = [{"role": "user", "content": f"message {i} " + "y" * 60} for i in range(10)]

    def inputs() -> _SaverInputs:
        out = _SaverInputs()
        counter_v = saver.get_next_version(None, None)
        messages_v = saver.get_next_version(None, None)
        for i in range(size):
            if i:
                counter_v = saver.get_next_version(counter_v, None)
            ck = {
                "v": 4,
                "id": str(lib.uuid6(clock_seq=i)),
                "ts": "2026-01-01T00:00:00+00:00",
                "channel_values": {"counter": i, "messages": messages},
                "channel_versions": {"counter": counter_v, "messages": messages_v},
                "versions_seen": {"node": {"counter": counter_v}},
                "updated_channels": ["counter"] if i else ["counter", "messages"],
            }
            out.checkpoints.append(ck)
            out.new_versions.append(
                {"counter": counter_v} if i else {"counter": counter_v, "messages": messages_v}
            )
        return out

    def run(thread_id: str) -> RunResult:
        data = inputs()
        writes = [
            [("a", i), ("b", "z" * 50), ("c", {"k": i})] for i in range(size)
        ]  # built before the timed loops, like the checkpoints
        task_ids = [str(lib.uuid6(clock_seq=10_000 + i)) for i in range(size)]
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        head = dict(config)
        # a step's pattern: put a checkpoint, then its tasks' writes on it (each call timed)
        clock = time.perf_counter
        t_put = t_writes = 0.0
        for i in range(size):
            meta = {"source": "loop", "step": i, "parents": {}}
            t0 = clock()
            head = saver.put(head, data.checkpoints[i], meta, data.new_versions[i])
            t1 = clock()
            saver.put_writes(head, writes[i], task_ids[i])
            t_writes += clock() - t1
            t_put += t1 - t0
        t0 = time.perf_counter()
        for _ in range(size):
            tup = saver.get_tuple(config)
        t_get = time.perf_counter() - t0
        if tup is None or tup.checkpoint["channel_values"].get("counter") != size - 1:
            raise WrongResult("get_tuple did not return the head")
        t0 = time.perf_counter()
        for _ in range(size):
            got = list(saver.list(config, limit=LIST_LIMIT))
        t_list = time.perf_counter() - t0
        if len(got) != min(LIST_LIMIT, size):
            raise WrongResult(f"list returned {len(got)} checkpoints")
        return RunResult(
            {
                "put": (size, t_put),
                "put_writes": (size, t_writes),
                "get_tuple": (size, t_get),
                "list": (size, t_list),
            }
        )

    return Prepared(run)


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload(
            "saver-ops",
            "saver put / put_writes / get_tuple / list",
            "op",
            ("put", "put_writes", "get_tuple", "list"),
            100,
            2000,
            saver_ops,
            "ops per call kind",
        ),
        Workload("chain", "a chain of N nodes", "step", ("steps",), 50, 100, chain, "nodes"),
        Workload("loop", "one node looping N times", "step", ("steps",), 200, 1000, loop, "steps"),
        Workload("fanout", "fan-out to N nodes", "task", ("tasks",), 100, 1000, fanout, "nodes"),
        Workload(
            "wide-state", "N-key state, N nodes", "step", ("steps",), 50, 100, wide_state, "keys"
        ),
        Workload(
            "large-graph",
            f"{LARGE_GRAPH_VISITS} hub visits in an N-node graph vs a small one",
            "step",
            (LARGE, SMALL),
            1000,
            1000,
            large_graph,
            "nodes",
            2,
        ),
        Workload(
            "agent",
            "ReAct loop, fake model, N tool calls",
            "step",
            ("steps",),
            20,
            50,
            agent,
            "turns",
        ),
        Workload(
            "subgraph-fanout",
            "Send to a 2-node subgraph N times",
            "subgraph",
            ("subgraphs",),
            20,
            100,
            subgraph_fanout,
            "subgraphs",
        ),
        Workload(
            "storage-growth",
            "bytes stored against history length",
            "checkpoint",
            ("checkpoints",),
            200,
            1000,
            storage_growth,
            "checkpoints",
            STORAGE_SAMPLES * 2,
        ),
    )
}
