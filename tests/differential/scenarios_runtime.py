"""Scenarios: node error handlers, drain (RunControl), node timeouts, retries with handlers.

Timing scenarios only use timeouts far from the node's real durations (a timed-out node
sleeps for seconds, a progressing one sleeps a few ms between heartbeats under a 1 s idle
timeout), so a loaded machine cannot flip their outcome; timeouts are caught by error
handlers so that no elapsed time (in NodeTimeoutError's message) reaches the trace.
"""

import asyncio
import operator
from typing import Annotated, TypedDict

from ._build import linear
from .harness import scenario
from .scenarios_core import CP, Acc, thread


def _errors(lib):
    return lib.module("errors")


def _handled(error) -> list:
    err = error.error
    return [("handled", error.node, type(err).__name__, getattr(err, "kind", None))]


@scenario(durabilities=CP)
def error_handler_after_retries(lib):
    calls = {"n": 0}

    def always_fails(s):
        calls["n"] += 1
        raise ValueError(f"boom {calls['n']}")

    def handler(s, error: _errors(lib).NodeError):
        return lib.Command(update={"items": _handled(error)}, goto="after")

    policy = lib.RetryPolicy(
        initial_interval=0.0, jitter=False, max_attempts=2, retry_on=ValueError
    )
    g = lib.StateGraph(Acc)
    g.add_node("fails", always_fails, retry_policy=policy, error_handler=handler)
    g.add_node("after", lambda s: {"items": ["after"], "n": calls["n"]})
    g.add_edge(lib.START, "fails")
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}], thread()


@scenario(durabilities=CP, parallel=True)
def error_handler_defaults_parallel(lib):
    """set_node_defaults(error_handler=): two parallel nodes fail, each gets the handler;
    a node with its own handler keeps it; the successful sibling's writes stay."""

    def fail_a(s):
        raise RuntimeError("a failed")

    def fail_b(s):
        raise KeyError("b failed")

    def default(s, error: _errors(lib).NodeError):
        return {"items": _handled(error)}

    def own(s, error: _errors(lib).NodeError):
        return {"items": [("own", error.node)]}

    g = lib.StateGraph(Acc)
    g.set_node_defaults(error_handler=default)
    g.add_node("a", fail_a)
    g.add_node("b", fail_b, error_handler=own)
    g.add_node("ok", lambda s: {"items": ["ok"]})
    g.add_node("join", lambda s: {"items": ["join"]})
    for n in ("a", "b", "ok"):
        g.add_edge(lib.START, n)
    g.add_edge("ok", "join")
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 1}], thread()


@scenario(durabilities=CP)
def error_handler_fails_then_resumes(lib):
    """The handler crashes: the run fails; the next run (input None) runs the handler
    again, not the failed node, with the error read back from the checkpoint."""
    calls = {"node": 0, "handler": 0}

    def fails(s):
        calls["node"] += 1
        raise RuntimeError("boom")

    def handler(s, error: _errors(lib).NodeError):
        calls["handler"] += 1
        if calls["handler"] == 1:
            raise RuntimeError("handler crash")
        return {"items": [("recovered", error.node, "boom" in str(error.error), dict(calls))]}

    g = lib.StateGraph(Acc)
    g.add_node("fails", fails, error_handler=handler)
    g.add_edge(lib.START, "fails")
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}, None], thread()


@scenario(subgraphs=True)
def error_handler_catches_subgraph_failure(lib):
    class Sub(TypedDict, total=False):
        n: int
        items: Annotated[list, operator.add]

    def sub_fails(s):
        raise ValueError("subgraph boom")

    child = lib.StateGraph(Sub)
    child.add_node("inner", sub_fails)
    child.add_edge(lib.START, "inner")

    def handler(s, error: _errors(lib).NodeError):
        return {"items": _handled(error)}

    g = lib.StateGraph(Acc)
    g.add_node("sub", child.compile(), error_handler=handler)
    g.add_edge(lib.START, "sub")
    return g.compile(), [{"n": 0}], None


# (task-start chunks of an interrupted parallel step come in either order on langgraph)
@scenario(durabilities=CP, parallel=True, apis=("invoke", "values", "updates", "checkpoints"))
def error_handler_not_for_interrupts(lib):
    def asks(s):
        return {"items": [lib.interrupt("question")]}

    g = lib.StateGraph(Acc)
    g.add_node("asks", asks, error_handler=lambda s: {"items": ["handled"]})
    g.add_node("other", lambda s: {"items": ["other"]})
    g.add_edge(lib.START, "asks")
    g.add_edge(lib.START, "other")
    graph = g.compile(checkpointer=lib.InMemorySaver())
    return graph, [{"n": 0}, lib.Command(resume="answer")], thread()


@scenario(build_errors=True)
def error_handler_default_name_taken(lib):
    g = lib.StateGraph(Acc)
    g.set_node_defaults(error_handler=lambda s: {})
    g.add_node("__default_error_handler__", lambda s: s)
    g.add_edge(lib.START, "__default_error_handler__")
    return g.compile(), [{"n": 0}], None


# ------------------------------------------------------------------ drain


def _draining_chain(lib, reason, *, twice=False):
    asked = {"n": 0}

    def first(s, runtime: lib.Runtime):
        asked["n"] += 1
        if asked["n"] == 1 or twice:
            runtime.control.request_drain(reason)
        return {"items": ["first"], "n": int(runtime.drain_requested)}

    g = linear(lib, Acc, ("first", first), ("second", lambda s: {"items": ["second"]}))
    return g


@scenario(durabilities=CP)
def drain_then_resume(lib):
    """A drain requested in a step stops the run before the next one (GraphDrained); the
    next run resumes where it stopped."""
    graph = _draining_chain(lib, "sigterm").compile(checkpointer=lib.InMemorySaver())
    return graph, [{"n": 0}, None], thread()


@scenario()
def drain_without_checkpointer(lib):
    graph = _draining_chain(lib, "shutdown", twice=True).compile()
    return graph, [{"n": 0}], None


@scenario()
def drain_in_last_step_finishes(lib):
    def node(s, runtime: lib.Runtime):
        runtime.control.request_drain()
        return {"items": ["done"]}

    g = lib.StateGraph(Acc)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    return g.compile(), [{"n": 0}], None


@scenario(subgraphs=True, durabilities=(None, "exit"))
def drain_from_subgraph_resumes_parent(lib):
    asked = {"n": 0}

    def child_first(s, runtime: lib.Runtime):
        asked["n"] += 1
        if asked["n"] == 1:
            runtime.control.request_drain("sigterm")
        return {"items": ["child_first"]}

    child = linear(
        lib,
        Acc,
        ("child_first", child_first),
        ("child_second", lambda s: {"items": ["child_second"]}),
    )

    g = linear(
        lib,
        Acc,
        ("child", child.compile(checkpointer=True)),
        ("parent_second", lambda s: {"items": ["parent_second"]}),
    )
    return g.compile(checkpointer=lib.InMemorySaver()), [{"n": 0}, None], thread()


# ------------------------------------------------------------------ timeouts (async only)

ASYNC = (True,)
# (task results carry NodeTimeoutError's message, which has the elapsed time in it)
TIMED = {"aio": ASYNC, "apis": ("invoke", "values", "updates", "custom", "checkpoints")}


def _timeout_graph(lib, node, timeout, *, retry=None):
    def handler(s, error: _errors(lib).NodeError):
        return {"items": _handled(error)}

    g = lib.StateGraph(Acc)
    g.add_node("timed", node, timeout=timeout, retry_policy=retry, error_handler=handler)
    g.add_edge(lib.START, "timed")
    return g.compile()


@scenario(**TIMED)
def timeout_idle_fires(lib):
    async def stuck(s):
        await asyncio.sleep(30)
        return {"items": ["never"]}

    timeout = lib.types.TimeoutPolicy(idle_timeout=0.05)
    return _timeout_graph(lib, stuck, timeout), [{"n": 0}], None


@scenario(**TIMED)
def timeout_run_fires_despite_heartbeats(lib):
    async def busy(s, runtime: lib.Runtime):
        while True:
            runtime.heartbeat()
            await asyncio.sleep(0.005)

    return _timeout_graph(lib, busy, 0.1), [{"n": 0}], None


@scenario(**TIMED)
def timeout_idle_kept_alive(lib):
    """Heartbeats, custom stream output and writes each refresh the idle clock."""

    async def progressing(s, runtime: lib.Runtime):
        for i in range(4):
            await asyncio.sleep(0.01)
            runtime.heartbeat()
            runtime.stream_writer({"tick": i})
        return {"items": ["finished"]}

    timeout = lib.types.TimeoutPolicy(idle_timeout=1.0)
    return _timeout_graph(lib, progressing, timeout), [{"n": 0}], None


@scenario(**TIMED)
def timeout_retried_then_succeeds(lib):
    attempts = {"n": 0}

    async def flaky(s, runtime: lib.Runtime):
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(30)
        return {"items": [("attempt", runtime.execution_info.node_attempt)]}

    policy = lib.RetryPolicy(
        initial_interval=0.0, jitter=False, max_attempts=3, retry_on=_errors(lib).NodeTimeoutError
    )
    return _timeout_graph(lib, flaky, 0.1, retry=policy), [{"n": 0}], None


@scenario(**TIMED, parallel=True)
def timeout_of_send_overrides_node(lib):
    async def worker(s):
        await asyncio.sleep(s["n"])
        return {"items": [("done", s["n"])]}

    def fan_out(s):
        T = lib.types.TimeoutPolicy
        return [
            lib.Send("worker", {"n": 0}, timeout=T(idle_timeout=5.0)),
            lib.Send("worker", {"n": 30}, timeout=T(idle_timeout=0.05)),
        ]

    def handler(s, error: _errors(lib).NodeError):
        return {"items": _handled(error)}

    g = lib.StateGraph(Acc)
    g.add_node("worker", worker, timeout=30.0, error_handler=handler)
    g.add_conditional_edges(lib.START, fan_out)
    return g.compile(), [{"n": 0}], None


@scenario(build_errors=True)
def timeout_rejects_sync_node(lib):
    g = lib.StateGraph(Acc)
    g.add_node("slow", lambda s: s, timeout=lib.types.TimeoutPolicy(idle_timeout=1.0))
    g.add_edge(lib.START, "slow")
    return g.compile(), [{"n": 0}], None


@scenario(**TIMED)
def timeout_node_builder_retried(lib):
    """A Pregel node built with NodeBuilder.set_timeout: the first attempt times out and
    the retry policy runs it again."""
    attempts = {"n": 0}

    async def slow_once(x):
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(30)
        return x + attempts["n"]

    pregel = lib.module("pregel")
    node = (
        pregel.NodeBuilder()
        .subscribe_only("input")
        .do(slow_once)
        .set_timeout(lib.types.TimeoutPolicy(idle_timeout=0.05))
        .add_retry_policies(
            lib.RetryPolicy(
                initial_interval=0.0, jitter=False, retry_on=_errors(lib).NodeTimeoutError
            )
        )
        .write_to("output")
    )
    graph = pregel.Pregel(
        nodes={"slow": node},
        channels={"input": lib.EphemeralValue(int), "output": lib.LastValue(int)},
        input_channels="input",
        output_channels="output",
    )
    return graph, [1], None


@scenario(**TIMED)
def timeout_and_retry_from_node_defaults(lib):
    """set_node_defaults(retry_policy=, timeout=): a node without its own gets both; a
    node with its own timeout keeps it."""
    attempts = {"n": 0}

    async def slow_once(s):
        attempts["n"] += 1
        if attempts["n"] == 1:
            await asyncio.sleep(30)
        return {"items": [("defaults", attempts["n"])]}

    async def own(s):
        await asyncio.sleep(0.01)
        return {"items": ["own"]}

    g = lib.StateGraph(Acc)
    g.set_node_defaults(
        retry_policy=lib.RetryPolicy(
            initial_interval=0.0, jitter=False, retry_on=_errors(lib).NodeTimeoutError
        ),
        timeout=lib.types.TimeoutPolicy(run_timeout=0.1),
    )
    g.add_node("slow", slow_once)
    g.add_node("own", own, timeout=30.0)
    g.add_edge(lib.START, "slow")
    g.add_edge("slow", "own")
    return g.compile(), [{"n": 0}], None
