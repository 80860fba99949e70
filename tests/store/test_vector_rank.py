"""The native similarity ranking (`_vectors.rank_packed`, used by InMemoryStore's vector
search without filter or TTL) answers as the Python `rank` and as LangGraph's store:
scores, order (ties by position), pages, unscored fill, and after replaces and deletes."""

from __future__ import annotations

import pytest
from warpgraph.store import _vectors
from warpgraph.store.memory import InMemoryStore

from tests.store._common import embed, norm

lg_memory = pytest.importorskip("langgraph.store.memory")

needs_native = pytest.mark.skipif(not _vectors.NATIVE, reason="native module without cosine_top")


@needs_native
@pytest.mark.parametrize(("offset", "limit"), [(0, 3), (2, 4), (0, 50), (7, 5), (30, 3)])
def test_rank_packed_is_rank(offset, limit) -> None:
    vectors = [[[1.0, 2.0, 0.5]], [], [[0.0, 0.0, 0.0]], [[3.0, -1.0, 2.0], [1.0, 2.0, 0.5]]]
    vectors += [[[1.0, 2.0, 0.5]], [[-1.0, 0.25, 9.0]], [], [[2.0, 4.0, 1.0]]]
    items = [f"i{n}" for n in range(len(vectors))]
    query = [0.5, 1.5, -0.25]
    ref = _vectors.rank(query, list(zip(items, vectors, strict=True)), offset, limit)
    packed = [_vectors.pack(v) for v in vectors]
    got = _vectors.rank_packed(query, items, packed, offset, limit, 3)
    assert [(item, None if s is None else round(s, 12)) for s, item in got] == [
        (item, None if s is None else round(s, 12)) for s, item in ref
    ]
    # ties (equal vectors) keep the candidates' order
    assert [item for _, item in got if item in ("i0", "i4", "i7")] == [
        item for _, item in ref if item in ("i0", "i4", "i7")
    ]


@needs_native
def test_rank_packed_refuses_what_it_cannot_rank() -> None:
    assert _vectors.rank_packed([1.0, 2.0], ["a"], [_vectors.pack([[1.0, 2.0]])], 0, 1, 3) is None
    with pytest.raises(ValueError, match="not a multiple"):
        _vectors._cosine_top([1.0, 2.0], [b"\x00" * 24], 1)
    with pytest.raises(ValueError, match="empty"):
        _vectors._cosine_top([], [None], 1)


def test_memory_vector_search_matches_langgraph_through_changes() -> None:
    index = {"dims": 6, "embed": embed, "fields": ["text", "title"]}
    ours, ref = InMemoryStore(index=index), lg_memory.InMemoryStore(index=index)
    words = ["hello world", "abc", "memory 42", "zzz top", "hello abc", "quiet"]

    def same(query: str, prefix: tuple = (), **kw) -> None:
        assert norm(ours.search(prefix, query=query, **kw)) == norm(
            ref.search(prefix, query=query, **kw)
        )

    for store in (ours, ref):
        for i, text in enumerate(words * 3):
            value = {"text": text, "n": i}
            if i % 4 == 0:
                value["title"] = words[(i + 1) % len(words)]
            store.put(("docs", f"u{i % 3}"), f"k{i}", value, index=False if i == 5 else None)
    for query in ("hello", "memory abc", "zz"):
        same(query, limit=5)
        same(query, ("docs", "u1"), limit=3, offset=1)
        same(query, limit=40)  # the unscored item fills the page
    for store in (ours, ref):  # replace, delete, a new namespace: the cache follows
        store.put(("docs", "u1"), "k1", {"text": "hello hello", "n": -1})
        store.delete(("docs", "u2"), "k2")
        store.put(("docs", "new"), "x", {"text": "memory"})
    for query in ("hello", "memory"):
        same(query, limit=6)
        same(query, ("docs", "new"), limit=2)
