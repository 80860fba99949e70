"""Namespace matching and listing shared by every store (`list_namespaces` semantics).

Namespaces compare label by label: a pattern's "*" matches any one label, a "prefix"
condition anchors at the first label, a "suffix" one at the last. A listing is sorted as
tuples, truncated to `max_depth` labels (deduplicated), then paged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ("does_match", "from_text", "list_namespaces", "to_text")


def does_match(match_type: str, path: Sequence[str], namespace: tuple[str, ...]) -> bool:
    """Whether `namespace` matches the pattern `path` anchored by `match_type`."""
    n = len(path)
    if len(namespace) < n:
        return False
    if match_type == "prefix":
        labels = namespace[:n]
    elif match_type == "suffix":
        labels = namespace[len(namespace) - n :]
    else:
        raise ValueError(f"Unsupported match type: {match_type}")
    return all(p == "*" or p == label for p, label in zip(path, labels, strict=True))


def list_namespaces(namespaces: Iterable[tuple[str, ...]], op: Any) -> list[tuple[str, ...]]:
    """Apply a ListNamespacesOp to a collection of distinct namespaces."""
    found: Iterable[tuple[str, ...]] = namespaces
    if op.match_conditions:
        conditions = [(c.match_type, tuple(c.path)) for c in op.match_conditions]
        found = [ns for ns in found if all(does_match(kind, path, ns) for kind, path in conditions)]
    if op.max_depth is not None:
        depth = op.max_depth
        ordered = sorted({ns[:depth] for ns in found})
    else:
        ordered = sorted(found)
    return ordered[op.offset : op.offset + op.limit]


def to_text(namespace: tuple[str, ...]) -> str:
    """The stored form of a namespace (labels never contain ".")."""
    return ".".join(namespace)


def from_text(text: str) -> tuple[str, ...]:
    return tuple(text.split("."))
