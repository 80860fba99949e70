"""Scenarios: node result caching (`add_node(cache_policy=)`, `compile(cache=)`).

Each build makes a fresh cache, so hits show from the second input on: a hit's `updates`
chunk carries `"__metadata__": {"cached": True}`, a cached task has no task-result chunk
and writes no custom chunks, and its writes are saved as pending writes like a task that
ran (compared through the checkpoints)."""

import operator
from typing import Annotated, TypedDict

from .harness import scenario
from .scenarios_core import CP, Acc, thread


def _memory_cache(lib):
    return lib.module("cache.memory").InMemoryCache()


def _sqlite_cache(lib):
    return lib.module("cache.sqlite").SqliteCache(path=":memory:")


def _chain(lib, cache, checkpointer=None, policy=None, **node_kw):
    """start -> double (cached) -> tail; `double` also writes a custom chunk."""

    def double(s):
        lib.get_stream_writer()({"ran": "double", "n": s["n"]})
        return {"n": s["n"] * 2, "items": [f"double{s['n']}"]}

    g = lib.StateGraph(Acc)
    g.add_node("double", double, cache_policy=policy or lib.types.CachePolicy(), **node_kw)
    g.add_node("tail", lambda s: {"items": ["tail"]})
    g.add_edge(lib.START, "double")
    g.add_edge("double", "tail")
    g.add_edge("tail", lib.END)
    return g.compile(cache=cache, checkpointer=checkpointer)


@scenario()
def cache_node_hits(lib):
    return _chain(lib, _memory_cache(lib)), [{"n": 1}, {"n": 1}, {"n": 2}, {"n": 1}], None


@scenario()
def cache_node_hits_sqlite(lib):
    return _chain(lib, _sqlite_cache(lib)), [{"n": 3}, {"n": 3}, {"n": 4}], None


@scenario(durabilities=CP)
def cache_node_saver(lib):
    # the key is `n` alone (the accumulated items differ per run on one thread)
    policy = lib.types.CachePolicy(key_func=lambda s: str(s["n"]))
    graph = _chain(lib, _memory_cache(lib), lib.InMemorySaver(), policy)
    return graph, [{"n": 1}, {"n": 1}, {"n": 2}], [thread("t1"), thread("t2"), thread("t2")]


@scenario()
def cache_ttl_zero_never_hits(lib):
    policy = lib.types.CachePolicy(ttl=0)
    return _chain(lib, _memory_cache(lib), policy=policy), [{"n": 1}, {"n": 1}], None


@scenario()
def cache_node_defaults(lib):
    def inc(s):
        return {"n": s["n"] + 1, "items": ["inc"]}

    g = lib.StateGraph(Acc)
    g.set_node_defaults(cache_policy=lib.types.CachePolicy())
    g.add_node("inc", inc)
    g.add_node("again", inc)
    g.add_edge(lib.START, "inc")
    g.add_edge("inc", "again")
    return g.compile(cache=_memory_cache(lib)), [{"n": 0}, {"n": 0}, {"n": 1}], None


class Fan(TypedDict, total=False):
    jobs: list
    done: Annotated[list, operator.add]


@scenario(parallel=True)
def cache_sends(lib):
    def square(job):
        return {"done": [job * job]}

    g = lib.StateGraph(Fan)
    g.add_node("plan", lambda s: {})
    g.add_node("square", square, cache_policy=lib.types.CachePolicy(key_func=str))
    g.add_edge(lib.START, "plan")
    g.add_conditional_edges("plan", lambda s: [lib.Send("square", j) for j in s["jobs"]])
    # the same argument twice in one step: both miss (one lookup per step), both run
    inputs = [{"jobs": [1, 2, 2]}, {"jobs": [2, 3]}, {"jobs": [1, 3]}]
    return g.compile(cache=_memory_cache(lib)), inputs, None


@scenario(parallel=True)
def cache_parallel_branches(lib):
    def left(s):
        return {"items": [f"left{s['n']}"]}

    def right(s):
        return {"items": [f"right{s['n']}"]}

    g = lib.StateGraph(Acc)
    g.add_node("left", left, cache_policy=lib.types.CachePolicy(key_func=lambda s: str(s["n"])))
    g.add_node("right", right)
    g.add_node("join", lambda s: {"acc": len(s["items"])})
    g.add_edge(lib.START, "left")
    g.add_edge(lib.START, "right")
    g.add_edge(["left", "right"], "join")
    return g.compile(cache=_memory_cache(lib)), [{"n": 1}, {"n": 1}, {"n": 2}], None


@scenario()
def cache_command_goto(lib):
    def route(s):
        target = "even" if s["n"] % 2 == 0 else "odd"
        return lib.Command(update={"items": [f"route{s['n']}"]}, goto=target)

    g = lib.StateGraph(Acc)
    g.add_node("route", route, cache_policy=lib.types.CachePolicy(), destinations=("even", "odd"))
    g.add_node("even", lambda s: {"items": ["even"]})
    g.add_node("odd", lambda s: {"items": ["odd"]})
    g.add_edge(lib.START, "route")
    inputs = [{"n": 1}, {"n": 1}, {"n": 2}, {"n": 2}]
    return g.compile(cache=_memory_cache(lib)), inputs, None


@scenario(durabilities=CP)
def cache_failed_run_keeps_hits(lib):
    # `first` finishes and is cached; `boom` fails; the next run answers `first` from
    # the cache and fails again; a failure itself is never cached
    def boom(s):
        if s["n"] > 1:
            raise ValueError(f"boom at {s['n']}")
        return {"items": ["boom ok"]}

    g = lib.StateGraph(Acc)
    g.add_node(
        "first",
        lambda s: {"n": s["n"] + 1, "items": ["first"]},
        cache_policy=lib.types.CachePolicy(key_func=lambda s: str(s["n"])),
    )
    g.add_node("boom", boom, cache_policy=lib.types.CachePolicy(key_func=lambda s: str(s["n"])))
    g.add_edge(lib.START, "first")
    g.add_edge("first", "boom")
    graph = g.compile(cache=_memory_cache(lib), checkpointer=lib.InMemorySaver())
    inputs = [{"n": 1}, {"n": 1}, {"n": 0}, {"n": 0}]
    return graph, inputs, [thread("a"), thread("b"), thread("c"), thread("d")]


@scenario(durabilities=CP)
def cache_interrupt_not_cached(lib):
    def ask(s):
        answer = lib.interrupt(f"n is {s['n']}?")
        return {"items": [f"answer {answer}"]}

    g = lib.StateGraph(Acc)
    g.add_node("ask", ask, cache_policy=lib.types.CachePolicy(key_func=lambda s: str(s["n"])))
    g.add_node("after", lambda s: {"items": ["after"]})
    g.add_edge(lib.START, "ask")
    g.add_edge("ask", "after")
    graph = g.compile(cache=_memory_cache(lib), checkpointer=lib.InMemorySaver())
    inputs = [{"n": 1}, lib.Command(resume="yes"), {"n": 1}, lib.Command(resume="again")]
    return graph, inputs, [thread("a"), thread("a"), thread("b"), thread("b")]


@scenario(subgraphs=True)
def cache_subgraph_node(lib):
    child = lib.StateGraph(Acc)
    child.add_node("inner", lambda s: {"items": [f"inner{s['n']}"]})
    child.add_edge(lib.START, "inner")

    g = lib.StateGraph(Acc)
    g.add_node("sub", child.compile(), cache_policy=lib.types.CachePolicy())
    g.add_node("post", lambda s: {"items": ["post"]})
    g.add_edge(lib.START, "sub")
    g.add_edge("sub", "post")
    return g.compile(cache=_memory_cache(lib)), [{"n": 1}, {"n": 1}], None


@scenario()
def cache_pregel_node_builder(lib):
    """A Pregel node built with NodeBuilder.add_cache_policy; the graph's cache is given to
    Pregel directly."""
    pregel = lib.module("pregel")
    node = (
        pregel.NodeBuilder()
        .subscribe_only("input")
        .do(lambda x: x * 10)
        .add_cache_policy(lib.types.CachePolicy(key_func=str))
        .write_to("output")
    )
    graph = pregel.Pregel(
        nodes={"times10": node},
        channels={"input": lib.EphemeralValue(int), "output": lib.LastValue(int)},
        input_channels="input",
        output_channels="output",
        cache=_memory_cache(lib),
    )
    return graph, [1, 1, 2, 1], None
