"""Tasks whose config is built on first use (pregel/_algo.LazyTask) behave like LangGraph's.

Plain node and path functions run without their task config being built; whatever they
observe through get_config() / get_runtime() / interrupt(), and the errors they raise,
must match the reference running the same graph.
"""

from __future__ import annotations

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


def _observed(lib_name: str, saver: bool) -> tuple:
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
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    g.add_conditional_edges("node", route)
    app = g.compile(checkpointer=lib.InMemorySaver() if saver else None)
    config = {"configurable": {"thread_id": "t"}} if saver else None
    out = app.invoke({"a": 0}, config)
    chunks = list(
        app.stream(
            {"a": 0},
            {"configurable": {"thread_id": "u"}} if saver else None,
            stream_mode=["updates", "values"],
        )
    )
    return out, _norm(seen), chunks


@pytest.mark.parametrize("saver", [False, True])
def test_plain_nodes_see_the_reference_config(saver: bool) -> None:
    assert _observed("warpgraph", saver) == _observed("langgraph", saver)


def _failure(lib_name: str) -> tuple:
    lib = get_lib(lib_name)

    def boom(s: S) -> dict:
        raise KeyError("nope")

    g = lib.StateGraph(S)
    g.add_node("boom", boom)
    g.add_edge(lib.START, "boom")
    with pytest.raises(KeyError) as info:
        g.compile().invoke({"a": 0})
    notes = [_norm(n) for n in getattr(info.value, "__notes__", [])]
    return info.value.args, notes


def test_errors_carry_the_reference_task_note() -> None:
    assert _failure("warpgraph") == _failure("langgraph")


def _interrupted(lib_name: str) -> tuple:
    lib = get_lib(lib_name)

    def ask(s: S) -> dict:
        return {"a": s["a"] + len(lib.interrupt("how many?"))}

    g = lib.StateGraph(S)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    app = g.compile(checkpointer=lib.InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    first = app.invoke({"a": 1}, cfg)
    second = app.invoke(lib.Command(resume="xyz"), cfg)
    return [i.value for i in first["__interrupt__"]], second


def test_interrupt_and_resume_in_a_plain_node() -> None:
    assert _interrupted("warpgraph") == _interrupted("langgraph")


def test_configs_are_built_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    from warpgraph.pregel import _algo

    built: list[str] = []
    real = _algo._task_config

    def counting(ctx, name, *rest):
        built.append(name)
        return real(ctx, name, *rest)

    monkeypatch.setattr(_algo, "_task_config", counting)
    lib = get_lib("warpgraph")

    def quiet(s: S) -> dict:
        return {"a": s["a"] + 1}

    def curious(s: S) -> dict:
        lib.get_config()
        return {"a": s["a"] + 1}

    g = lib.StateGraph(S)
    g.add_node("quiet", quiet)
    g.add_node("curious", curious)
    g.add_edge(lib.START, "quiet")
    g.add_edge("quiet", "curious")
    assert g.compile().invoke({"a": 0}) == {"a": 2}
    # __start__ and quiet never look at their config; curious builds its own once
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
