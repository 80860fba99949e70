"""LangGraph's names for the serde allowlist a graph gives its checkpointer
(`langgraph._internal._serde`), over warpgraph's `checkpoint.serde.allowlist`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from warpgraph.checkpoint.serde.allowlist import collect_allowlist

__all__ = ("build_serde_allowlist", "collect_allowlist_from_schemas", "curated_core_allowlist")

# langchain-core's message classes a checkpoint of a messages graph holds
_MESSAGE_CLASSES = tuple(
    f"{kind}{suffix}"
    for kind in ("Base", "Human", "AI", "System", "Chat", "Tool", "Function")
    for suffix in ("Message", "MessageChunk")
) + ("RemoveMessage",)


def curated_core_allowlist() -> set[tuple[str, ...]]:
    """`(module, name)` of langchain-core's message classes (empty without langchain-core)."""
    try:
        from langchain_core import messages
    except ImportError:
        return set()
    out = set()
    for name in _MESSAGE_CLASSES:
        cls = getattr(messages, name, None)
        if cls is not None:
            out.add((cls.__module__, cls.__name__))
    return out


def collect_allowlist_from_schemas(
    *, schemas: Iterable[Any] = (), channels: Mapping[str, Any] | None = None
) -> set[tuple[str, ...]]:
    """`(module, name)` of the dataclasses, pydantic models, NamedTuples and enums the
    schemas' annotations and the channels' value / update types reach."""
    found = collect_allowlist(schemas=schemas, channels=channels)
    return {(cls.__module__, cls.__name__) for cls in found}


def build_serde_allowlist(
    *, schemas: Iterable[Any] = (), channels: Mapping[str, Any] | None = None
) -> set[tuple[str, ...]]:
    """The curated core types and those the schemas and channels reach."""
    return curated_core_allowlist() | collect_allowlist_from_schemas(
        schemas=schemas, channels=channels
    )
