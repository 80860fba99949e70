"""Renamed keyword arguments (`retry` -> `retry_policy`, `config_schema` -> `context_schema`,
`input` / `output` -> `*_schema`): both libraries take the old name and warn with the same
category and message, and the new name wins when both are given; warpgraph's warning points
at the caller's line."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest
from typing_extensions import TypedDict


class S(TypedDict):
    x: int


class Other(TypedDict):
    y: int


POLICY_A = {"max_attempts": 2}
POLICY_B = {"max_attempts": 3}


def _calls(lib: str) -> dict[str, Any]:
    func = importlib.import_module(f"{lib}.func")
    graph = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")
    a, b = types.RetryPolicy(**POLICY_A), types.RetryPolicy(**POLICY_B)

    def node(state: S) -> S:
        return state

    def added(**kwargs: Any) -> Any:
        g = graph.StateGraph(S)
        g.add_node("n", node, **kwargs)
        return g.nodes["n"].retry_policy, g.nodes["n"].input_schema

    return {
        "task retry": lambda: func.task(retry=a)(node).retry_policy,
        "task both": lambda: func.task(retry=a, retry_policy=b)(node).retry_policy,
        "entrypoint retry": lambda: func.entrypoint(retry=a).retry_policy,
        "entrypoint config_schema": lambda: func.entrypoint(config_schema=Other).context_schema,
        "entrypoint both": lambda: (
            func.entrypoint(config_schema=Other, context_schema=S).context_schema
        ),
        "graph config_schema": lambda: graph.StateGraph(S, config_schema=Other).context_schema,
        "graph input": lambda: graph.StateGraph(S, input=Other).input_schema,
        "graph output": lambda: graph.StateGraph(S, output=Other).output_schema,
        "graph output both": lambda: (
            graph.StateGraph(S, output=Other, output_schema=S).output_schema
        ),
        "add_node retry": lambda: added(retry=a),
        "add_node input": lambda: added(input=Other),
        "add_node both": lambda: added(retry=a, retry_policy=b, input=Other, input_schema=S),
    }


def _outcome(call: Any) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    seen = [
        (w.category.__name__, str(w.message), w.filename == __file__)
        for w in caught
        if issubclass(w.category, DeprecationWarning)
    ]
    return _plain(result), seen


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if hasattr(value, "max_attempts"):
        return ("policy", value.max_attempts)
    return getattr(value, "__name__", value)


@pytest.mark.parametrize("case", list(_calls("warpgraph")))
def test_renamed_kwargs_match_reference(case: str) -> None:
    ours, ours_warned = _outcome(_calls("warpgraph")[case])
    ref, ref_warned = _outcome(_calls("langgraph")[case])
    assert ours == ref
    assert [w[:2] for w in ours_warned] == [w[:2] for w in ref_warned]
    assert ours_warned and all(at_caller for _, _, at_caller in ours_warned)
