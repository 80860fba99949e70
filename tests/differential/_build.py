"""A graph-building shorthand shared by the scenarios and the state-API scripts."""

from __future__ import annotations

import itertools
from typing import Any


def linear(lib: Any, schema: Any, *nodes: tuple[str, Any], end: bool = False) -> Any:
    """`lib.StateGraph(schema)` with `nodes` ((name, action) pairs) added in order and
    chained START -> first -> ... -> last (-> END with `end`); returns the builder, for the
    caller to add more."""
    g = lib.StateGraph(schema)
    for name, action in nodes:
        g.add_node(name, action)
    names = [lib.START, *(name for name, _ in nodes)]
    if end:
        names.append(lib.END)
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    return g
