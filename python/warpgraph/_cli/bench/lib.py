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


def langgraph_missing(saver: str = "memory") -> str | None:
    """Why LangGraph (with the saver package `saver` needs) cannot be imported, or None.

    The import runs in a child process: this process must not load `langgraph` (the
    comparison runs LangGraph in a worker of its own)."""
    import subprocess
    import sys

    modules = ["langgraph.graph"]
    if saver == "sqlite":
        modules.append("langgraph.checkpoint.sqlite")
    elif saver == "postgres":
        modules.append("langgraph.checkpoint.postgres")
    code = "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)"
    proc = subprocess.run(
        [sys.executable, "-c", code, *modules], capture_output=True, text=True, check=False
    )
    if proc.returncode == 0:
        return None
    hint = LANGGRAPH_PG_INSTALL if saver == "postgres" else LANGGRAPH_INSTALL
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    reason = lines[-1] if lines else "import failed"
    return f"--compare langgraph needs LangGraph installed ({reason}); install it with `{hint}`"
