"""InMemoryStore against LangGraph's: random operation sequences give the same results
(values, keys, namespaces, scores, order), plus what warpgraph adds (TTL, $in / $nin)."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warpgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from warpgraph.store.memory import InMemoryStore

from tests.store._common import aembed, embed, norm

lg_memory = pytest.importorskip("langgraph.store.memory")
lg_base = pytest.importorskip("langgraph.store.base")

LABELS = st.sampled_from(["a", "b", "c", "users", "docs"])
NAMESPACES = st.lists(LABELS, min_size=1, max_size=3).map(tuple)
KEYS = st.sampled_from(["k1", "k2", "k3", "k4"])
VALUES = st.fixed_dictionaries(
    {
        "n": st.integers(0, 5),
        "kind": st.sampled_from(["x", "y"]),
        "tags": st.lists(st.sampled_from(["p", "q"]), max_size=2),
        "meta": st.fixed_dictionaries({"lvl": st.integers(0, 2)}),
    },
    optional={"text": st.sampled_from(["hello world", "abc", "zzz", "memory 42"])},
)
FILTERS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"kind": st.sampled_from(["x", "y"])}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$gte": st.integers(0, 5)})}),
    st.fixed_dictionaries({"n": st.fixed_dictionaries({"$lt": st.integers(0, 5)})}),
    st.fixed_dictionaries({"kind": st.fixed_dictionaries({"$ne": st.just("x")})}),
    st.fixed_dictionaries({"tags": st.lists(st.sampled_from(["p", "q"]), max_size=2)}),
    st.fixed_dictionaries({"meta": st.fixed_dictionaries({"lvl": st.integers(0, 2)})}),
    st.fixed_dictionaries({"missing": st.none()}),
)


OP = st.one_of(
    st.tuples(st.just("put"), NAMESPACES, KEYS, VALUES),
    st.tuples(st.just("delete"), NAMESPACES, KEYS),
    st.tuples(st.just("get"), NAMESPACES, KEYS),
    st.tuples(
        st.just("search"),
        st.lists(LABELS, max_size=2).map(tuple),
        FILTERS,
        st.integers(0, 4),
        st.integers(0, 2),
        st.sampled_from([None, "hello", "abc memory"]),
    ),
    st.tuples(
        st.just("list"),
        st.one_of(st.none(), st.lists(st.sampled_from(["a", "b", "*"]), min_size=1, max_size=2)),
        st.one_of(st.none(), st.lists(st.sampled_from(["a", "c", "*"]), min_size=1, max_size=2)),
        st.one_of(st.none(), st.integers(1, 3)),
        st.integers(1, 5),
        st.integers(0, 2),
    ),
)


def _apply(store, op):
    kind = op[0]
    if kind == "put":
        return store.put(op[1], op[2], op[3])
    if kind == "delete":
        return store.delete(op[1], op[2])
    if kind == "get":
        return norm(store.get(op[1], op[2]))
    if kind == "search":
        _, prefix, flt, limit, offset, query = op
        return norm(store.search(prefix, filter=flt, limit=limit, offset=offset, query=query))
    _, prefix, suffix, depth, limit, offset = op
    if isinstance(store, lg_memory.InMemoryStore):
        # LangGraph keeps (and lists) a namespace emptied by deletes or touched by a read;
        # warpgraph lists only namespaces holding items
        for ns in [ns for ns, items in store._data.items() if not items]:
            del store._data[ns]
    found = store.list_namespaces(
        prefix=tuple(prefix) if prefix else None,
        suffix=tuple(suffix) if suffix else None,
        max_depth=depth,
        limit=limit,
        offset=offset,
    )
    return [tuple(ns) for ns in found]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(OP, max_size=25), st.booleans())
def test_random_ops_match_langgraph(ops, indexed) -> None:
    index = {"dims": 6, "embed": embed, "fields": ["text"]} if indexed else None
    ours = InMemoryStore(index=index)
    ref = lg_memory.InMemoryStore(index=index)
    for op in ops:
        assert _apply(ours, op) == _apply(ref, op), op


def test_batch_reads_see_the_state_before_the_batch_puts() -> None:
    for store in (InMemoryStore(), lg_memory.InMemoryStore()):
        base = lg_base if isinstance(store, lg_memory.InMemoryStore) else None
        mod = base or __import__("warpgraph.store.base").store.base
        store.put(("a",), "k", {"v": 1})
        got = store.batch(
            [
                mod.PutOp(("a",), "k", {"v": 2}),
                mod.GetOp(("a",), "k"),
                mod.PutOp(("a",), "k", {"v": 3}),
                mod.SearchOp(("a",)),
            ]
        )
        assert got[0] is None and got[2] is None
        assert got[1].value == {"v": 1}
        assert [r.value for r in got[3]] == [{"v": 1}]
        assert store.get(("a",), "k").value == {"v": 3}  # the last put wins


def test_vector_search_ranks_like_langgraph_async() -> None:
    async def run(store):
        await store.aput(("docs",), "1", {"text": "hello world"})
        await store.aput(("docs",), "2", {"text": "zzz"})
        await store.aput(("docs",), "3", {"text": "abc"}, index=False)
        await store.aput(("docs", "x"), "4", {"text": "hello hello"})
        return norm(await store.asearch(("docs",), query="hello", limit=4))

    index = {"dims": 6, "embed": aembed, "fields": ["text"]}
    ours = asyncio.run(run(InMemoryStore(index=index)))
    ref = asyncio.run(run(lg_memory.InMemoryStore(index=index)))
    assert ours == ref
    assert ours[-1][1] == "3" and ours[-1][3] is None  # unembedded item last, unscored


def test_namespace_errors_match_langgraph() -> None:
    cases = [((), "k"), (("a.b",), "k"), (("",), "k"), (("langgraph", "x"), "k"), ((1,), "k")]
    for ns, key in cases:
        with pytest.raises(lg_base.InvalidNamespaceError) as ref:
            lg_memory.InMemoryStore().put(ns, key, {})
        with pytest.raises(InvalidNamespaceError) as ours:
            InMemoryStore().put(ns, key, {})
        assert str(ours.value) == str(ref.value)


def test_ttl_needs_a_ttl_config() -> None:
    with pytest.raises(NotImplementedError, match="TTL is not supported by InMemoryStore"):
        InMemoryStore().put(("a",), "k", {}, ttl=1)
    with pytest.raises(NotImplementedError, match="TTL is not supported by InMemoryStore"):
        lg_memory.InMemoryStore().put(("a",), "k", {}, ttl=1)


def test_ttl_expiry_refresh_and_sweep() -> None:
    store = InMemoryStore(ttl={"default_ttl": 0.3 / 60, "omit_expired": True})
    store.put(("a",), "short", {"v": 1})
    store.put(("a",), "forever", {"v": 2}, ttl=None)
    time.sleep(0.2)
    assert store.get(("a",), "short") is not None  # refreshed: 0.3 s from now
    time.sleep(0.2)
    assert store.get(("a",), "short", refresh_ttl=False) is not None
    time.sleep(0.2)
    assert store.get(("a",), "short") is None  # expired and hidden (omit_expired)
    assert [r.key for r in store.search(("a",))] == ["forever"]
    assert store.sweep_ttl() == 1
    assert store.list_namespaces() == [("a",)]
    shown = InMemoryStore(ttl={"default_ttl": 0.1 / 60})
    shown.put(("a",), "k", {})
    time.sleep(0.15)
    assert shown.get(("a",), "k", refresh_ttl=False) is not None  # until swept
    assert shown.sweep_ttl() == 1
    assert shown.get(("a",), "k") is None


def test_ttl_sweeper_thread_deletes_expired_items_until_stopped() -> None:
    store = InMemoryStore(ttl={"default_ttl": 0.05 / 60, "sweep_interval_minutes": 0.05 / 60})
    assert InMemoryStore().start_ttl_sweeper().result(timeout=1) is None  # no TTL config
    future = store.start_ttl_sweeper()
    assert store.start_ttl_sweeper() is not future  # already running: no second thread
    store.put(("a",), "k", {"v": 1})
    deadline = time.monotonic() + 5
    while store._data.get(("a",)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.get(("a",), "k") is None  # swept by the thread, not by a call
    assert store.stop_ttl_sweeper(timeout=5)
    assert future.result(timeout=1) is None
    assert store.stop_ttl_sweeper()  # stopping a stopped sweeper


def test_async_search_takes_the_sync_paths_with_langgraphs_results() -> None:
    # asearch runs search's own implementation (first page, filtered, offset, ranked)
    calls = [
        {"limit": 3},
        {"limit": 2, "offset": 3},
        {"filter": {"kind": "y"}, "limit": 10},
        {"filter": {"n": {"$gte": 2}}, "limit": 2, "offset": 1},
        {"limit": 0},
        {"query": "hello", "limit": 3},
        {"query": "zzz", "filter": {"kind": "x"}, "limit": 5},
    ]

    async def run(store):
        for i in range(6):
            text = ["hello world", "zzz", "abc"][i % 3]
            await store.aput(
                ("docs", f"u{i % 2}"), f"k{i}", {"n": i, "kind": "xy"[i % 2], "text": text}
            )
        return [norm(await store.asearch(("docs",), **kw)) for kw in calls]

    for index in (None, {"dims": 6, "embed": aembed, "fields": ["text"]}):
        ours = asyncio.run(run(InMemoryStore(index=index)))
        ref = asyncio.run(run(lg_memory.InMemoryStore(index=index)))
        assert ours == ref
        store = InMemoryStore(index=index)
        asyncio.run(run(store))
        if index is None:  # the sync search gives the same pages
            assert [norm(store.search(("docs",), **kw)) for kw in calls] == ours


def test_in_and_nin_filters() -> None:
    store = InMemoryStore()
    for i in range(5):
        store.put(("a",), str(i), {"n": i, "tag": "ab"[i % 2]})
    assert [r.key for r in store.search(("a",), filter={"n": {"$in": [1, 3, 9]}})] == ["1", "3"]
    assert [r.key for r in store.search(("a",), filter={"tag": {"$nin": ["a"]}})] == ["1", "3"]
    with pytest.raises(ValueError, match="Unsupported operator: \\$regex"):
        store.search(("a",), filter={"n": {"$regex": "x"}})


def test_subclass_overriding_batch_sees_every_call() -> None:
    seen = []

    class Spy(InMemoryStore):
        def batch(self, ops):
            ops = list(ops)
            seen.extend(type(op).__name__ for op in ops)
            return super().batch(ops)

    spy = Spy()
    spy.put(("a",), "k", {"v": 1})
    assert spy.get(("a",), "k").value == {"v": 1}
    spy.search(("a",))
    spy.delete(("a",), "k")
    assert seen == ["PutOp", "GetOp", "SearchOp", "PutOp"]


def test_ops_are_langgraph_shaped() -> None:
    assert GetOp(("a",), "k") == lg_base.GetOp(("a",), "k")
    assert SearchOp(("a",)) == lg_base.SearchOp(("a",))
    assert PutOp(("a",), "k", {}) == lg_base.PutOp(("a",), "k", {})
    assert ListNamespacesOp() == lg_base.ListNamespacesOp()
    assert MatchCondition("prefix", ("a",)) == lg_base.MatchCondition("prefix", ("a",))
