"""langchain-core interop, differential: the same graphs on langgraph and on warpgraph, with
callbacks, event streams, run logs, the "messages" stream mode, graph lifecycle handlers
and trace policies; run ids, timestamps and checkpoint / task ids are normalised by order of
first appearance. Plus warpgraph-only checks: Runnable composition and a child interpreter
where langchain-core cannot be imported."""

from __future__ import annotations

import asyncio
import importlib
import operator
import textwrap
from types import SimpleNamespace
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableLambda
from typing_extensions import TypedDict

from .normalize import Normalizer, first_difference

LIBS = ("langgraph", "warpgraph")


def lib(name: str) -> SimpleNamespace:
    graph = importlib.import_module(f"{name}.graph")
    types = importlib.import_module(f"{name}.types")
    return SimpleNamespace(
        name=name,
        StateGraph=graph.StateGraph,
        START=graph.START,
        END=graph.END,
        MessagesState=graph.MessagesState,
        InMemorySaver=importlib.import_module(f"{name}.checkpoint.memory").InMemorySaver,
        Command=types.Command,
        interrupt=types.interrupt,
        TracePolicy=types.TracePolicy,
        callbacks=importlib.import_module(f"{name}.callbacks"),
        TAG_NOSTREAM=importlib.import_module(f"{name}.constants").TAG_NOSTREAM,
    )


def same(build: Any, run: Any) -> Any:
    """Run `run(build(lib))` on both libraries; the normalised results must be equal."""
    out = {}
    for name in LIBS:
        out[name] = Normalizer()(run(build(lib(name))))
    diff = first_difference(out["langgraph"], out["warpgraph"])
    assert diff is None, diff
    return out["warpgraph"]


_MD_KEYS = (
    "langgraph_step",
    "langgraph_node",
    "langgraph_triggers",
    "langgraph_path",
    "langgraph_checkpoint_ns",
    "checkpoint_ns",
    "thread_id",
    "ls_integration",
)


def _md(metadata: dict | None) -> dict:
    return {k: v for k, v in (metadata or {}).items() if k in _MD_KEYS}


class Recorder(BaseCallbackHandler):
    """Every chain / chat-model callback as (event, name, parent, tags, metadata, payload)."""

    run_inline = True

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kw):
        md = _md(kw.get("metadata"))
        self.events.append(
            ("start", kw.get("name"), str(run_id), str(parent_run_id), kw.get("tags"), md, inputs)
        )

    def on_chain_end(self, outputs, *, run_id, **kw):
        self.events.append(("end", str(run_id), outputs))

    def on_chain_error(self, error, *, run_id, **kw):
        self.events.append(("error", str(run_id), type(error).__name__))

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, **kw):
        self.events.append(("chat", str(run_id), str(parent_run_id), kw.get("tags")))


# ---------------------------------------------------------------- graphs


class State(TypedDict):
    value: int
    log: Annotated[list, operator.add]


def chain_graph(lg: SimpleNamespace) -> Any:
    """Two nodes, a conditional edge and a compiled subgraph node."""
    sub = lg.StateGraph(State)
    sub.add_node("inner", lambda s: {"value": s["value"] * 10, "log": ["inner"]})
    sub.add_edge(lg.START, "inner")
    subgraph = sub.compile()

    def first(s: State) -> dict:
        return {"value": s["value"] + 1, "log": ["first"]}

    def route(s: State) -> str:
        return "sub" if s["value"] < 5 else lg.END

    b = lg.StateGraph(State)
    b.add_node("first", first, metadata={"kind": "plain"})
    b.add_node("sub", subgraph)
    b.add_edge(lg.START, "first")
    b.add_conditional_edges("first", route, ["sub", lg.END])
    b.add_edge("sub", lg.END)
    return b.compile()


def failing_graph(lg: SimpleNamespace) -> Any:
    def boom(s: State) -> dict:
        raise ValueError("boom")

    b = lg.StateGraph(State)
    b.add_node("boom", boom)
    b.add_edge(lg.START, "boom")
    return b.compile()


def _callbacks_run(aio: bool) -> Any:
    def run(graph: Any) -> Any:
        rec = Recorder()
        config = {"callbacks": [rec], "tags": ["t"], "metadata": {"m": 1}}
        if aio:
            out = asyncio.run(graph.ainvoke({"value": 1, "log": []}, config))
        else:
            out = graph.invoke({"value": 1, "log": []}, config)
        return out, rec.events

    return run


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_callback_runs_per_graph_node_and_step(aio: bool) -> None:
    events = same(chain_graph, _callbacks_run(aio))[1]
    names = [e[1] for e in events if e[0] == "start"]
    assert names[0] == "LangGraph" and "first" in names and "inner" in names


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_callback_error_closes_runs(aio: bool) -> None:
    def run(graph: Any) -> Any:
        rec = Recorder()
        try:
            if aio:
                asyncio.run(graph.ainvoke({"value": 1, "log": []}, {"callbacks": [rec]}))
            else:
                graph.invoke({"value": 1, "log": []}, {"callbacks": [rec]})
        except ValueError as e:
            return str(e), rec.events
        raise AssertionError("no error")

    events = same(failing_graph, run)[1]
    assert [e[0] for e in events].count("error") >= 2  # the node's and the graph's


def test_stream_with_callbacks_and_run_name() -> None:
    def run(graph: Any) -> Any:
        rec = Recorder()
        chunks = list(
            graph.stream(
                {"value": 1, "log": []},
                {"callbacks": [rec], "run_name": "outer"},
                stream_mode="updates",
            )
        )
        return chunks, rec.events

    same(chain_graph, run)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_astream_events(version: str) -> None:
    def run(graph: Any) -> Any:
        async def collect() -> list:
            out = []
            async for e in graph.astream_events({"value": 1, "log": []}, version=version):
                out.append(
                    (e["event"], e["name"], e.get("tags"), _md(e.get("metadata")), e["data"])
                )
            return out

        return asyncio.run(collect())

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events = same(chain_graph, run)
    assert events[0][0] == "on_chain_start" and events[-1][0] == "on_chain_end"


def test_stream_events_v1_v2_are_async_only() -> None:
    def run(graph: Any) -> Any:
        try:
            graph.stream_events({"value": 1, "log": []}, version="v2")
        except NotImplementedError as e:
            return str(e)
        return "no error"

    same(chain_graph, run)


def test_astream_log_paths_and_outputs() -> None:
    import warnings

    def run(graph: Any) -> Any:
        async def collect() -> list:
            ops = []
            async for patch in graph.astream_log({"value": 1, "log": []}):
                for op in patch.ops:
                    value = op.get("value")
                    if isinstance(value, dict) and "start_time" in value:
                        value = {k: value[k] for k in ("name", "type", "tags")}
                    ops.append((op["op"], op["path"], value))
            return ops

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return asyncio.run(collect())

    same(chain_graph, run)


# ---------------------------------------------------------------- messages stream mode


def chat_graph(lg: SimpleNamespace, *, nostream: bool = False) -> Any:
    """A node streaming a chat model's tokens, one returning a message of its input, one
    returning a fresh message; a subgraph node calling the model too."""

    def model() -> Any:
        return GenericFakeChatModel(messages=iter([AIMessage("hello big world", id="ai-1")]))

    def call_model(state: Any) -> dict:
        m = model()
        if nostream:
            m = m.with_config(tags=[lg.TAG_NOSTREAM])
        return {"messages": [m.invoke(state["messages"])]}

    def echo_input(state: Any) -> dict:
        return {"messages": [state["messages"][0]]}  # already in the state: not streamed

    def reply(state: Any) -> dict:
        return {"messages": [AIMessage("done", id="ai-2")]}

    sub = lg.StateGraph(lg.MessagesState)
    sub.add_node("sub_model", call_model)
    sub.add_edge(lg.START, "sub_model")

    b = lg.StateGraph(lg.MessagesState)
    b.add_node("call_model", call_model)
    b.add_node("echo_input", echo_input)
    b.add_node("reply", reply)
    b.add_node("sub", sub.compile())
    b.add_edge(lg.START, "call_model")
    b.add_edge("call_model", "echo_input")
    b.add_edge("echo_input", "reply")
    b.add_edge("reply", "sub")
    return b.compile()


def _messages_run(aio: bool, subgraphs: bool) -> Any:
    def run(graph: Any) -> Any:
        inputs = {"messages": [HumanMessage("hi", id="h-1")]}
        if aio:

            async def collect() -> list:
                return [
                    c
                    async for c in graph.astream(
                        inputs, stream_mode="messages", subgraphs=subgraphs
                    )
                ]

            chunks = asyncio.run(collect())
        else:
            chunks = list(graph.stream(inputs, stream_mode="messages", subgraphs=subgraphs))
        out = []
        for c in chunks:
            ns, (msg, md) = c if subgraphs else ((), c)
            out.append((ns, type(msg).__name__, msg.content, msg.id, _md(md), md.get("tags")))
        return out

    return run


@pytest.mark.parametrize("subgraphs", [False, True], ids=["root", "subgraphs"])
@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_stream_mode_messages(aio: bool, subgraphs: bool) -> None:
    chunks = same(chat_graph, _messages_run(aio, subgraphs))
    kinds = {c[1] for c in chunks}
    assert "AIMessageChunk" in kinds  # tokens streamed
    assert not any(c[3] == "<id0>" and c[1] == "HumanMessage" for c in chunks[1:])


def test_stream_mode_messages_nostream_tag() -> None:
    chunks = same(lambda lg: chat_graph(lg, nostream=True), _messages_run(False, False))
    assert all(c[1] != "AIMessageChunk" for c in chunks)


def test_stream_mode_messages_with_other_modes_and_metadata() -> None:
    def run(graph: Any) -> Any:
        config = {"configurable": {"thread_id": "t1", "user": "u"}, "tags": ["outer"]}
        graph = graph.with_config(checkpointer=None) if False else graph
        out = []
        for mode, chunk in graph.stream(
            {"messages": [HumanMessage("hi", id="h-1")]},
            config,
            stream_mode=["messages", "updates"],
        ):
            if mode == "messages":
                msg, md = chunk
                out.append((mode, msg.content, md.get("user"), md.get("tags")))
            else:
                out.append((mode, list(chunk)))
        return out

    same(chat_graph, run)


# ---------------------------------------------------------------- lifecycle callbacks


def interrupt_graph(lg: SimpleNamespace) -> Any:
    class S(TypedDict):
        answer: Any

    def ask(state: S) -> dict:
        return {"answer": lg.interrupt("question")}

    b = lg.StateGraph(S)
    b.add_node("ask", ask)
    b.add_edge(lg.START, "ask")
    graph = b.compile(checkpointer=lg.InMemorySaver())
    graph._lc_lib = lg
    return graph


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_graph_lifecycle_events(aio: bool) -> None:
    def run(graph: Any) -> Any:
        lg = graph._lc_lib
        seen: list = []

        class Handler(lg.callbacks.GraphCallbackHandler):
            def on_interrupt(self, event: Any) -> None:
                seen.append(("interrupt", event.status, event.checkpoint_ns, event.interrupts))

            def on_resume(self, event: Any) -> None:
                seen.append(("resume", event.status, event.checkpoint_ns))

        config = {"configurable": {"thread_id": "1"}, "callbacks": [Handler()]}

        async def both() -> tuple:
            return (
                await graph.ainvoke({"answer": None}, config),
                await graph.ainvoke(lg.Command(resume="yes"), config),
            )

        if aio:
            results = asyncio.run(both())
        else:
            results = (
                graph.invoke({"answer": None}, config),
                graph.invoke(lg.Command(resume="yes"), config),
            )
        return results, seen

    _results, seen = same(interrupt_graph, run)
    assert [s[0] for s in seen] == ["interrupt", "resume"]


def test_graph_lifecycle_handler_error_is_swallowed_unless_raise_error() -> None:
    def run(graph: Any) -> Any:
        lg = graph._lc_lib

        class Raising(lg.callbacks.GraphCallbackHandler):
            raise_error = True

            def on_interrupt(self, event: Any) -> None:
                raise KeyError("handler")

        class Quiet(Raising):
            raise_error = False

        out = []
        for i, h in enumerate((Quiet(), Raising())):
            config = {"configurable": {"thread_id": f"x{i}"}, "callbacks": [h]}
            try:
                out.append(sorted(graph.invoke({"answer": None}, config)))
            except KeyError as e:
                out.append(("raised", str(e)))
        return out

    assert same(interrupt_graph, run)[1][0] == "raised"


# ---------------------------------------------------------------- trace policies


def traced_graph(lg: SimpleNamespace) -> Any:
    class S(TypedDict):
        value: int

    policy = lg.TracePolicy(
        process_inputs=lambda v: {"in": "scrubbed"}, process_outputs=lambda v: {"out": "x"}
    )
    b = lg.StateGraph(S)
    b.add_node("n", lambda s: {"value": s["value"] + 1}, trace_policy=policy)
    b.add_edge(lg.START, "n")
    return b.compile()


def test_trace_policy_changes_what_tracers_record_only() -> None:
    from langchain_core.tracers.base import BaseTracer

    class Tracer(BaseTracer):
        def __init__(self) -> None:
            super().__init__()
            self.runs: list = []

        def _persist_run(self, run: Any) -> None:
            pass

        def _end_trace(self, run: Any) -> None:
            self.runs.append((run.name, run.inputs, run.outputs))
            super()._end_trace(run)

    def run(graph: Any) -> Any:
        tracer, rec = Tracer(), Recorder()
        out = graph.invoke({"value": 1}, {"callbacks": [tracer, rec]})
        return out, tracer.runs, [e for e in rec.events if e[0] != "chat"]

    out, runs, _events = same(traced_graph, run)
    assert out == {"value": 2}
    assert ["n", {"in": "scrubbed"}, {"out": "x"}] in [list(r) for r in runs]


# ---------------------------------------------------------------- warpgraph only


def test_runnables_and_graphs_compose_with_langchain() -> None:
    from warpgraph._internal._runnable import RunnableCallable, RunnableSeq

    wg = lib("warpgraph")
    graph = chain_graph(wg)
    assert isinstance(graph, Runnable)
    assert isinstance(RunnableCallable(lambda x: x), Runnable)
    chain = RunnableLambda(lambda v: {"value": v, "log": []}) | graph
    assert chain.invoke(7)["value"] == 8
    assert graph.batch([{"value": 7, "log": []}, {"value": 8, "log": []}])[1]["value"] == 9
    prompt = RunnableCallable(lambda x: x + 1, name="Prompt")
    composed = prompt | RunnableLambda(lambda x: x * 2)
    assert composed.invoke(1) == 4
    assert RunnableSeq(prompt, RunnableLambda(lambda x: x * 3)).invoke(1) == 6
    assert graph.with_config(tags=["x"]).invoke({"value": 9, "log": []})["value"] == 10


def test_without_langchain_core_nothing_is_imported() -> None:
    from tests._subproc import run_python

    code = textwrap.dedent(
        """
        import sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "langchain_core" or name.startswith("langchain_core."):
                    raise ImportError("blocked: " + name)

        sys.meta_path.insert(0, Block())
        from typing import TypedDict
        from warpgraph.graph import StateGraph, START
        from warpgraph._internal._runnable import RunnableCallable

        class S(TypedDict):
            v: int

        g = StateGraph(S).add_node("n", lambda s: {"v": s["v"] + 1}).add_edge(START, "n")
        g = g.compile()
        assert g.invoke({"v": 1}) == {"v": 2}
        assert list(g.stream({"v": 1}, stream_mode="messages")) == []
        assert not hasattr(RunnableCallable, "batch")
        assert not any(m.startswith("langchain_core") for m in sys.modules)
        print("ok")
        """
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def _nesting_graph(lg: SimpleNamespace) -> Any:
    """A node calling a langchain chain that invokes another graph (no config passed)."""

    class S(TypedDict):
        v: int

    inner = lg.StateGraph(S).add_node("i", lambda s: {"v": s["v"] * 2})
    inner = inner.add_edge(lg.START, "i").compile()
    chain = RunnableLambda(lambda x: inner.invoke({"v": x})["v"], name="lam")
    outer = lg.StateGraph(S).add_node("n", lambda s: {"v": chain.invoke(s["v"])})
    return outer.add_edge(lg.START, "n").compile()


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_runs_nest_through_langchain_runnables(aio: bool) -> None:
    def run(graph: Any) -> Any:
        rec = Recorder()
        if aio:
            out = asyncio.run(graph.ainvoke({"v": 1}, {"callbacks": [rec]}))
        else:
            out = graph.invoke({"v": 1}, {"callbacks": [rec]})
        # a graph called inside a langchain runnable, itself called with callbacks
        wrapped = RunnableLambda(lambda x: graph.invoke({"v": x})["v"], name="outer")
        return out, rec.events, wrapped.invoke(3, {"callbacks": [rec2 := Recorder()]}), rec2.events

    out = same(_nesting_graph, run)
    assert [e[1] for e in out[3] if e[0] == "start"][:3] == ["outer", "LangGraph", "n"]


def test_stream_mode_messages_v2_handler_protocol_events() -> None:
    """The handler v3 event streams ask for (an internal configurable flag): chat models
    report content-block protocol events, tool messages of node outputs are skipped."""

    def run(graph: Any) -> Any:
        config = {"configurable": {"__pregel_stream_messages_v2": True}}
        out = []
        for part in graph.stream(
            {"messages": [HumanMessage("hi", id="h-1")]},
            config,
            stream_mode="messages",
            version="v2",
        ):
            payload, md = part["data"]
            kind = payload.get("event") if isinstance(payload, dict) else type(payload).__name__
            out.append((part["type"], kind, _md(md), "run_id" in md))
        return out

    parts = same(chat_graph, run)
    assert any(p[1] == "message-start" for p in parts)
