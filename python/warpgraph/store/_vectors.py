"""Vector search pieces shared by the stores: cosine similarity and ranking.

Vectors are plain lists of floats. Ranking scores every vector of every candidate against
the query, keeps each item's best score (max pooling), orders by score (stable), pages, and
fills a short page with the candidates that have no vector (score None) - LangGraph's
InMemoryStore rule, used by every warpgraph store.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Sequence
from typing import Any

from warpgraph import _core

__all__ = ("NATIVE", "cosine", "norm", "pack", "rank", "rank_packed")

_cosine_top = getattr(_core, "cosine_top", None)
NATIVE = _cosine_top is not None
"""Whether the native ranking (`rank_packed`) is available in this build."""

_mul = operator.mul


def norm(vector: Sequence[float]) -> float:
    return sum(map(_mul, vector, vector)) ** 0.5


def cosine(query: Sequence[float], query_norm: float, vector: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is all zeros."""
    other = norm(vector)
    if query_norm == 0.0 or other == 0.0:
        return 0.0
    return sum(map(_mul, query, vector)) / (query_norm * other)


def _neg_l2(query: Sequence[float], _: float, vector: Sequence[float]) -> float:
    return -(sum((a - b) ** 2 for a, b in zip(query, vector, strict=False)) ** 0.5)


def _inner(query: Sequence[float], _: float, vector: Sequence[float]) -> float:
    return sum(map(_mul, query, vector))


SIMILARITIES = {"cosine": cosine, "l2": _neg_l2, "inner_product": _inner}
"""Score functions by an index's `distance_type` (higher is more similar)."""


def rank(
    query: Sequence[float],
    candidates: Sequence[tuple[Any, Sequence[Sequence[float]]]],
    offset: int,
    limit: int,
    distance_type: str = "cosine",
) -> list[tuple[float | None, Any]]:
    """[(score, item)] for a page of `candidates` ([(item, its vectors)]) ranked by their
    best similarity to `query` (cosine; negated L2 distance or inner product by
    `distance_type`); items without vectors fill a short page, unscored."""
    qn = norm(query)
    similarity = SIMILARITIES.get(distance_type, cosine)
    best: list[tuple[float, int, Any]] = []
    unscored: list[Any] = []
    for pos, (item, vectors) in enumerate(candidates):
        if not vectors:
            unscored.append(item)
            continue
        score = max(similarity(query, qn, v) for v in vectors)
        best.append((score, pos, item))
    best.sort(key=lambda t: (-t[0], t[1]))
    page: list[tuple[float | None, Any]] = [
        (score, item) for score, _, item in best[offset : offset + limit]
    ]
    if unscored and len(page) < limit:
        page.extend((None, item) for item in unscored[: limit - len(page)])
    return page


def pack(vectors: Sequence[Sequence[float]]) -> bytes | None:
    """An item's vectors as one bytes object of native float64s (None: no vectors), the
    layout `rank_packed` reads."""
    if not vectors:
        return None
    out = array("d")
    for vector in vectors:
        out.extend(vector)
    return out.tobytes()


def rank_packed(
    query: Sequence[float],
    items: Sequence[Any],
    packed: Sequence[bytes | None],
    offset: int,
    limit: int,
    dims: int,
) -> list[tuple[float | None, Any]] | None:
    """`rank` (cosine) of `items` whose vectors are `packed` (see `pack`), scored natively;
    None when it cannot answer (no native build, or vectors not of the query's size)."""
    if _cosine_top is None or not query or len(query) != dims:
        return None
    top = _cosine_top(list(query), packed, max(offset, 0) + max(limit, 0))
    page: list[tuple[float | None, Any]] = [(score, items[pos]) for pos, score in top[offset:]]
    if len(page) < limit and len(top) < len(items):
        unscored = [item for item, p in zip(items, packed, strict=True) if p is None]
        page.extend((None, item) for item in unscored[: limit - len(page)])
    return page
