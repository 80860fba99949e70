"""`stream_events(version="v3")` / `astream_events(version="v3")`: the same graphs on the
reference and on warpgraph, comparing every observable of the run stream: the raw protocol
events (method, namespace, data, interrupts; `seq` checked increasing, timestamps dropped),
the projections, `output` / `interrupted` / `interrupts`, errors, and the subgraph handles
(path, name, trigger id, status, error, their own values and grandchildren).

One trace function serves both lanes: `aio` picks `stream_events` + `for` or
`astream_events` + `async for`.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from .libs import LIBS, Lib
from .normalize import Normalizer, first_difference

pytestmark = pytest.mark.filterwarnings("ignore::Warning")


class S(TypedDict):
    value: str
    items: Annotated[list[str], operator.add]


INPUT = {"value": "x", "items": []}


def _chain(lib: Lib, *names: str, fail: str | None = None, pause: str | None = None):
    g = lib.StateGraph(S)
    prev = lib.START
    for name in names:

        def node(state: S, _name: str = name) -> dict:
            if _name == fail:
                raise ValueError(f"{_name} exploded")
            if _name == pause:
                answer = lib.interrupt(f"approve {_name}?")
                return {"value": state["value"] + f"_{answer}", "items": [_name]}
            return {"value": state["value"] + _name, "items": [_name]}

        g.add_node(name, node)
        g.add_edge(prev, name)
        prev = name
    g.add_edge(prev, lib.END)
    return g


def _nest(lib: Lib, child: Any, *, before: str | None = None, name: str = "child"):
    g = lib.StateGraph(S)
    g.add_node(name, child)
    if before:
        g.add_node(before, lambda s: {"items": [before]})
        g.add_edge(lib.START, before)
        g.add_edge(before, name)
    else:
        g.add_edge(lib.START, name)
    g.add_edge(name, lib.END)
    return g


def _writer_graph(lib: Lib):
    def node(state: S) -> dict:
        write = lib.get_stream_writer()
        write({"step": 1})
        write("two")
        return {"items": ["w"]}

    g = lib.StateGraph(S)
    g.add_node("w", node)
    g.add_edge(lib.START, "w")
    g.add_edge("w", lib.END)
    return g


@dataclass
class Case:
    build: Callable[[Lib], Any]  # lib -> compiled graph
    calls: list = field(default_factory=lambda: [INPUT])  # inputs (a callable: lib -> input)
    config: dict | None = None
    transformers: tuple[str, ...] = ()  # names in lib.stream.transformers
    drill: bool = False  # walk run.subgraphs (handles, their values, grandchildren)


def _saver(lib: Lib) -> Any:
    return lib.InMemorySaver()


CASES: dict[str, Case] = {
    "chain": Case(lambda lib: _chain(lib, "a", "b").compile()),
    "nested": Case(lambda lib: _nest(lib, _chain(lib, "p").compile(), before="r").compile()),
    "nested_drill": Case(
        lambda lib: _nest(lib, _chain(lib, "p").compile(), before="r").compile(), drill=True
    ),
    "two_levels_drill": Case(
        lambda lib: _nest(
            lib, _nest(lib, _chain(lib, "i").compile(), name="in").compile()
        ).compile(),
        drill=True,
    ),
    "siblings_drill": Case(lambda lib: _siblings(lib).compile(), drill=True),
    "root_error": Case(lambda lib: _chain(lib, "a", "b", fail="b").compile()),
    "child_error_drill": Case(
        lambda lib: _nest(lib, _chain(lib, "f", fail="f").compile()).compile(), drill=True
    ),
    "interrupt_resume": Case(
        lambda lib: _chain(lib, "a", "b", pause="b").compile(checkpointer=_saver(lib)),
        calls=[INPUT, lambda lib: lib.Command(resume="ok")],
        config={"configurable": {"thread_id": "t1"}},
    ),
    "child_interrupt_drill": Case(
        lambda lib: _nest(lib, _chain(lib, "q", pause="q").compile()).compile(
            checkpointer=_saver(lib)
        ),
        config={"configurable": {"thread_id": "t2"}},
        drill=True,
    ),
    "data_transformers": Case(
        lambda lib: _writer_graph(lib).compile(checkpointer=_saver(lib)),
        config={"configurable": {"thread_id": "t3"}},
        transformers=(
            "UpdatesTransformer",
            "CustomTransformer",
            "TasksTransformer",
            "DebugTransformer",
            "CheckpointsTransformer",
        ),
    ),
    "compiled_transformers": Case(
        lambda lib: _nest(lib, _writer_graph(lib).compile()).compile(
            transformers=[lib.stream.transformers.CustomTransformer]
        ),
        drill=True,
    ),
    "scoped_call": Case(
        lambda lib: _nest(lib, _chain(lib, "i").compile()).compile(),
        config={"configurable": {"checkpoint_ns": "outer:abc"}},
    ),
    "pydantic_state": Case(lambda lib: _pydantic(lib).compile()),
}


def _siblings(lib: Lib):
    g = lib.StateGraph(S)
    g.add_node("one", _chain(lib, "1").compile())
    g.add_node("two", _chain(lib, "2").compile())
    g.add_edge(lib.START, "one")
    g.add_edge("one", "two")
    g.add_edge("two", lib.END)
    return g


def _pydantic(lib: Lib):
    from pydantic import BaseModel

    class P(BaseModel):
        value: str
        items: Annotated[list[str], operator.add]

    g = lib.StateGraph(P)
    g.add_node("a", lambda s: {"value": s.value + "a", "items": ["a"]})
    g.add_edge(lib.START, "a")
    g.add_edge("a", lib.END)
    return g


# ---------------------------------------------------------------- one trace, both lanes
async def _drain(channel: Any, aio: bool) -> list:
    if aio:
        return [item async for item in channel]
    return list(channel)


async def _result(run: Any, name: str, aio: bool) -> Any:
    if aio:
        return await getattr(run, name)()
    return getattr(run, name)


def _event(e: dict) -> dict:
    params = e["params"]
    out = {"method": e["method"], "ns": params["namespace"], "data": params["data"]}
    if "interrupts" in params:
        out["interrupts"] = params["interrupts"]
    return out


async def _handles(run: Any, aio: bool, out: list) -> list:
    """Walk `run.subgraphs` into `out` (kept when the walk raises), drilling into each
    handle before the run moves on."""
    cursor = run.subgraphs.__aiter__() if aio else iter(run.subgraphs)
    while True:
        try:
            handle = await cursor.__anext__() if aio else next(cursor)
        except (StopIteration, StopAsyncIteration):
            break
        values_cursor = aiter(handle.values) if aio else iter(handle.values)
        entry: dict[str, Any] = {
            "path": handle.path,
            "graph_name": handle.graph_name,
            "trigger": handle.trigger_call_id,
            "children": [],
        }
        out.append(entry)
        try:
            await _handles(handle, aio, entry["children"])
        except Exception as exc:  # noqa: BLE001 - a failed subgraph's projections raise
            entry["children_error"] = exc
        try:
            entry["values"] = await _drain(values_cursor, aio)
        except Exception as exc:  # noqa: BLE001
            entry["values_error"] = exc
        entry["status"], entry["error"] = handle.status, handle.error
    return out


async def trace(lib: Lib, case: Case, aio: bool) -> list:
    graph = case.build(lib)
    factories = [getattr(lib.stream.transformers, t) for t in case.transformers]
    out: list = []
    for call in case.calls:
        inp = call(lib) if callable(call) else call
        kwargs: dict[str, Any] = {"version": "v3"}
        if factories:
            kwargs["transformers"] = factories
        if aio:
            run = await graph.astream_events(inp, case.config, **kwargs)
        else:
            run = graph.stream_events(inp, case.config, **kwargs)
        record: dict[str, Any] = {"extensions": sorted(run.extensions)}
        projections = [k for k in sorted(run.extensions) if k not in ("messages", "subgraphs")]
        cursors = {k: aiter(run.extensions[k]) if aio else iter(run.extensions[k])
                   for k in projections}  # fmt: skip
        log = aiter(run) if aio else iter(run)  # subscribed now: sees every event
        try:
            if case.drill:
                await _handles(run, aio, record.setdefault("handles", []))
            events = await _drain(log, aio)
            seqs = [e["seq"] for e in events]
            assert seqs == sorted(set(seqs)), seqs
            record["events"] = [_event(e) for e in events]
        except Exception as exc:  # noqa: BLE001 - the run's error is part of the trace
            record["error"] = exc
        for key, cursor in cursors.items():
            try:
                record[key] = await _drain(cursor, aio)
            except Exception as exc:  # noqa: BLE001
                record[key] = {"raised": exc}
        for name in ("output", "interrupted", "interrupts"):
            try:
                record[name] = await _result(run, name, aio)
            except Exception as exc:  # noqa: BLE001
                record[name] = {"raised": exc}
        out.append(record)
    return out


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", sorted(CASES))
async def test_v3_run_stream_matches_reference(name: str, aio: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Normalizer()(await trace(LIBS["langgraph"], CASES[name], aio))
        got = Normalizer()(await trace(LIBS["warpgraph"], CASES[name], aio))
    assert got == ref, first_difference(ref, got)
    assert ref  # the trace holds at least one run


# ---------------------------------------------------------------- v2 typed stream parts
def _typed_graph(lib: Lib, kind: str, saver: bool):
    if kind == "pydantic":
        from pydantic import BaseModel

        class State(BaseModel):
            value: str
            items: Annotated[list[str], operator.add]
    else:

        @dataclass
        class State:  # type: ignore[no-redef]
            value: str
            items: Annotated[list[str], operator.add]

    def pause(state: Any) -> dict:
        return {"value": state.value + str(lib.interrupt("why?")), "items": ["p"]}

    g = lib.StateGraph(State)
    g.add_node("a", lambda s: {"value": s.value + "a", "items": ["a"]})
    g.add_node("p", pause)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "p")
    g.add_edge("p", lib.END)
    return g.compile(checkpointer=lib.InMemorySaver() if saver else None)


@pytest.mark.parametrize("kind", ["pydantic", "dataclass"])
@pytest.mark.parametrize("mode", ["values", "checkpoints", "debug", "updates", "invoke"])
def test_v2_parts_coerce_state_like_reference(kind: str, mode: str) -> None:
    """version="v2" parts: values (and checkpoint values past the input checkpoint) are
    instances of the state schema; interrupts sit in their own field; invoke returns a
    GraphOutput whose value is coerced."""
    traces = []
    for lib in (LIBS["langgraph"], LIBS["warpgraph"]):
        graph = _typed_graph(lib, kind, saver=True)
        config = {"configurable": {"thread_id": f"{kind}-{mode}"}}
        if mode == "invoke":
            out = graph.invoke({"value": "x", "items": []}, config, version="v2")
            traces.append(Normalizer()([out.value, out.interrupts, type(out).__name__]))
        else:
            parts = list(
                graph.stream({"value": "x", "items": []}, config, stream_mode=mode, version="v2")
            )
            types = [type(p["data"]).__name__ for p in parts]
            traces.append(Normalizer()([parts, types]))
    assert traces[1] == traces[0], first_difference(traces[0], traces[1])
    assert traces[0][0]


# ---------------------------------------------------------------- synthetic event scripts
def _tasks(ns: list[str], task_id: str, *, result: bool = False, **extra: Any) -> tuple:
    data: dict[str, Any] = {"id": task_id, "name": task_id.split("-")[0]}
    if result:
        data.update(error=extra.pop("error", None), interrupts=extra.pop("interrupts", []))
        data["result"] = {}
    else:
        data.update(input=extra.pop("input", None), triggers=[])
        if "metadata" in extra:
            data["metadata"] = extra.pop("metadata")
    return ("tasks", ns, data)


SCRIPTS: dict[str, list[tuple]] = {
    "child_and_grandchild": [
        ("values", [], {"v": 0}),
        _tasks(["agent:a1"], "t1"),
        ("values", ["agent:a1"], {"v": 1}),
        _tasks(["agent:a1", "tool:b2"], "t2"),
        ("custom", ["agent:a1", "tool:b2"], "deep"),
        ("updates", ["agent:a1"], {"n": {"v": 2}}),
        _tasks(["agent:a1"], "b2", result=True),
        _tasks([], "a1", result=True, error="boom"),
        ("values", [], {"v": 3}),
    ],
    "interrupted_child": [
        _tasks(["sub:s1"], "x1"),
        ("values", ["sub:s1"], {"k": 1}),
        _tasks([], "s1", result=True, interrupts=[{"value": "pause"}], error="ignored"),
        ("values", [], {"k": 1}),
    ],
    "subagent_cause": [
        _tasks(
            [],
            "tools-1",
            metadata={"lc_agent_name": "boss"},
            input={"tool_call": {"id": "call_9", "name": "ask", "args": {}}},
        ),
        _tasks(["tools:tools-1"], "model-1", metadata={"lc_agent_name": "helper"}),
        _tasks(["plain:tools-1"], "n-1", metadata={"lc_agent_name": None}),
        _tasks([], "tools-1", result=True),
    ],
    "left_open": [_tasks(["late:z9"], "q1"), ("checkpoints", [], {"values": {}})],
}


def _mux_trace(lib: Lib, script: list[tuple], aio: bool, end: str) -> Any:
    import asyncio

    from_lib = lib.stream.transformers
    mux_cls = lib.module("stream._mux").StreamMux
    natives = ["ValuesTransformer", "MessagesTransformer", "LifecycleTransformer"]
    extra = ["SubgraphTransformer", "UpdatesTransformer", "CustomTransformer"]
    extra += ["TasksTransformer", "CheckpointsTransformer"]
    mux = mux_cls(factories=[getattr(from_lib, n) for n in natives + extra], is_async=aio)
    mux._events._subscribed = True
    for channel in mux.extensions.values():
        channel._subscribed = True
    handles: list = []

    def arm_new_handles() -> None:
        for handle in mux.transformer_by_key("subgraphs")._handles.values():
            if handle not in handles:
                handles.append(handle)
                handle._mux._events._subscribed = True
                for channel in handle._mux.extensions.values():
                    channel._subscribed = True

    async def run() -> None:
        for method, ns, data in script:
            event = {
                "type": "event",
                "method": method,
                "params": {"namespace": ns, "timestamp": 0, "data": data},
            }
            if aio:
                await mux.apush(event)
            else:
                mux.push(event)
            arm_new_handles()
        err = RuntimeError("run died") if end == "fail" else None
        if aio:
            await (mux.afail(err) if err else mux.aclose())
        else:
            mux.fail(err) if err else mux.close()

    asyncio.run(run())

    def items(channel: Any) -> list:
        return [item for _stamp, item in channel._items]

    def view(m: Any) -> dict:
        out: dict[str, Any] = {
            "log": [(e["method"], e["params"]["data"]) for e in items(m._events)]
        }
        out["seq"] = [e.get("seq") for e in items(m._events)]
        for key, channel in m.extensions.items():
            if key not in ("subgraphs", "messages"):
                out[key] = items(channel)
        out["closed"] = (m._events._closed, repr(m._events._error))
        return out

    return {
        "root": view(mux),
        "handles": [
            {"path": h.path, "name": h.graph_name, "status": h.status, "error": h.error,
             "mux": view(h._mux)}
            for h in handles
        ],
    }  # fmt: skip


@pytest.mark.parametrize("end", ["close", "fail"])
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_mux_event_scripts_match_reference(script: str, aio: bool, end: str) -> None:
    """The built-in transformers on hand-made event sequences: main logs (with seq), every
    projection's buffer, subgraph handles and their mini-muxes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = _mux_trace(LIBS["langgraph"], SCRIPTS[script], aio, end)
        got = _mux_trace(LIBS["warpgraph"], SCRIPTS[script], aio, end)
    assert got == ref, first_difference(ref, got)
    assert ref["root"]["log"]


def _messages_script() -> list[tuple]:
    from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage

    def meta(run: str, node: str = "llm") -> dict:
        return {"langgraph_node": node, "run_id": run}

    def life(run: str, text: str, role: str = "ai") -> list[tuple]:
        return [
            ({"event": "message-start", "role": role, "message_id": f"m-{run}"}, meta(run)),
            ({"event": "content-block-start", "index": 0,
              "content_block": {"type": "text", "text": ""}}, meta(run)),
            ({"event": "content-block-delta", "index": 0,
              "delta": {"type": "text-delta", "text": text}}, meta(run)),
            ({"event": "content-block-finish", "index": 0,
              "content_block": {"type": "text", "text": text}}, meta(run)),
            ({"event": "message-finish", "reason": "stop"}, meta(run)),
        ]  # fmt: skip

    a, b, tool = life("r1", "alpha"), life("r2", "beta"), life("r3", "[]", role="tool")
    mixed = [x for pair in zip(a, b) for x in pair]
    return [
        *mixed,
        *tool,
        ({"event": "content-block-delta", "index": 0, "delta": {}}, meta("orphan")),
        (AIMessage(content="whole", id="w-1"), {"langgraph_node": "node"}),
        (AIMessageChunk(content="legacy", id="c-1"), {"langgraph_node": "node"}),
        (ToolMessage(content="t", id="t-1", tool_call_id="call"), {"langgraph_node": "tools"}),
    ]


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_messages_transformer_matches_reference(aio: bool) -> None:
    """Protocol events routed by run id (interleaved calls, tool roles skipped, orphans
    dropped), whole messages replayed, legacy chunks and tool messages ignored."""
    import asyncio

    def trace(lib: Lib) -> list:
        mux = lib.module("stream._mux").StreamMux(
            factories=[lib.stream.transformers.MessagesTransformer], is_async=aio
        )
        log = mux.extensions["messages"]
        log._subscribed = True
        if not aio:
            mux.bind_pump(lambda: False)
        for payload, meta in _messages_script():
            mux.push({"type": "event", "method": "messages",
                      "params": {"namespace": [], "timestamp": 0, "data": (payload, meta)}})  # fmt: skip
        mux.close()
        streams = [s for _stamp, s in log._items]

        async def outputs() -> list:
            return [(await s.output).text for s in streams]

        texts = asyncio.run(outputs()) if aio else [s.output.text for s in streams]
        return [type(s).__name__ for s in streams] + [
            (s.message_id, s.node, s.done, [e["event"] for e in s._events]) for s in streams
        ] + texts  # fmt: skip

    ref, got = trace(LIBS["langgraph"]), trace(LIBS["warpgraph"])
    assert got == ref, first_difference(ref, got)
    assert len(ref) > 3


# ---------------------------------------------------------------- streaming while a step runs
class _Count(TypedDict):
    count: int


def _looping_child_caller(lib: Lib, runs: list, depth: int = 1) -> Any:
    """A node awaiting a nested graph that loops 10 times (sleeping 20 ms a turn), wrapped
    `depth` times."""
    import asyncio

    async def step(state: _Count) -> dict:
        runs.append(state["count"])
        await asyncio.sleep(0.02)
        return {"count": state["count"] + 1}

    graph = (
        lib.StateGraph(_Count)
        .add_node("step", step)
        .add_edge(lib.START, "step")
        .add_conditional_edges("step", lambda s: lib.END if s["count"] >= 10 else "step")
        .compile()
    )
    for _ in range(depth):

        async def caller(state: _Count, _child: Any = graph) -> dict:
            return await _child.ainvoke({"count": 0})

        graph = (
            lib.StateGraph(_Count)
            .add_node("caller", caller)
            .add_edge(lib.START, "caller")
            .compile()
        )
    return graph


@pytest.mark.parametrize("how", ["astream", "v3"])
@pytest.mark.parametrize("depth", [1, 3])
async def test_stopping_mid_step_cancels_nested_runs_like_reference(how: str, depth: int) -> None:
    """Chunks of a nested run reach the consumer while the outer step still runs; stopping
    there cancels the running nested graphs (no turn starts after the stop)."""
    import asyncio

    seen = {}
    for lib in (LIBS["langgraph"], LIBS["warpgraph"]):
        runs: list = []
        graph = _looping_child_caller(lib, runs, depth)
        got = []
        if how == "astream":
            parts = graph.astream({"count": 0}, stream_mode="values", subgraphs=True)
            async for ns, value in parts:
                got.append((len(ns), value))
                if ns and value["count"] >= 2:
                    break
            await parts.aclose()
        else:
            run = await graph.astream_events({"count": 0}, version="v3")
            async for event in run:
                params = event["params"]
                got.append((len(params["namespace"]), params["data"]))
                if params["namespace"] and params["data"]["count"] >= 2:
                    break
            await run.abort()
        at_stop = list(runs)
        await asyncio.sleep(0.1)
        seen[lib.name] = (Normalizer()(got), at_stop, runs)
    ref, ours = seen["langgraph"], seen["warpgraph"]
    assert ours[0] == ref[0], first_difference(ref[0], ours[0])
    for _got, at_stop, runs in (ref, ours):
        assert runs == at_stop and 2 <= len(at_stop) < 10
