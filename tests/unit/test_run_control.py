"""The run's Runtime (run control, server info, foreign objects in its slot), drain, and
invoke's fallback through stream (deprecated `checkpoint_during`, print_mode)."""

from __future__ import annotations

import threading
from typing import Any, TypedDict

import pytest
from warpgraph._internal._constants import CONFIG_KEY_RUNTIME
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.errors import GraphDrained, _DeprecatedSinceV10
from warpgraph.graph import START, StateGraph
from warpgraph.runtime import RunControl, Runtime, ServerInfo, run_runtime
from warpgraph.types import Command, interrupt


class S(TypedDict, total=False):
    n: int
    seen: Any


def _graph(*nodes: Any, checkpointer: Any = None) -> Any:
    g = StateGraph(S)
    prev = START
    for i, fn in enumerate(nodes):
        g.add_node(f"n{i}", fn)
        g.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    return g.compile(checkpointer=checkpointer)


def test_run_runtime_adopts_foreign_context_and_keeps_parent_control():
    class Foreign:
        context = ("k", 1)

    rt = run_runtime(
        Foreign(), context=None, store=None, stream_writer=None, configurable={}, control=None
    )
    assert rt.context == ("k", 1) and isinstance(rt.control, RunControl)
    parent = Runtime(control=RunControl())
    child = run_runtime(
        parent, context=None, store=None, stream_writer=None, configurable={}, control=None
    )
    assert child.control is parent.control


def test_server_info_from_configurable():
    class User:
        identity = "u1"

    rt = run_runtime(
        Runtime(),
        context=None,
        store=None,
        stream_writer=None,
        configurable={"assistant_id": "a", "langgraph_auth_user": User()},
        control=None,
    )
    assert rt.server_info == ServerInfo(assistant_id="a", graph_id="", user=rt.server_info.user)
    assert rt.server_info.user.identity == "u1"
    bare = run_runtime(
        Runtime(), context=None, store=None, stream_writer=None, configurable={}, control=None
    )
    assert bare.server_info is None


def test_foreign_runtime_slot_in_a_run():
    class Foreign:
        context = "graph-level"
        store = None

    def node(s, runtime: Runtime):
        return {"seen": (runtime.context, runtime.control is not None)}

    out = _graph(node).invoke({"n": 0}, {"configurable": {CONFIG_KEY_RUNTIME: Foreign()}})
    assert out["seen"] == ("graph-level", True)


def test_pre_drained_control_runs_nothing():
    ran = []
    control = RunControl()
    control.request_drain("pre")
    with pytest.raises(GraphDrained, match="pre") as info:
        _graph(lambda s: ran.append(1) or {}).invoke({"n": 0}, control=control)
    assert info.value.reason == "pre" and not ran


def test_external_drain_stops_after_the_running_step():
    started, release = threading.Event(), threading.Event()
    ran = []

    def first(s):
        started.set()
        assert release.wait(10)
        return {"n": 1}

    control = RunControl()
    graph = _graph(first, lambda s: ran.append(2) or {"n": 2}, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    errors: list = []
    t = threading.Thread(target=lambda: _catch(errors, graph.invoke, {"n": 0}, cfg, control))
    t.start()
    assert started.wait(10)
    control.request_drain("sigterm")
    release.set()
    t.join(10)
    assert [type(e).__name__ for e in errors] == ["GraphDrained"] and not ran
    assert graph.invoke(None, cfg) == {"n": 2}


def _catch(errors: list, fn: Any, *args: Any) -> None:
    try:
        fn(*args[:2], control=args[2])
    except GraphDrained as e:
        errors.append(e)


def test_invoke_through_stream_keeps_values_and_interrupts():
    def ask(s):
        return {"n": interrupt("q")}

    graph = _graph(lambda s: {"n": 1}, ask, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    with pytest.warns(_DeprecatedSinceV10, match="checkpoint_during"):
        out = graph.invoke({"n": 0}, cfg, checkpoint_during=False)
    assert out["n"] == 1 and [i.value for i in out["__interrupt__"]] == ["q"]
    assert graph.invoke(Command(resume=5), cfg, print_mode=()) == {"n": 5}
