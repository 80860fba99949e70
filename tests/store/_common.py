"""Helpers of the store tests: a deterministic embedding and result normalizers."""

from __future__ import annotations

from typing import Any


def embed(texts: list[str]) -> list[list[float]]:
    """A cheap deterministic embedding (letter counts over a few groups), never all zeros."""
    groups = ("aeiou", "bcdfg", "hjklm", "npqrs", "tvwxyz", "0123456789")
    return [[1.0 + sum(t.count(c) for c in g) for g in groups] for t in texts]


async def aembed(texts: list[str]) -> list[list[float]]:
    return embed(texts)


def norm_item(item: Any) -> Any:
    """What of an Item / SearchItem both libraries must agree on (no timestamps)."""
    if item is None:
        return None
    out = (tuple(item.namespace), item.key, item.value)
    score = getattr(item, "score", None)
    return (*out, None if score is None else round(score, 9))


def norm(result: Any) -> Any:
    if isinstance(result, list):
        return [norm_item(r) if hasattr(r, "key") else tuple(r) for r in result]
    return norm_item(result)
