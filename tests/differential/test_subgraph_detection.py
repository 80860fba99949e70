"""Which graph a node is found to run (its `subgraphs`), compared with the reference for the
shapes a node function can reach a graph through."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from .libs import get_lib


class S(TypedDict):
    log: Annotated[list, operator.add]


class Box:
    def __init__(self, payload: Any) -> None:
        self.payload = payload


class ListWithAttr(list):
    pass


def leaf(lib: Any, tag: str) -> Any:
    g = lib.StateGraph(S)
    g.add_node(tag, lambda s: {"log": [tag]})
    g.add_edge(lib.START, tag)
    graph = g.compile()
    graph.name = tag
    return graph


def closure(lib: Any) -> Any:
    sub = leaf(lib, "closure")
    return lambda s: sub.invoke(s)


def attribute_chain(lib: Any) -> Any:
    holder = Box(Box(leaf(lib, "chain")))

    def node(s: S) -> Any:
        return holder.payload.payload.invoke(s)

    return node


def nested_def(lib: Any) -> Any:
    holder = Box(leaf(lib, "nested"))

    def node(s: S) -> Any:
        def inner() -> Any:
            return holder.payload.invoke(s)

        return inner()

    return node


def wrapped(lib: Any) -> Any:
    sub = leaf(lib, "wrapped")

    def inner(s: S) -> Any:
        return sub.invoke(s)

    def wrapper(s: S) -> Any:
        return {"log": []}

    wrapper.__wrapped__ = inner  # type: ignore[attr-defined]
    return wrapper


def list_subclass(lib: Any) -> Any:
    holder = ListWithAttr()
    holder.payload = leaf(lib, "listsub")  # type: ignore[attr-defined]

    def node(s: S) -> Any:
        return holder.payload.invoke(s)

    return node


def plain_list(lib: Any) -> Any:
    holder = [leaf(lib, "in_list")]

    def node(s: S) -> Any:
        return holder[0].invoke(s)

    return node


def bound_method(lib: Any) -> Any:
    return leaf(lib, "method").invoke


def unchecked(lib: Any) -> Any:
    graph = lib.StateGraph(S)
    graph.add_node("x", lambda s: {"log": []})
    graph.add_edge(lib.START, "x")
    off = graph.compile(checkpointer=False)

    def node(s: S) -> Any:
        return off.invoke(s)

    return node


SHAPES = [
    closure,
    attribute_chain,
    nested_def,
    wrapped,
    list_subclass,
    plain_list,
    bound_method,
    unchecked,
]


def detected(lib_name: str, shape: Any) -> str | None:
    lib = get_lib(lib_name)
    g = lib.StateGraph(S)
    g.add_node("n", shape(lib))
    g.add_edge(lib.START, "n")
    found = g.compile().nodes["n"].subgraphs
    return found[0].name if found else None


@pytest.mark.parametrize("shape", SHAPES, ids=lambda f: f.__name__)
def test_subgraph_detection_matches_reference(shape: Any) -> None:
    assert detected("warpgraph", shape) == detected("langgraph", shape)


def test_function_nonlocals_of_non_functions() -> None:
    from functools import partial

    from langgraph.pregel._utils import get_function_nonlocals as reference
    from warpgraph.pregel._utils import get_function_nonlocals

    assert get_function_nonlocals(partial(lambda a, b: a, b=1)) == []
    assert get_function_nonlocals(len) == []
    value = Box(Box(3))

    def reach() -> Any:
        return value.payload.payload, [x.payload for x in (value,)]

    assert get_function_nonlocals(reach) == reference(reach)
    assert get_function_nonlocals(reach)[:4] == [value, value, value.payload, 3]
