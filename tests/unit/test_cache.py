"""warpgraph.cache: the cache classes (batched get/set, namespaces, TTL expiry, async twins,
SQLite files shared with LangGraph's SqliteCache) and the loop-side pieces of
`pregel/_cache.py` (keys and namespaces as LangGraph makes them, tasks started mid-step)."""

from __future__ import annotations

import sys
import time
from collections import deque
from types import SimpleNamespace
from typing import Any

import pytest
from warpgraph.cache.base import BaseCache
from warpgraph.cache.memory import InMemoryCache
from warpgraph.cache.redis import RedisCache
from warpgraph.cache.sqlite import SqliteCache
from warpgraph.pregel import _cache
from warpgraph.types import CacheKey, CachePolicy, PregelExecutableTask, Send

NS_A = ("__pregel_ns_writes", "mod.fn", "a")
NS_B = ("__pregel_ns_writes", "mod.fn", "b")


@pytest.fixture(params=["memory", "sqlite-memory", "sqlite-file"])
def cache(request: pytest.FixtureRequest, tmp_path: Any) -> BaseCache:
    if request.param == "memory":
        return InMemoryCache()
    if request.param == "sqlite-memory":
        return SqliteCache(path=":memory:")
    return SqliteCache(path=str(tmp_path / "cache.db"))


class Clock:
    """Stands in for time.time (every cache reads the clock through it)."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(time, "time", c)
    return c


def test_roundtrip_batched_get(cache: BaseCache) -> None:
    writes = [("n", 2), ("items", ["x", {"k": (1, 2)}]), ("__pregel_tasks", Send("w", {"a": 1}))]
    cache.set({(NS_A, "k1"): (writes, None), (NS_B, "k1"): ([("n", 3)], None)})
    got = cache.get([(NS_A, "k1"), (NS_A, "missing"), (NS_B, "k1"), (("other",), "k1")])
    assert set(got) == {(NS_A, "k1"), (NS_B, "k1")}
    # (msgpack has no tuples: nested ones come back as lists, as with LangGraph's caches)
    assert [tuple(w) for w in got[(NS_A, "k1")]][:2] == [("n", 2), ("items", ["x", {"k": [1, 2]}])]
    send = got[(NS_A, "k1")][2][1]
    assert isinstance(send, Send) and send.node == "w" and send.arg == {"a": 1}
    assert [tuple(w) for w in got[(NS_B, "k1")]] == [("n", 3)]
    assert cache.get([]) == {}


def test_values_are_copies(cache: BaseCache) -> None:
    value = {"items": [1, 2]}
    cache.set({(NS_A, "k"): (value, None)})
    value["items"].append(3)
    first = cache.get([(NS_A, "k")])[(NS_A, "k")]
    assert first == {"items": [1, 2]}
    first["items"].append(4)
    assert cache.get([(NS_A, "k")])[(NS_A, "k")] == {"items": [1, 2]}


def test_overwrite(cache: BaseCache) -> None:
    cache.set({(NS_A, "k"): ("old", None)})
    cache.set({(NS_A, "k"): ("new", None)})
    assert cache.get([(NS_A, "k")]) == {(NS_A, "k"): "new"}


def test_ttl_expiry(cache: BaseCache, clock: Clock) -> None:
    cache.set(
        {(NS_A, "short"): ("s", 10), (NS_A, "long"): ("l", 100), (NS_A, "never"): ("n", None)}
    )
    clock.now += 9.5
    assert set(cache.get([(NS_A, "short"), (NS_A, "long"), (NS_A, "never")])) == {
        (NS_A, "short"),
        (NS_A, "long"),
        (NS_A, "never"),
    }
    clock.now += 1
    assert cache.get([(NS_A, "short"), (NS_A, "long"), (NS_A, "never")]) == {
        (NS_A, "long"): "l",
        (NS_A, "never"): "n",
    }
    clock.now += 1000
    assert cache.get([(NS_A, "short"), (NS_A, "long"), (NS_A, "never")]) == {(NS_A, "never"): "n"}
    # an expired entry stored again lives again
    cache.set({(NS_A, "short"): ("s2", 10)})
    assert cache.get([(NS_A, "short")]) == {(NS_A, "short"): "s2"}


def test_ttl_zero_is_never_returned(cache: BaseCache, clock: Clock) -> None:
    cache.set({(NS_A, "k"): ("v", 0)})
    assert cache.get([(NS_A, "k")]) == {}


def test_clear_namespaces(cache: BaseCache) -> None:
    other = ("__pregel_ns_writes", "mod.fn")
    cache.set({(NS_A, "k"): (1, None), (NS_B, "k"): (2, None), (other, "k"): (3, None)})
    cache.clear([NS_A, ("not", "there")])
    assert cache.get([(NS_A, "k"), (NS_B, "k"), (other, "k")]) == {(NS_B, "k"): 2, (other, "k"): 3}
    cache.clear()
    assert cache.get([(NS_B, "k"), (other, "k")]) == {}


async def test_async_twins(cache: BaseCache, clock: Clock) -> None:
    await cache.aset({(NS_A, "k"): ([("n", 1)], 5), (NS_B, "k"): ("b", None)})
    got = await cache.aget([(NS_A, "k"), (NS_B, "k")])
    assert [tuple(w) for w in got[(NS_A, "k")]] == [("n", 1)] and got[(NS_B, "k")] == "b"
    clock.now += 6
    assert await cache.aget([(NS_A, "k"), (NS_B, "k")]) == {(NS_B, "k"): "b"}
    await cache.aclear([NS_B])
    assert await cache.aget([(NS_B, "k")]) == {}


def test_many_keys_in_one_get(cache: BaseCache) -> None:
    pairs = {(NS_A, f"k{i}"): (i, None) for i in range(1500)}  # over one SELECT's variables
    cache.set(pairs)
    keys = [*pairs, (NS_B, "k1")]
    assert cache.get(keys) == {k: v for k, (v, _) in pairs.items()}


def test_sqlite_file_persists_and_is_shared_with_langgraph(tmp_path: Any) -> None:
    from langgraph.cache.sqlite import SqliteCache as LgSqliteCache

    path = str(tmp_path / "shared.db")
    ours = SqliteCache(path=path)
    ours.set({(NS_A, "k"): ([("n", 2), ("items", ["a"])], None)})
    ours.close()
    again = SqliteCache(path=path)
    assert [tuple(w) for w in again.get([(NS_A, "k")])[(NS_A, "k")]] == [("n", 2), ("items", ["a"])]
    theirs = LgSqliteCache(path=path)
    assert [tuple(w) for w in theirs.get([(NS_A, "k")])[(NS_A, "k")]] == [
        ("n", 2),
        ("items", ["a"]),
    ]
    theirs.set({(NS_B, "k"): ({"from": "langgraph"}, None)})
    assert again.get([(NS_B, "k")]) == {(NS_B, "k"): {"from": "langgraph"}}


class FakeRedis:
    """The slice of redis-py's client RedisCache uses, over a dict."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.ttls: dict[str, int] = {}

    def mget(self, names: list[str]) -> list[bytes | None]:
        return [self.data.get(n) for n in names]

    def pipeline(self) -> Any:
        ops: list = []
        redis = self

        class Pipe:
            def set(self, name: str, value: bytes) -> None:
                ops.append((name, value, None))

            def setex(self, name: str, ttl: int, value: bytes) -> None:
                ops.append((name, value, ttl))

            def execute(self) -> None:
                for name, value, ttl in ops:
                    redis.data[name] = value
                    if ttl is not None:
                        redis.ttls[name] = ttl

        return Pipe()

    def keys(self, pattern: str) -> list[str]:
        assert pattern.endswith("*")
        return [k for k in self.data if k.startswith(pattern[:-1])]

    def delete(self, *names: str) -> None:
        for n in names:
            self.data.pop(n, None)


class DownRedis:
    def __getattr__(self, name: str) -> Any:
        raise ConnectionError("redis is down")


def test_redis_cache_layout_ttl_and_clear() -> None:
    client = FakeRedis()
    cache = RedisCache(client, prefix="p:")
    cache.set({(NS_A, "k"): ([("n", 1)], 30), (NS_B, "k"): ("b", None), ((), "bare"): (1, None)})
    assert set(client.data) == {
        "p:__pregel_ns_writes:mod.fn:a:k",
        "p:__pregel_ns_writes:mod.fn:b:k",
        "p:bare",
    }
    assert client.ttls == {"p:__pregel_ns_writes:mod.fn:a:k": 30}
    assert client.data["p:__pregel_ns_writes:mod.fn:b:k"].startswith(b"msgpack:")
    got = cache.get([(NS_A, "k"), (NS_B, "k"), (NS_B, "nope"), ((), "bare")])
    assert [tuple(w) for w in got[(NS_A, "k")]] == [("n", 1)]
    assert got[(NS_B, "k")] == "b" and got[((), "bare")] == 1 and len(got) == 3
    client.data["p:__pregel_ns_writes:mod.fn:b:k"] = b"garbage"
    assert (NS_B, "k") not in cache.get([(NS_B, "k")])  # unreadable: a miss
    cache.clear([NS_A])
    assert set(client.data) == {"p:__pregel_ns_writes:mod.fn:b:k", "p:bare"}
    cache.clear()
    assert client.data == {}


def test_redis_unreachable_is_a_miss() -> None:
    cache = RedisCache(DownRedis())
    assert cache.get([(NS_A, "k")]) == {}
    cache.clear()  # no error either


def test_redis_from_url_without_redis_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(ImportError, match="pip install redis"):
        RedisCache.from_url("redis://localhost:6379/0")


# ------------------------------------------------------------------ loop-side pieces
def _graph(lib: str, cache: Any) -> Any:
    mod = __import__(f"{lib}.graph", fromlist=["StateGraph"])
    types = __import__(f"{lib}.types", fromlist=["CachePolicy"])
    from typing import TypedDict

    class S(TypedDict):
        n: int

    g = mod.StateGraph(S)
    g.add_node("inc", _inc, cache_policy=types.CachePolicy(key_func=lambda s: f"n={s['n']}"))
    g.add_node("plain", _inc)
    g.add_edge(mod.START, "inc")
    g.add_edge("inc", "plain")
    return g.compile(cache=cache)


def _inc(s: dict) -> dict:
    return {"n": s["n"] + 1}


def test_keys_and_namespaces_match_langgraph() -> None:
    from langgraph.cache.memory import InMemoryCache as LgInMemoryCache

    ours, theirs = InMemoryCache(), LgInMemoryCache()
    assert _graph("warpgraph", ours).invoke({"n": 1}) == {"n": 3}
    assert _graph("langgraph", theirs).invoke({"n": 1}) == {"n": 3}
    assert {ns: set(v) for ns, v in ours._cache.items()} == {
        ns: set(v) for ns, v in theirs._cache.items()
    }
    assert list(ours._cache) == [("__pregel_ns_writes", f"{__name__}._inc", "inc")]


async def _ainc(s: dict) -> dict:
    return {"n": s["n"] + 1}


async def test_default_policy_keys_match_langgraph() -> None:
    """The default key function and async nodes ("__dynamic__": no sync function to name)."""
    from typing import TypedDict

    from langgraph.cache.memory import InMemoryCache as LgInMemoryCache

    class S(TypedDict):
        n: int

    seen = []
    for lib, cache in (("langgraph", LgInMemoryCache()), ("warpgraph", InMemoryCache())):
        mod = __import__(f"{lib}.graph", fromlist=["StateGraph"])
        types = __import__(f"{lib}.types", fromlist=["CachePolicy"])
        g = mod.StateGraph(S)
        g.add_node("sync", _inc, cache_policy=types.CachePolicy())
        g.add_node("async", _ainc, cache_policy=types.CachePolicy(ttl=60))
        g.add_edge(mod.START, "sync")
        g.add_edge("sync", "async")
        assert await g.compile(cache=cache).ainvoke({"n": 1}) == {"n": 3}
        seen.append({ns: sorted(v) for ns, v in cache._cache.items()})
    assert seen[0] == seen[1]
    assert ("__pregel_ns_writes", "__dynamic__", "async") in seen[1]


def test_clear_cache_per_node() -> None:
    cache = InMemoryCache()
    graph = _graph("warpgraph", cache)
    graph.invoke({"n": 1})
    graph.clear_cache(["plain", "unknown"])
    assert len(cache._cache) == 1
    graph.clear_cache()
    assert cache._cache == {}


async def test_aclear_cache_and_no_cache_error() -> None:
    cache = InMemoryCache()
    graph = _graph("warpgraph", cache)
    await graph.ainvoke({"n": 1})
    await graph.aclear_cache(["inc"])
    assert cache._cache == {}
    bare = _graph("warpgraph", None)
    with pytest.raises(ValueError, match="No cache is set for this graph. Cannot clear cache."):
        bare.clear_cache()
    with pytest.raises(ValueError, match="No cache is set for this graph"):
        await bare.aclear_cache()


def test_cache_from_config_key() -> None:
    cache = InMemoryCache()
    graph = _graph("warpgraph", None)
    cfg = {"configurable": {"__pregel_cache": cache}}
    chunks = list(graph.stream({"n": 5}, cfg)) + list(graph.stream({"n": 5}, cfg))
    assert chunks[2] == {"inc": {"n": 6}, "__metadata__": {"cached": True}}
    assert chunks[0] == {"inc": {"n": 6}} and len(cache._cache) == 1


def test_make_key() -> None:
    policy = CachePolicy(key_func=lambda *a, **k: f"{a}{sorted(k.items())}", ttl=7)
    key = _cache.make_key(policy, ("ns",), 1, x=2)
    assert key == CacheKey(("ns",), key.key, 7) and len(key.key) == 32
    assert _cache.make_key(policy, ("ns",), 1, x=2) == key
    assert _cache.make_key(policy, ("ns",), 1, x=3).key != key.key
    raw = CachePolicy(key_func=lambda v: b"bytes")
    assert (
        _cache.make_key(raw, ("ns",), 0).key
        == _cache.make_key(CachePolicy(key_func=lambda v: "bytes"), ("ns",), 0).key
    )


def test_identifier() -> None:
    assert _cache.identifier(_inc) == f"{__name__}._inc"
    assert _cache.call_namespace(_inc) == ("__pregel_ns_writes", f"{__name__}._inc")
    assert _cache.identifier(object()) is None


def _call_task(name: str, ck: CacheKey | None) -> Any:
    return PregelExecutableTask(
        name, None, None, deque(), {}, (), (), ck, f"id-{name}", ("__pregel_push", 0)
    )


def _fake_loop(cache: Any) -> Any:
    loop = SimpleNamespace(cache=cache, graph=SimpleNamespace(nodes={}, cache_policy=None))
    loop.put = []
    loop.put_writes = lambda tid, writes, cached=False: loop.put.append((tid, list(writes), cached))
    return loop


def test_match_pushed_stores_then_answers() -> None:
    cache = InMemoryCache()
    loop = _fake_loop(cache)
    key = CacheKey(("__pregel_ns_writes", "m.f"), "abc", None)
    done = _call_task("f", key)
    done.writes.extend([("__return__", 4)])
    _cache.remember(loop, done)  # an earlier call of the step finished
    again, other, plain = (
        _call_task("f", key),
        _call_task("g", key._replace(key="zzz")),
        _call_task("h", None),
    )
    hits = _cache.match_pushed(loop, [again, other, plain])
    assert hits == [again] and list(again.writes) == [("__return__", 4)]
    assert loop.put == [("id-f", [("__return__", 4)], True)]
    assert not other.writes and not plain.writes
    assert _cache.match_pushed(_fake_loop(None), [again]) == []


async def test_amatch_pushed() -> None:
    cache = SqliteCache(path=":memory:")
    loop = _fake_loop(cache)
    key = CacheKey(("__pregel_ns_writes", "m.f"), "abc", None)
    cache.set({(key.ns, key.key): ([("__return__", "cached")], None)})
    task = _call_task("f", key)
    assert await _cache.amatch_pushed(loop, [task]) == [task]
    assert list(task.writes) == [("__return__", "cached")] and loop.put[0][2] is True


def test_interrupted_or_failed_tasks_are_not_remembered() -> None:
    loop = _fake_loop(InMemoryCache())
    key = CacheKey(("ns",), "k", None)
    for marker in ("__interrupt__", "__error__"):
        task = _call_task("f", key)
        task.writes.append((marker, "x"))
        _cache.remember(loop, task)
    assert not getattr(loop, "_cache_pending", None)
