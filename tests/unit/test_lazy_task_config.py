"""Tasks whose config is built on first use (pregel/_algo.LazyTask) behave like LangGraph's.

Plain node and path functions run without their task config being built; whatever they
observe through get_config() / get_runtime() / interrupt(), and the errors they raise,
must match the reference running the same graph.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TypedDict

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from differential.libs import get_lib

from tests._task_view import mask_ids as _norm
from tests._task_view import task_view


class S(TypedDict):
    a: int


# how a graph is run: sync; async with sync functions (a worker thread each); async with
# coroutine functions (the async drivers' planned tasks, `_retry._arun_planned`)
MODES = ("sync", "async", "async-functions")


def _fn(mode: str, func):
    """`func`, or (mode "async-functions") a coroutine function calling it."""
    if mode != "async-functions":
        return func

    async def coro(*args):
        await asyncio.sleep(0)  # (suspends once: the planned task resumes it in its context)
        return func(*args)

    return coro


def _invoke(mode: str, app, inp, config):
    return app.invoke(inp, config) if mode == "sync" else asyncio.run(app.ainvoke(inp, config))


def _stream(mode: str, app, inp, config, **kw) -> list:
    if mode == "sync":
        return list(app.stream(inp, config, **kw))

    async def collect() -> list:
        return [c async for c in app.astream(inp, config, **kw)]

    return asyncio.run(collect())


def _observed(lib_name: str, saver: bool, mode: str) -> tuple:
    lib = get_lib(lib_name)
    seen: list = []

    def look(where: str) -> None:
        config, runtime = lib.get_config(), lib.get_runtime()
        seen.append(task_view(where, config, runtime, lambda k: k != "__pregel_call"))

    def node(s: S) -> dict:
        look("node")
        return {"a": s["a"] + 1}

    def route(s: S) -> str:
        look("route")
        return "node" if s["a"] < 3 else lib.END

    g = lib.StateGraph(S)
    g.add_node("node", _fn(mode, node))
    g.add_edge(lib.START, "node")
    g.add_conditional_edges("node", _fn(mode, route))
    app = g.compile(checkpointer=lib.InMemorySaver() if saver else None)
    config = {"configurable": {"thread_id": "t"}} if saver else None
    out = _invoke(mode, app, {"a": 0}, config)
    chunks = _stream(
        mode,
        app,
        {"a": 0},
        {"configurable": {"thread_id": "u"}} if saver else None,
        stream_mode=["updates", "values"],
    )
    return out, _norm(seen), chunks


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("saver", [False, True])
def test_plain_nodes_see_the_reference_config(saver: bool, mode: str) -> None:
    assert _observed("warpgraph", saver, mode) == _observed("langgraph", saver, mode)


def _failure(lib_name: str, mode: str) -> tuple:
    lib = get_lib(lib_name)

    def boom(s: S) -> dict:
        raise KeyError("nope")

    g = lib.StateGraph(S)
    g.add_node("boom", _fn(mode, boom))
    g.add_edge(lib.START, "boom")
    with pytest.raises(KeyError) as info:
        _invoke(mode, g.compile(), {"a": 0}, None)
    notes = [_norm(n) for n in getattr(info.value, "__notes__", [])]
    return info.value.args, notes


@pytest.mark.parametrize("mode", MODES)
def test_errors_carry_the_reference_task_note(mode: str) -> None:
    assert _failure("warpgraph", mode) == _failure("langgraph", mode)


def _interrupted(lib_name: str, mode: str) -> tuple:
    lib = get_lib(lib_name)

    def ask(s: S) -> dict:
        return {"a": s["a"] + len(lib.interrupt("how many?"))}

    g = lib.StateGraph(S)
    g.add_node("ask", _fn(mode, ask))
    g.add_edge(lib.START, "ask")
    app = g.compile(checkpointer=lib.InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    first = _invoke(mode, app, {"a": 1}, cfg)
    second = _invoke(mode, app, lib.Command(resume="xyz"), cfg)
    return [i.value for i in first["__interrupt__"]], second


@pytest.mark.parametrize("mode", MODES)
def test_interrupt_and_resume_in_a_plain_node(mode: str) -> None:
    assert _interrupted("warpgraph", mode) == _interrupted("langgraph", mode)


def _count_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tasks whose config gets built from here on."""
    from warpgraph.pregel import _algo

    built: list[str] = []
    real = _algo._task_config

    def counting(ctx, name, *rest):
        built.append(name)
        return real(ctx, name, *rest)

    monkeypatch.setattr(_algo, "_task_config", counting)
    return built


@pytest.mark.parametrize("mode", MODES)
def test_configs_are_built_only_when_asked_for(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    built = _count_builds(monkeypatch)
    lib = get_lib("warpgraph")

    def quiet(s: S) -> dict:
        return {"a": s["a"] + 1}

    def curious(s: S) -> dict:
        lib.get_config()
        return {"a": s["a"] + 1}

    def route(s: S) -> str:
        return "curious"

    g = lib.StateGraph(S)
    g.add_node("quiet", _fn(mode, quiet))
    g.add_node("curious", _fn(mode, curious))
    g.add_edge(lib.START, "quiet")
    g.add_conditional_edges("quiet", _fn(mode, route), ["curious"])
    assert _invoke(mode, g.compile(), {"a": 0}, None) == {"a": 2}
    # __start__, quiet and its route never look at their config; curious builds its own once
    assert built == ["curious"]


def _langchain_view(lib_name: str) -> list:
    from langchain_core.runnables.config import ensure_config

    lib = get_lib(lib_name)
    seen: list = []

    def node(s: S) -> dict:
        cfg = ensure_config()  # what LangChain components called here would see
        seen.append(
            _norm(
                (
                    {k: v for k, v in cfg["metadata"].items() if k.startswith("langgraph_")},
                    cfg["configurable"]["checkpoint_ns"],
                    cfg["configurable"]["thread_id"],
                )
            )
        )
        return {"a": s["a"] + 1}

    g = lib.StateGraph(S)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    g.compile(checkpointer=lib.InMemorySaver()).invoke(
        {"a": 0}, {"configurable": {"thread_id": "lc"}}
    )
    return seen


def test_langchain_components_see_the_task_config() -> None:
    pytest.importorskip("langchain_core")
    assert _langchain_view("warpgraph") == _langchain_view("langgraph")


def _nested(lib_name: str, mode: str) -> tuple:
    """A subgraph run inside a parent task (its tasks lazy too: their scratchpad carries the
    parent's null resume): what its nodes see, an interrupt in it and the resume."""
    lib = get_lib(lib_name)
    seen: list = []

    def look(s: S) -> dict:
        config, runtime = lib.get_config(), lib.get_runtime()
        seen.append(task_view("inner", config, runtime, lambda k: k != "__pregel_call"))
        return {"a": s["a"] + 1}

    def ask(s: S) -> dict:
        return {"a": s["a"] + len(lib.interrupt("how many?"))}

    def plain(s: S) -> dict:
        return {"a": s["a"] * 10}

    sub = lib.StateGraph(S)
    sub.add_node("look", _fn(mode, look))
    sub.add_node("ask", _fn(mode, ask))
    sub.add_node("plain", _fn(mode, plain))
    sub.add_edge(lib.START, "look")
    sub.add_edge("look", "ask")
    sub.add_edge("ask", "plain")
    g = lib.StateGraph(S)
    g.add_node("sub", sub.compile())
    g.add_edge(lib.START, "sub")
    app = g.compile(checkpointer=lib.InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    first = _invoke(mode, app, {"a": 1}, cfg)
    second = _invoke(mode, app, lib.Command(resume="xyz"), cfg)
    return [i.value for i in first["__interrupt__"]], second, _norm(seen)


@pytest.mark.parametrize("mode", MODES)
def test_nested_runs_match_the_reference(mode: str) -> None:
    assert _nested("warpgraph", mode) == _nested("langgraph", mode)


def test_nested_run_configs_are_built_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    built = _count_builds(monkeypatch)
    lib = get_lib("warpgraph")
    sub = lib.StateGraph(S)
    sub.add_node("inner", lambda s: {"a": s["a"] + 1})
    sub.add_edge(lib.START, "inner")
    g = lib.StateGraph(S)
    g.add_node("outer", sub.compile())
    g.add_edge(lib.START, "outer")
    assert g.compile().invoke({"a": 0}) == {"a": 1}
    # the subgraph node hands its config to the nested run; nothing inside builds one
    assert built == ["outer"]
