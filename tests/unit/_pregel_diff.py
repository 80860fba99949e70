"""Helpers for running one graph on langgraph and warpgraph and comparing what is observable.

Ids (checkpoint/task/interrupt ids), version suffixes and timestamps are random, so they are
normalised: each distinct id becomes ID<n> in order of first appearance, versions keep their
integer part, timestamps become "TS". Library objects (Send, Interrupt, exceptions, ...) are
compared by class name and fields.
"""

from __future__ import annotations

import re
import types
from dataclasses import fields, is_dataclass
from typing import Any

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_VERSION = re.compile(r"^(\d{32})\.\d.*$")
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")


def lib(name: str) -> types.SimpleNamespace:
    """The public names a test needs, from `langgraph` ("lg") or `warpgraph` ("wg")."""
    root = "langgraph" if name == "lg" else "warpgraph"
    import importlib

    ch = importlib.import_module(f"{root}.channels")
    pregel = importlib.import_module(f"{root}.pregel")
    tys = importlib.import_module(f"{root}.types")
    errors = importlib.import_module(f"{root}.errors")
    mem = importlib.import_module(f"{root}.checkpoint.memory")
    write = importlib.import_module(f"{root}.pregel._write")
    ns = types.SimpleNamespace(
        name=name,
        LastValue=ch.LastValue,
        EphemeralValue=ch.EphemeralValue,
        Topic=ch.Topic,
        BinaryOperatorAggregate=ch.BinaryOperatorAggregate,
        Pregel=pregel.Pregel,
        NodeBuilder=pregel.NodeBuilder,
        InMemorySaver=mem.InMemorySaver,
        Send=tys.Send,
        Command=tys.Command,
        interrupt=tys.interrupt,
        errors=errors,
        ChannelWriteEntry=write.ChannelWriteEntry,
    )
    try:
        graph = importlib.import_module(f"{root}.graph")
        ns.StateGraph, ns.START, ns.END = graph.StateGraph, graph.START, graph.END
    except (ImportError, AttributeError):
        ns.StateGraph = None
    return ns


class Normalizer:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def _id(self, s: str) -> str:
        if s not in self.ids:
            self.ids[s] = f"ID{len(self.ids)}"
        return self.ids[s]

    def __call__(self, v: Any, key: Any = None) -> Any:
        if isinstance(v, str):
            if key in ("ts", "created_at", "timestamp") and _TS.match(v):
                return "TS"
            if m := _VERSION.match(v):
                return f"V{int(m.group(1))}"
            if _HEX32.match(v):
                return self._id(v)
            return _UUID.sub(lambda m: self._id(m.group(0)), v)
        if isinstance(v, BaseException):
            return ("exc", type(v).__name__, str(v).split("\n")[0])
        if key == "__pregel_checkpointer":
            return type(v).__name__  # a lent saver: its storage holds timestamps
        if isinstance(v, dict):
            return {self(k): self(x, k) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return (
                type(v)(self(x) for x in v)
                if not hasattr(v, "_fields")
                else (type(v).__name__, {f: self(getattr(v, f), f) for f in v._fields})
            )
        if isinstance(v, (set, frozenset)):
            return sorted(self(x) for x in v)
        if v is None or isinstance(v, (int, float, bool, bytes)):
            return v
        if is_dataclass(v):
            return (type(v).__name__, {f.name: self(getattr(v, f.name), f.name) for f in fields(v)})
        if hasattr(v, "__dict__"):
            return (
                type(v).__name__,
                {k: self(x, k) for k, x in vars(v).items() if not k.startswith("_")},
            )
        if hasattr(v, "__slots__"):
            return (type(v).__name__, {k: self(getattr(v, k, None), k) for k in v.__slots__})
        return repr(v)


def history(saver: Any, thread: str = "t1", ns: str = "") -> list[tuple]:
    """Every saved checkpoint of the thread's namespace `ns` (oldest first) with metadata,
    parent and writes."""
    cfg: dict = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    out = []
    for t in reversed(list(saver.list(cfg))):
        by_task: dict[str, list] = {}
        for tid, c, v in t.pending_writes or []:
            by_task.setdefault(tid, []).append((c, repr_val(v)))
        # task ids are random per run: compare each task's writes, in a stable order
        out.append(
            (t.checkpoint, t.metadata, t.parent_config, sorted(map(tuple, by_task.values())))
        )
    return out


def repr_val(v: Any) -> Any:
    return repr(v) if isinstance(v, (str, int, float, type(None))) else type(v).__name__


def run_both(build, scenario, *, may_raise: bool = False) -> tuple[Any, Any]:
    """`build(L)` -> graph; `scenario(L, graph)` -> observable result; normalised per library.
    A scenario that raises is compared by exception type and first message line; unless
    `may_raise`, langgraph raising is a test bug and fails the test."""
    results = []
    for name in ("lg", "wg"):
        L = lib(name)
        graph = build(L)
        try:
            res = scenario(L, graph)
        except Exception as e:  # noqa: BLE001
            res = ("raised", e)
        if name == "lg" and isinstance(res, tuple) and res and res[0] == "raised" and not may_raise:
            raise AssertionError(f"scenario raised on langgraph: {res[1]!r}") from res[1]
        results.append(Normalizer()(res))
    return results[0], results[1]
