"""The engine a workload runs on: warpgraph, or LangGraph (in the worker process).

A `Lib` holds the handful of public names the workloads use, imported from `warpgraph.*` or
`langgraph.*` under the same paths, so one workload definition builds the same graph on
either library.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

LIBS = ("warpgraph", "langgraph")
LANGGRAPH_INSTALL = "pip install langgraph langgraph-checkpoint-sqlite"
LANGGRAPH_PG_INSTALL = "pip install langgraph langgraph-checkpoint-postgres"


@dataclass(frozen=True)
class Lib:
    name: str
    StateGraph: Any
    START: str
    END: str
    Send: Any
    InMemorySaver: Any
    uuid6: Any


def load_lib(name: str) -> Lib:
    """Import the names from `name` ("warpgraph" or "langgraph")."""
    if name not in LIBS:
        raise ValueError(f"unknown library {name!r} (choose from {', '.join(LIBS)})")
    graph = importlib.import_module(f"{name}.graph")
    types = importlib.import_module(f"{name}.types")
    memory = importlib.import_module(f"{name}.checkpoint.memory")
    ids = importlib.import_module(f"{name}.checkpoint.base.id")
    return Lib(
        name=name,
        StateGraph=graph.StateGraph,
        START=graph.START,
        END=graph.END,
        Send=types.Send,
        InMemorySaver=memory.InMemorySaver,
        uuid6=ids.uuid6,
    )


def langgraph_modules(saver: str) -> list[str]:
    """The LangGraph modules a comparison on `saver` imports."""
    modules = ["langgraph.graph"]
    if saver in ("sqlite", "postgres"):
        modules.append(f"langgraph.checkpoint.{saver}")
    return modules


def langgraph_missing(saver: str) -> str | None:
    """Why LangGraph (with the saver package `saver` needs) cannot be imported here, or
    None. Called in the worker process (this one must not import `langgraph`)."""
    try:
        for module in langgraph_modules(saver):
            importlib.import_module(module)
    except ImportError as exc:
        hint = LANGGRAPH_PG_INSTALL if saver == "postgres" else LANGGRAPH_INSTALL
        return f"--compare langgraph needs LangGraph installed ({exc}); install it with `{hint}`"
    return None
