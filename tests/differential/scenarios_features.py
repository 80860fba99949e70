"""Scenarios: messages, subgraphs, errors, interrupts, custom stream, context, retry, config."""

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

from ._build import linear
from .harness import scenario
from .scenarios_core import CP, Acc, N, abc_chain, thread


@scenario(durabilities=CP)
def messages_state(lib):
    def bot(s):
        last = s["messages"][-1]
        return {"messages": [{"role": "ai", "content": f"echo {last.content}"}]}

    def edit(s):
        first = s["messages"][0]
        return {
            "messages": [
                {"role": "user", "content": "edited", "id": first.id},
                {"role": "system", "content": "sys", "id": "fixed-id"},
            ]
        }

    g = lib.StateGraph(lib.MessagesState)
    g.add_node("bot", bot)
    g.add_node("edit", edit)
    g.add_edge(lib.START, "bot")
    g.add_edge("bot", "edit")
    g.add_edge("edit", lib.END)
    inputs = [{"messages": [{"role": "user", "content": "hi"}]}, {"messages": [("user", "again")]}]
    return g.compile(checkpointer=lib.InMemorySaver()), inputs, thread()


def _subgraph_parent(lib, checkpointer):
    class Sub(TypedDict, total=False):
        n: int
        items: Annotated[list, operator.add]
        inner: str

    child = linear(
        lib,
        Sub,
        ("c1", lambda s: {"items": ["c1"], "inner": "x"}),
        ("c2", lambda s: {"items": ["c2"], "n": s["n"] * 3}),
        end=True,
    )

    g = linear(
        lib,
        Acc,
        ("pre", lambda s: {"n": s["n"] + 1}),
        ("sub", child.compile()),
        ("post", lambda s: {"items": ["post"]}),
        end=True,
    )
    return g.compile(checkpointer=checkpointer)


@scenario(subgraphs=True, durabilities=CP)
def subgraph_node(lib):
    return _subgraph_parent(lib, lib.InMemorySaver()), [{"n": 1}], thread()


@scenario(subgraphs=True)
def subgraph_node_no_checkpointer(lib):
    return _subgraph_parent(lib, None), [{"n": 2}], None


def _forever(lib):
    g = lib.StateGraph(Acc)
    g.add_node("spin", lambda s: {"n": s["n"] + 1})
    g.add_edge(lib.START, "spin")
    g.add_edge("spin", "spin")
    return g


@scenario()
def recursion_limit(lib):
    cfgs = [{"recursion_limit": 5}, {"recursion_limit": 1}, None]
    g = lib.StateGraph(Acc)
    g.add_node("spin", lambda s: {"n": s["n"] + 1})
    g.add_edge(lib.START, "spin")
    g.add_conditional_edges("spin", lambda s: "spin" if s["n"] < 30 else lib.END)
    return g.compile(), [{"n": 0}, {"n": 0}, {"n": 0}], cfgs


@scenario(durabilities=CP)
def recursion_limit_saver(lib):
    cfg = thread(recursion_limit=4)
    return _forever(lib).compile(checkpointer=lib.InMemorySaver()), [{"n": 0}, None], cfg


def _failing(lib, checkpointer):
    def boom(s):
        if s["n"] > 1:
            raise ValueError(f"boom at n={s['n']}")
        return {"n": s["n"] + 1}

    g = linear(lib, Acc, ("ok", lambda s: {"n": s["n"] + 1, "items": ["ok"]}), ("boom", boom))
    return g.compile(checkpointer=checkpointer)


@scenario()
def node_exception(lib):
    return _failing(lib, None), [{"n": 0}, {"n": 1}], None


@scenario(durabilities=CP)
def node_exception_saver(lib):
    return _failing(lib, lib.InMemorySaver()), [{"n": 1}, None], thread()


@scenario(parallel=True)
def invalid_concurrent_update(lib):
    g = lib.StateGraph(N)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", lambda s: {"n": 2})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    return g.compile(), [{"n": 0}], None


@scenario()
def invalid_input_and_return(lib):
    g = lib.StateGraph(N)
    g.add_node("bad", lambda s: "not a dict")
    g.add_edge(lib.START, "bad")
    return g.compile(), [{"n": 0}], None


@scenario(durabilities=CP)
def interrupt_before(lib):
    return (
        abc_chain(lib, lib.InMemorySaver(), interrupt_before=["b"]),
        [{"n": 1}, None, None],
        thread(),
    )


@scenario(durabilities=CP)
def interrupt_after(lib):
    return (
        abc_chain(lib, lib.InMemorySaver(), interrupt_after=["a", "c"]),
        [{"n": 1}, None, None],
        thread(),
    )


@scenario(durabilities=CP)
def interrupt_function_resume(lib):
    def ask(s):
        answer = lib.interrupt({"question": "value?", "n": s["n"]})
        return {"items": [("answer", answer)]}

    g = linear(lib, Acc, ("pre", lambda s: {"n": s["n"] + 1}), ("ask", ask), end=True)
    inputs = [{"n": 1}, lib.Command(resume="yes")]
    return g.compile(checkpointer=lib.InMemorySaver()), inputs, thread()


@scenario()
def custom_stream_writer(lib):
    def talk(s):
        writer = lib.get_stream_writer()
        writer({"progress": 1, "n": s["n"]})
        writer("plain text")
        return {"n": s["n"] + 1}

    g = linear(lib, N, ("talk", talk), ("talk2", talk))
    return g.compile(), [{"n": 1}], None


@dataclass
class Ctx:
    user: str
    factor: int = 2


@scenario()
def runtime_context(lib):
    def node(s, runtime: lib.Runtime[Ctx]):
        return {"n": s["n"] * runtime.context.factor, "items": [runtime.context.user]}

    g = lib.StateGraph(Acc, context_schema=Ctx)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    return g.compile(), [{"n": 3}], None, {"context": Ctx(user="ann", factor=5)}


@scenario(durabilities=CP)
def retry_policy(lib):
    attempts = {"flaky": 0}

    def flaky(s):
        attempts["flaky"] += 1
        if attempts["flaky"] < 3:
            raise ConnectionError(f"attempt {attempts['flaky']}")
        return {"items": [("attempts", attempts["flaky"])]}

    policy = lib.RetryPolicy(initial_interval=0.0, jitter=False, max_attempts=3)
    g = lib.StateGraph(Acc)
    g.add_node("flaky", flaky, retry_policy=policy)
    g.add_edge(lib.START, "flaky")
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()


@scenario(subgraphs=True)
def config_seen_by_nodes(lib):
    keys = (
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
        "thread_id",
    )

    def look(s):
        cfg = lib.get_config()
        seen = {k: cfg["metadata"].get(k) for k in keys}
        seen["ns"] = cfg["configurable"].get("checkpoint_ns")
        seen["tags"] = cfg.get("tags")
        return {"items": [seen]}

    child = lib.StateGraph(Acc)
    child.add_node("inner", look)
    child.add_edge(lib.START, "inner")
    g = linear(lib, Acc, ("look", look), ("sub", child.compile()))
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread(), {}


def _invalid(lib, variant: str):
    g = lib.StateGraph(N)
    g.add_node("a", lambda s: s)
    if variant == "unknown_target":
        g.add_edge(lib.START, "a")
        g.add_edge("a", "missing")
    elif variant == "no_entry":
        g.add_edge("a", lib.END)
    elif variant == "duplicate_node":
        g.add_node("a", lambda s: s)
    elif variant == "reserved_name":
        g.add_node("__start__", lambda s: s)
    return g.compile(), [{"n": 0}], None


for _variant in ("unknown_target", "no_entry", "duplicate_node", "reserved_name"):

    def _build(lib, _v=_variant):
        return _invalid(lib, _v)

    _build.__name__ = f"invalid_graph_{_variant}"
    scenario(build_errors=True, apis=("invoke",), aio=(False,))(_build)
