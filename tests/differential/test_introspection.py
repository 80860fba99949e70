"""Introspection of compiled graphs compared with the reference: `get_graph()` (JSON, Mermaid
with and without styles, xray levels; langchain-core's Graph and warpgraph's own drawable
Graph give the same text), JSON schemas and schema models, `config_schema`, and the batch
methods.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import operator
import warnings
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from .libs import get_lib

LIBS = ("langgraph", "warpgraph")


class State(TypedDict):
    log: Annotated[list, operator.add]
    n: int


class Half(TypedDict):
    n: int


@dataclasses.dataclass
class DataState:
    n: int
    tag: str = "x"
    items: list = dataclasses.field(default_factory=list)


class ModelState(BaseModel):
    n: int
    note: str | None = None


@dataclasses.dataclass
class Ctx:
    user: str
    level: int = 1


def _node(state: Any) -> dict:
    return {}


def _chain(lib: Any) -> Any:
    g = lib.StateGraph(State)
    g.add_node("a", _node)
    g.add_node("b", _node)
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    return g.compile(interrupt_before=["b"], interrupt_after=["a", "b"])


def _loop(lib: Any) -> Any:
    g = lib.StateGraph(State)
    g.add_node("agent", _node, metadata={"role": "llm", "tags": ["x", "y"]})
    g.add_node("tools", _node)
    g.add_edge(lib.START, "agent")
    g.add_conditional_edges(
        "agent", lambda s: "exit", {"continue": "tools", "exit": lib.END, "again": "agent"}
    )
    g.add_edge("tools", "agent")
    return g.compile()


def _join(lib: Any) -> Any:
    g = lib.StateGraph(State)
    for name in ("first", "left", "right", "last"):
        g.add_node(name, _node)
    g.add_edge(lib.START, "first")
    g.add_edge("first", "left")
    g.add_edge("first", "right")
    g.add_edge(["left", "right"], "last")
    return g.compile()


def _commands(lib: Any) -> Any:
    def router(state: State) -> lib.Command[Literal["b", "c"]]:
        return lib.Command(goto="b")

    g = lib.StateGraph(State)
    g.add_node("router", router)
    g.add_node("b", _node)
    g.add_node("c", _node, defer=True)
    g.add_node("d", _node, destinations={"b": "back", "c": "onward"})
    g.add_edge(lib.START, "router")
    g.add_edge("b", "d")
    return g.compile()


def _sends(lib: Any) -> Any:
    g = lib.StateGraph(State)
    g.add_node("work", _node)
    g.add_node("Final Step", _node)
    g.add_conditional_edges(lib.START, lambda s: [lib.Send("work", s)], ["work"])
    g.add_edge("work", "Final Step")
    return g.compile()


def _no_path_map(lib: Any) -> Any:
    g = lib.StateGraph(State)
    g.add_node("a", _node)
    g.add_node("b", _node)
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", lambda s: "b")
    return g.compile()


def _inner(lib: Any, name: str) -> Any:
    g = lib.StateGraph(State)
    g.add_node(f"{name}_x", _node)
    g.add_node(f"{name}_y", _node)
    g.add_edge(lib.START, f"{name}_x")
    g.add_conditional_edges(f"{name}_x", lambda s: lib.END, [f"{name}_y", lib.END])
    return g.compile()


def _nested(lib: Any) -> Any:
    mid = lib.StateGraph(State)
    mid.add_node("deep", _inner(lib, "deep"))
    mid.add_node("after", _node)
    mid.add_edge(lib.START, "deep")
    mid.add_edge("deep", "after")
    g = lib.StateGraph(State)
    g.add_node("pre", _node)
    g.add_node("mid", mid.compile())
    g.add_node("side", _inner(lib, "side"))
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "mid")
    g.add_edge("pre", "side")
    return g.compile()


def _handlers(lib: Any) -> Any:
    def handler(state: State, error: Any = None) -> dict:
        return {}

    g = lib.StateGraph(State)
    g.add_node("a", _node, error_handler=handler, retry_policy=lib.RetryPolicy())
    g.add_node("b", _node)
    g.add_sequence([("c", _node), ("d", _node)])
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.set_node_defaults(error_handler=handler)
    return g.compile(interrupt_before="*", interrupt_after=["d"])


def _channels(lib: Any) -> Any:
    pregel = lib.module("pregel")
    one = pregel.NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("mid")
    two = pregel.NodeBuilder().subscribe_only("mid").do(lambda x: x * 2).write_to("output")
    return pregel.Pregel(
        nodes={"one": one, "two": two},
        channels={
            "input": lib.LastValue(int),
            "mid": lib.LastValue(int),
            "output": lib.LastValue(int),
        },
        input_channels="input",
        output_channels="output",
    )


GRAPHS = {
    f.__name__.lstrip("_"): f
    for f in (_chain, _loop, _join, _commands, _sends, _no_path_map, _nested, _handlers, _channels)
}


def _drawings(graph: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for xray in (False, 1, True):
        drawn = graph.get_graph(xray=xray)
        out[f"json-{xray}"] = json.dumps(drawn.to_json(), indent=2)
        out[f"mermaid-{xray}"] = drawn.draw_mermaid()
        out[f"plain-{xray}"] = drawn.draw_mermaid(with_styles=False)
        out[f"edges-{xray}"] = [tuple(e) for e in drawn.edges]
    return out


@pytest.mark.parametrize("name", list(GRAPHS))
def test_get_graph_matches_reference(name: str) -> None:
    ref, ours = (_drawings(GRAPHS[name](get_lib(lib))) for lib in LIBS)
    assert ours == ref


@pytest.mark.parametrize("name", list(GRAPHS))
def test_own_graph_class_draws_the_same(name: str) -> None:
    """warpgraph's Graph (used without langchain-core) gives langchain-core's text."""
    from warpgraph.pregel._drawing import Graph

    ref = GRAPHS[name](get_lib("langgraph"))
    ours = GRAPHS[name](get_lib("warpgraph"))
    for xray in (False, True):
        own = ours._drawing(None, xray)
        assert isinstance(own, Graph)
        expected = ref.get_graph(xray=xray)
        assert own.to_json() == expected.to_json()
        assert own.draw_mermaid() == expected.draw_mermaid()
        assert own.draw_mermaid(with_styles=False) == expected.draw_mermaid(with_styles=False)
        assert own.draw_mermaid(
            frontmatter_config={"config": {"theme": "neutral"}}, wrap_label_n_words=2
        ) == expected.draw_mermaid(
            frontmatter_config={"config": {"theme": "neutral"}}, wrap_label_n_words=2
        )
        assert own.edges == expected.edges
        from langchain_core.runnables.graph import CurveStyle as LcCurve
        from warpgraph.pregel._drawing import CurveStyle

        assert own.draw_mermaid(curve_style=CurveStyle.STEP_AFTER) == expected.draw_mermaid(
            curve_style=LcCurve.STEP_AFTER
        )
        text = own.draw_ascii()
        for node in own.nodes.values():
            assert f"| {node.name} |" in text
        for e in own.edges:
            arrow = "..>" if e.conditional else "-->"
            label = f" ({e.data})" if e.data is not None else ""
            assert f"  {e.source} {arrow} {e.target}{label}\n" in text + "\n"


def test_get_graph_returns_langchain_graph_and_async_twin() -> None:
    from langchain_core.runnables.graph import Graph as LcGraph

    graph = _loop(get_lib("warpgraph"))
    drawn = graph.get_graph()
    assert isinstance(drawn, LcGraph)
    again = asyncio.run(graph.aget_graph(xray=True))
    assert again.to_json() == drawn.to_json()


# ---------------------------------------------------------------- schemas


def _state_graph(lib: Any, schema: Any, **kwargs: Any) -> Any:
    g = lib.StateGraph(schema, **kwargs)
    g.add_node("n", _node)
    g.add_edge(lib.START, "n")
    return g.compile()


SCHEMA_GRAPHS = {
    "typeddict": lambda lib: _state_graph(lib, State, context_schema=Ctx),
    "dataclass": lambda lib: _state_graph(lib, DataState),
    "pydantic": lambda lib: _state_graph(lib, ModelState, context_schema=ModelState),
    "io": lambda lib: _state_graph(lib, State, input_schema=Half, output_schema=Half),
    "root": lambda lib: _state_graph(lib, Annotated[list, operator.add]),
    "channels": _channels,
}


def _schemas(graph: Any) -> dict[str, Any]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = graph.config_schema(include=["tags", "recursion_limit"]).model_json_schema()
        config_json = graph.get_config_jsonschema()
    return {
        "input": graph.get_input_jsonschema(),
        "output": graph.get_output_jsonschema(),
        "context": graph.get_context_jsonschema(),
        "input_model": graph.input_schema.model_json_schema(),
        "output_model": graph.output_schema.model_json_schema(),
        "config": config,
        "config_json": config_json,
        "warnings": [(w.category.__name__, str(w.message)) for w in caught],
        "specs": graph.config_specs,
    }


@pytest.mark.parametrize("name", list(SCHEMA_GRAPHS))
def test_schemas_match_reference(name: str) -> None:
    ref, ours = (_schemas(SCHEMA_GRAPHS[name](get_lib(lib))) for lib in LIBS)
    assert ours == ref


def test_channel_pregel_io_schemas_match_reference() -> None:
    def build(lib: Any, ins: Any, outs: Any) -> Any:
        pregel = lib.module("pregel")
        node = pregel.NodeBuilder().subscribe_only("input").do(lambda x: x).write_to("output")
        return pregel.Pregel(
            nodes={"one": node},
            channels={"input": lib.LastValue(int), "output": lib.LastValue(str)},
            input_channels=ins,
            output_channels=outs,
        )

    for ins, outs in (("input", ["output"]), (["input"], "output"), (["input"], ["output"])):
        ref, ours = (_schemas(build(get_lib(lib), ins, outs)) for lib in LIBS)
        assert ours == ref


# ---------------------------------------------------------------- batch


def _counter(lib: Any) -> Any:
    def bump(state: Half) -> dict:
        if state["n"] < 0:
            raise ValueError(f"negative {state['n']}")
        return {"n": state["n"] + 1}

    g = lib.StateGraph(Half)
    g.add_node("bump", bump)
    g.add_edge(lib.START, "bump")
    return g.compile()


def _batches(graph: Any) -> dict[str, Any]:
    inputs = [{"n": i} for i in (3, -1, 5)]
    ok = [{"n": i} for i in (1, 2, 3, 4)]

    def err(x: Any) -> Any:
        return (type(x).__name__, str(x)) if isinstance(x, Exception) else x

    out: dict[str, Any] = {
        "batch": graph.batch(ok, {"max_concurrency": 2}),
        "one": graph.batch([{"n": 7}]),
        "empty": graph.batch([]),
        "exc": [err(x) for x in graph.batch(inputs, return_exceptions=True)],
        "keys": graph.batch(ok, output_keys="n"),
        "each": graph.map().invoke(ok),
        "as_completed": sorted(graph.batch_as_completed(ok)),
    }
    with pytest.raises(ValueError) as info:
        graph.batch(inputs)
    out["raised"] = str(info.value)
    with pytest.raises(ValueError) as info:
        graph.batch(ok, [{}, {}])
    out["bad_configs"] = str(info.value)

    async def run_async() -> dict[str, Any]:
        return {
            "abatch": await graph.abatch(ok, [{"max_concurrency": 1}] * 4),
            "aexc": [err(x) for x in await graph.abatch(inputs, return_exceptions=True)],
            "aeach": await graph.map().ainvoke(ok),
            "aas_completed": sorted([x async for x in graph.abatch_as_completed(ok)]),
        }

    out.update(asyncio.run(run_async()))
    return out


def test_batch_methods_match_reference() -> None:
    ref, ours = (_batches(_counter(get_lib(lib))) for lib in LIBS)
    assert ours == ref


# ---------------------------------------------------------------- pydantic helpers


def test_pydantic_helpers_match_reference() -> None:
    import typing

    import pydantic

    class Vanilla:
        x: int

    class Plain(typing.TypedDict):
        x: int

    candidates = [State, DataState, ModelState, Vanilla, Plain, int, dict[str, int]]

    def helpers(lib: Any) -> dict[str, Any]:
        mod = lib.module("_internal._pydantic")
        fields = {"_secret": (int, 1), "schema": (str, "s"), "plain": (list[int], None)}
        model = mod.create_model("Fields", field_definitions=fields)
        root = mod.create_model("Rooted", root=(list[int], None))
        bare = mod.create_model("Bare", root=int)
        return {
            "supported": [mod.is_supported_by_pydantic(t) for t in candidates],
            "fields": model.model_json_schema(),
            "dump": model(_secret=2).model_dump(by_alias=True),
            "root": root.model_json_schema(),
            "bare": bare.model_json_schema(),
            "cached": mod.create_model("Fields", field_definitions=fields) is model,
            "field_names": sorted(mod.get_fields(model)),
            "frozen": model.model_config.get("frozen"),
        }

    ref, ours = (helpers(get_lib(lib)) for lib in LIBS)
    assert ours == ref
    with pytest.raises(TypeError):
        get_lib("warpgraph").module("_internal._pydantic").get_fields(pydantic)
