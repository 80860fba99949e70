"""The same public names imported from `langgraph.*` or `warpgraph.*`.

`get_lib("langgraph")` / `get_lib("warpgraph")` return a `Lib` whose attributes resolve
lazily (a scenario only fails on the names it uses), with identical import paths and the
package prefix swapped.
"""

from __future__ import annotations

import importlib
import os
from functools import cache
from types import ModuleType
from typing import Any

# attribute -> submodule (relative to the package prefix) that provides it
_NAMES: dict[str, str] = {
    **dict.fromkeys(["StateGraph", "START", "END", "MessagesState", "add_messages"], "graph"),
    **dict.fromkeys(
        [
            "Send",
            "Command",
            "RetryPolicy",
            "interrupt",
            "Interrupt",
            "Overwrite",
            "StateSnapshot",
            "PregelTask",
        ],
        "types",
    ),
    **dict.fromkeys(["InMemorySaver", "MemorySaver"], "checkpoint.memory"),
    "SqliteSaver": "checkpoint.sqlite",
    **dict.fromkeys(["get_stream_writer", "get_config"], "config"),
    **dict.fromkeys(["Runtime", "get_runtime"], "runtime"),
    **dict.fromkeys(
        [
            "LastValue",
            "EphemeralValue",
            "Topic",
            "BinaryOperatorAggregate",
            "NamedBarrierValue",
            "AnyValue",
            "UntrackedValue",
        ],
        "channels",
    ),
    **dict.fromkeys(
        [
            "GraphRecursionError",
            "InvalidUpdateError",
            "GraphInterrupt",
            "EmptyInputError",
            "UnknownInterruptError",
        ],
        "errors",
    ),
    **dict.fromkeys(["RemainingSteps", "IsLastStep"], "managed"),
}
# attribute -> whole submodule
_MODULES = {
    "channels": "channels",
    "errors": "errors",
    "types": "types",
    "graph": "graph",
    "config": "config",
    "runtime": "runtime",
    "memory": "checkpoint.memory",
    "stream": "stream",
}

LIB_NAMES = ("langgraph", "warpgraph")


class Lib:
    """Namespace of the public names of one library (`langgraph` or `warpgraph`)."""

    def __init__(self, prefix: str) -> None:
        if prefix not in LIB_NAMES:
            raise ValueError(f"unknown library {prefix!r}; expected one of {LIB_NAMES}")
        self.name = prefix

    def module(self, sub: str) -> ModuleType:
        return importlib.import_module(f"{self.name}.{sub}")

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if attr in _MODULES:
            value: Any = self.module(_MODULES[attr])
        elif attr in _NAMES:
            value = getattr(self.module(_NAMES[attr]), attr)
        else:
            raise AttributeError(f"Lib has no name {attr!r}; add it to _NAMES in libs.py")
        setattr(self, attr, value)  # cache
        return value

    def __repr__(self) -> str:
        return f"Lib({self.name!r})"


@cache
def get_lib(name: str) -> Lib:
    return Lib(name)


@cache
def warpgraph_import_error() -> str | None:
    """None when warpgraph offers StateGraph, Pregel and InMemorySaver, else the reason it does not."""
    try:
        importlib.import_module("warpgraph.graph").StateGraph  # noqa: B018
        importlib.import_module("warpgraph.checkpoint.memory").InMemorySaver  # noqa: B018
        importlib.import_module("warpgraph.pregel.main").Pregel  # noqa: B018
    except Exception as exc:  # noqa: BLE001 - any failure means "not ready"
        return f"{type(exc).__name__}: {exc}"
    return None


def in_ci() -> bool:
    """CI=true: tests that cannot run fail instead of skipping."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def target_name() -> str:
    """Library compared against the reference: env WARPGRAPH_DIFF_AGAINST (default warpgraph)."""
    name = os.environ.get("WARPGRAPH_DIFF_AGAINST", "warpgraph")
    if name not in LIB_NAMES:
        raise ValueError(f"WARPGRAPH_DIFF_AGAINST={name!r}; expected one of {LIB_NAMES}")
    return name


LIBS = {name: get_lib(name) for name in LIB_NAMES}
