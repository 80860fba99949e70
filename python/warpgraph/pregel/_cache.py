"""Task result caching in the run loop (LangGraph's node / task `CachePolicy`).

Only runs whose graph has a cache (`compile(cache=)`, `entrypoint(cache=)`, or one passed
under `configurable["__pregel_cache"]`) come here; the loop keeps `loop.cache` None
otherwise and none of this is called.

A task is cacheable when its `cache_key` (a `types.CacheKey`) is set. Graph nodes get theirs
here, from the node's policy or the graph's default one, when a step starts; other
executable tasks (the functional API's task calls) come with theirs. Per step:

1. `step_lookup`: one batched `cache.get` for every keyed task of the step that has no
   writes yet; a hit's stored writes become the task's writes and go through
   `put_writes(..., cached=True)` (saved like any finished task's, `updates` chunks marked
   `{"__metadata__": {"cached": True}}`), so the task does not run.
2. `remember`: a keyed task that finished (not failed, not interrupted) queues its writes.
3. `store`: after the step's tasks ran (also when one of them failed), one batched
   `cache.set` with what was queued.

Cache calls are step machine operations `(CACHE_OP, cache, method, argument)`: the sync
driver calls `cache.method(argument)` (`perform`), the async one awaits
`cache.amethod(argument)` (`aperform`). Tasks started during a step (`match_pushed` /
`amatch_pushed`) run the same generator with a sync or an async performer.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Sequence
from typing import Any

from warpgraph._internal._constants import CACHE_NS_WRITES, ERROR, INTERRUPT
from warpgraph._internal._machines import run_async, run_sync
from warpgraph.types import CacheKey

__all__ = (
    "CACHE_OP",
    "aclear_cache",
    "amatch_pushed",
    "aperform",
    "call_namespace",
    "clear_cache",
    "identifier",
    "make_key",
    "match_pushed",
    "node_namespace",
    "perform",
    "remember",
    "step_lookup",
    "store",
)

CACHE_OP = "cache"
_DYNAMIC = "__dynamic__"  # the namespace part of a function with no importable name
_XXH: Any = None


# ------------------------------------------------------------------ keys and namespaces
def identifier(obj: Any) -> str | None:
    """`module.qualname` of the function behind a node (PregelNode, runnable sequence or
    callable wrapper) or of a plain function; None when it has no name or no module."""
    from warpgraph._internal._runnable import RunnableCallable, RunnableSeq
    from warpgraph.pregel._read import PregelNode

    if isinstance(obj, PregelNode):
        obj = obj.bound
    if isinstance(obj, RunnableSeq):
        obj = obj.steps[0]
    if isinstance(obj, RunnableCallable):
        obj = obj.func  # (None for an async-only function: it counts as dynamic)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None)
    if name is None or module is None:
        return None
    return f"{module}.{name}"


def node_namespace(node: Any, name: str) -> tuple[str, ...]:
    """The cache namespace of graph node `name` (what `clear_cache` drops for it)."""
    return (CACHE_NS_WRITES, identifier(node) or _DYNAMIC, name)


def call_namespace(func: Any) -> tuple[str, ...]:
    """The cache namespace of a functional-API task function."""
    return (CACHE_NS_WRITES, identifier(func) or _DYNAMIC)


def make_key(policy: Any, ns: tuple[str, ...], *args: Any, **kwargs: Any) -> CacheKey:
    """The CacheKey of a call with `args` / `kwargs` under `policy` in namespace `ns`:
    the xxh3-128 hex digest of `policy.key_func(*args, **kwargs)`."""
    global _XXH
    if _XXH is None:
        from xxhash import xxh3_128_hexdigest as _XXH
    raw = policy.key_func(*args, **kwargs)
    return CacheKey(ns, _XXH(raw.encode() if isinstance(raw, str) else raw), policy.ttl)


def _node_policies(graph: Any) -> dict[str, tuple[Any, tuple[str, ...]]]:
    """Per node with a policy (its own, else the graph's): (policy, namespace). Kept on the
    graph until `validate()` rebuilds it."""
    found = graph.__dict__.get("_cache_policies_cache")
    if found is None:
        default = getattr(graph, "cache_policy", None)
        found = {}
        for name, node in graph.nodes.items():
            policy = getattr(node, "cache_policy", None) or default
            if policy is not None:
                found[name] = (policy, node_namespace(node, name))
        graph.__dict__["_cache_policies_cache"] = found
    return found


_set_cache_key = object.__setattr__  # the tasks are frozen dataclasses


def _keyed(loop: Any, tasks: Iterable[Any]) -> dict[tuple, Any]:
    """{(ns, key): task} for the tasks without writes that have (or now get) a cache key."""
    policies = _node_policies(loop.graph)
    out: dict[tuple, Any] = {}
    for task in tasks:
        if task.writes:
            continue
        ck = task.cache_key
        if ck is None:
            entry = policies.get(task.name)
            if entry is None:
                continue
            node = loop.graph.nodes.get(task.name)
            if node is None or task.proc is not node.node:
                continue  # (a task of another kind under a node's name)
            ck = make_key(entry[0], entry[1], task.input)
            _set_cache_key(task, "cache_key", ck)
        out[(ck.ns, ck.key)] = task
    return out


# ------------------------------------------------------------------ the step machine side
def _lookup(loop: Any, tasks: Iterable[Any]) -> Generator[tuple, Any, list]:
    """Give the cached writes to the keyed tasks the cache holds; returns those tasks."""
    wanted = _keyed(loop, tasks)
    if not wanted:
        return []
    found = yield (CACHE_OP, loop.cache, "get", tuple(wanted))
    hits = []
    for full_key, writes in (found or {}).items():
        task = wanted.get((tuple(full_key[0]), full_key[1]))
        if task is None or task.writes:
            continue
        task.writes.extend((c, v) for c, v in writes)
        hits.append(task)
    return hits


def step_lookup(loop: Any) -> Generator[tuple, Any, None]:
    """Before a step's tasks run: answer what the cache can (see module doc, 1.)."""
    hits = yield from _lookup(loop, list(loop.tasks.values()))
    for task in hits:
        loop.put_writes(task.id, task.writes, cached=True)
    if loop._io:
        yield from loop._flush_io()


def remember(loop: Any, task: Any) -> None:
    """A task finished: queue its writes for the cache if it has a key (module doc, 2.)."""
    ck = task.cache_key
    if ck is None:
        return
    writes = list(task.writes)
    if any(c == INTERRUPT or c == ERROR for c, _ in writes):
        return  # a hit would skip the task without raising / interrupting
    pending = loop.__dict__.setdefault("_cache_pending", {})
    pending[(ck.ns, ck.key)] = (writes, ck.ttl)


def store(loop: Any) -> Generator[tuple, Any, None]:
    """Write what finished tasks queued, in one `set` (module doc, 3.)."""
    pending = loop.__dict__.get("_cache_pending")
    if pending:
        loop._cache_pending = {}
        yield (CACHE_OP, loop.cache, "set", pending)


def _pushed(loop: Any, tasks: Sequence[Any]) -> Generator[tuple, Any, list]:
    yield from store(loop)  # (an earlier task of this step may have made the same call)
    hits = yield from _lookup(loop, tasks)
    for task in hits:
        loop.put_writes(task.id, task.writes, cached=True)
    return hits


# ------------------------------------------------------------------ performing the ops
def perform(op: tuple) -> Any:
    """Sync driver: run a `(CACHE_OP, cache, method, argument)` operation."""
    return getattr(op[1], op[2])(op[3])


async def aperform(op: tuple) -> Any:
    """Async driver: await the `a`-prefixed twin of the operation's method."""
    return await getattr(op[1], "a" + op[2])(op[3])


def _route(op: tuple) -> tuple:
    return getattr(op[1], op[2]), (op[3],), None, None


def _aroute(op: tuple) -> tuple:
    return getattr(op[1], "a" + op[2]), (op[3],), None, None


def match_pushed(loop: Any, tasks: Sequence[Any]) -> list:
    """For tasks started while a step runs (sync runner): store what finished tasks queued,
    then answer the keyed ones from the cache (their writes are put, marked cached).
    Returns the tasks answered; the caller runs the others."""
    if loop.cache is None:
        return []
    return run_sync(_pushed(loop, tasks), _route)


async def amatch_pushed(loop: Any, tasks: Sequence[Any]) -> list:
    """Async twin of `match_pushed`."""
    if loop.cache is None:
        return []
    return await run_async(_pushed(loop, tasks), _aroute)


# ------------------------------------------------------------------ Pregel.clear_cache
def _namespaces(graph: Any, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
    if not graph.cache:
        raise ValueError("No cache is set for this graph. Cannot clear cache.")
    names = nodes or list(graph.nodes)
    return [node_namespace(graph.nodes[n], n) for n in names if n in graph.nodes]


def clear_cache(graph: Any, nodes: Sequence[str] | None = None) -> None:
    """Drop the cached results of `nodes` (default: every node) of `graph`."""
    namespaces = _namespaces(graph, nodes)
    graph.cache.clear(namespaces)


async def aclear_cache(graph: Any, nodes: Sequence[str] | None = None) -> None:
    """Async twin of `clear_cache`."""
    namespaces = _namespaces(graph, nodes)
    await graph.cache.aclear(namespaces)
