"""Graphs are generic as LangGraph's are: libraries subscript them at import time."""

from __future__ import annotations

import typing
from typing import Any, TypedDict

import pytest
from warpgraph._internal import _generics
from warpgraph.graph import StateGraph
from warpgraph.graph.state import CompiledStateGraph
from warpgraph.pregel import Pregel


class S(TypedDict):
    x: int


class Ctx(TypedDict):
    user: str


@pytest.mark.parametrize("cls", [Pregel, StateGraph, CompiledStateGraph])
def test_one_argument_stands_for_all_four(cls):
    alias = cls[S]
    assert typing.get_origin(alias) is cls
    assert typing.get_args(alias)[0] is S
    assert len(typing.get_args(cls[S, Ctx, S, S])) == 4
    with pytest.raises(TypeError):
        cls[S, Ctx, S, S, S]


def test_annotations_a_library_evaluates_at_import_resolve():
    def make_agent() -> CompiledStateGraph[S, Ctx, S, S]: ...

    def run(graph: Pregel[Any]) -> None: ...

    hints = typing.get_type_hints(make_agent)
    assert typing.get_origin(hints["return"]) is CompiledStateGraph
    assert typing.get_origin(typing.get_type_hints(run)["graph"]) is Pregel


def test_subscripted_builder_builds_and_runs():
    builder = StateGraph[S](S)
    builder.add_node("a", lambda s: {"x": s["x"] + 1})
    builder.set_entry_point("a")
    graph = builder.compile()
    assert isinstance(graph, CompiledStateGraph) and isinstance(graph, Pregel)
    assert graph.invoke({"x": 1}) == {"x": 2}


def test_type_parameters_have_langgraphs_defaults():
    assert _generics.ContextT.__default__ is None
    assert _generics.InputT.__default__ is _generics.StateT
    assert _generics.OutputT.__default__ is _generics.StateT
    assert CompiledStateGraph.__parameters__ == (
        _generics.StateT,
        _generics.ContextT,
        _generics.InputT,
        _generics.OutputT,
    )


def test_warpgraph_typing_exports_the_parameters_graphs_are_generic_in():
    import warpgraph.typing as wt

    assert StateGraph.__parameters__ == (wt.StateT, wt.ContextT, wt.InputT, wt.OutputT)
    assert set(wt.__all__) >= {"StateLike", "NodeInputT", "StateT_co", "ContextT_contra"}
