"""Scenarios: human in the loop (interrupt / resume in nested graphs, several and parallel
interrupts, resume by id map, static breakpoints per call, Command.PARENT, resume errors)
and checkpoints saved in older layouts, on an InMemorySaver (and, through test_savers.py,
on each library's SqliteSaver and PostgresSaver)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

from ._build import linear
from .harness import Call, scenario
from .scenarios_core import CP, Acc, abc_chain, thread


def make_saver(lib) -> Any:
    """The scenario's saver: an InMemorySaver (test_savers.py runs every scenario that
    makes one on each library's SqliteSaver and PostgresSaver as well)."""
    return lib.InMemorySaver()


def hitl_scenario(**opts: Any) -> Callable:
    """Register `build(lib, saver)` as a scenario on `make_saver(lib)`."""

    def deco(fn: Callable) -> Callable:
        def build(lib, fn=fn):
            return fn(lib, make_saver(lib))

        build.__name__ = fn.__name__
        scenario(**opts)(build)
        return fn

    return deco


def pending_ids(cfg: dict) -> Callable:
    """A `Call` input: the ids of the interrupts pending on the thread, sorted by value."""

    def ids(graph):
        ints = graph.get_state(cfg).interrupts
        return [i.id for i in sorted(ints, key=lambda i: repr(i.value))]

    return ids


def _ask(lib, tag: str, count: int = 1) -> Callable:
    """A node asking `count` questions; it records the answers."""

    def ask(s):
        answers = [lib.interrupt({"q": f"{tag}{k}", "n": s.get("n")}) for k in range(count)]
        return {"items": [f"{tag}:{'/'.join(map(str, answers))}"]}

    return ask


def _child(lib, *, tag: str = "child", ask_count: int = 1, **compile_kw):
    g = linear(
        lib,
        Acc,
        ("c1", lambda s: {"items": ["c1"]}),
        ("c_ask", _ask(lib, tag, ask_count)),
        ("c2", lambda s: {"items": ["c2"], "n": s["n"] * 3}),
        end=True,
    )
    return g.compile(**compile_kw)


def _parent(lib, saver, child, **compile_kw):
    g = linear(
        lib,
        Acc,
        ("pre", lambda s: {"n": s["n"] + 1}),
        ("child", child),
        ("post", lambda s: {"items": ["post"]}),
        end=True,
    )
    return g.compile(checkpointer=saver, **compile_kw)


# --- interrupts in nested graphs --------------------------------------------------------
@hitl_scenario(subgraphs=True, durabilities=CP)
def nested_interrupt_2_deep(lib, saver):
    graph = _parent(lib, saver, _child(lib))
    return graph, [{"n": 1}, lib.Command(resume="A")], thread()


@hitl_scenario(subgraphs=True, durabilities=CP)
def nested_interrupt_3_deep(lib, saver):
    """grandchild asks twice (answered one call at a time), then the child asks once."""
    gc = linear(
        lib, Acc, ("g1", lambda s: {"items": ["g1"]}), ("g_ask", _ask(lib, "grand", 2)), end=True
    )
    child = linear(lib, Acc, ("grand", gc.compile()), ("c_ask", _ask(lib, "child")), end=True)
    graph = _parent(lib, saver, child.compile())
    inputs = [
        {"n": 1},
        lib.Command(resume="G1"),
        lib.Command(resume="G2"),
        lib.Command(resume="C1"),
    ]
    return graph, inputs, thread()


@hitl_scenario(subgraphs=True, durabilities=CP)
def nested_interrupt_in_called_subgraph(lib, saver):
    """The subgraph runs inside a node function (twice: the second call gets 'ns|1')."""
    child = _child(lib)

    def call(s):
        first = child.invoke({"n": s["n"]})
        second = child.invoke({"n": first["n"]})
        return {"n": second["n"], "items": first["items"] + second["items"]}

    g = linear(lib, Acc, ("pre", lambda s: {"n": s["n"] + 1}), ("call", call), end=True)
    inputs = [{"n": 1}, lib.Command(resume="A"), lib.Command(resume="B")]
    return g.compile(checkpointer=saver), inputs, thread()


@hitl_scenario(subgraphs=True, durabilities=CP)
def nested_static_breakpoints(lib, saver):
    """interrupt_before inside the subgraph (compile time), interrupt_after on the parent's
    subgraph node."""
    child = linear(
        lib, Acc, ("c1", lambda s: {"items": ["c1"]}), ("c2", lambda s: {"items": ["c2"]}), end=True
    )
    graph = _parent(lib, saver, child.compile(interrupt_before=["c2"]), interrupt_after=["child"])
    return graph, [{"n": 1}, None, None], thread()


# --- several interrupts ---------------------------------------------------------------
@hitl_scenario(durabilities=CP)
def multiple_interrupts_one_node(lib, saver):
    g = linear(lib, Acc, ("pre", lambda s: {"n": s["n"] + 1}), ("ask", _ask(lib, "q", 3)), end=True)
    inputs = [
        {"n": 1},
        lib.Command(resume="a"),
        lib.Command(resume={"k": "a dict answer"}),
        lib.Command(resume=3),
    ]
    return g.compile(checkpointer=saver), inputs, thread()


def _parallel_askers(lib, saver, count: int = 1):
    g = lib.StateGraph(Acc)
    g.add_node("x", _ask(lib, "x", count))
    g.add_node("y", _ask(lib, "y", count))
    g.add_node("join", lambda s: {"items": ["join"]})
    g.add_edge(lib.START, "x")
    g.add_edge(lib.START, "y")
    g.add_edge(["x", "y"], "join")
    g.add_edge("join", lib.END)
    return g.compile(checkpointer=saver)


@hitl_scenario(parallel=True, durabilities=CP)
def parallel_interrupts_id_map(lib, saver):
    """Two nodes interrupt in one step: a single value is refused, a map answers both."""
    cfg = thread()
    ids = pending_ids(cfg)
    inputs = [
        {"n": 1},
        lib.Command(resume="ambiguous"),
        Call(lambda g: lib.Command(resume={i: f"answer{k}" for k, i in enumerate(ids(g))})),
    ]
    return _parallel_askers(lib, saver), inputs, cfg


@hitl_scenario(parallel=True, durabilities=CP)
def parallel_interrupts_partial_map(lib, saver):
    """Each node asks twice; answers come one id at a time (the second question of a node
    has an id of its own), an unknown id answers nothing."""
    cfg = thread()
    ids = pending_ids(cfg)
    first = Call(lambda g: lib.Command(resume={ids(g)[0]: "first"}))
    inputs = [
        {"n": 1},
        first,
        lib.Command(resume={"0" * 32: "nobody"}),
        Call(lambda g: lib.Command(resume={i: "rest" for i in ids(g)})),
        Call(lambda g: lib.Command(resume={i: "last" for i in ids(g)})),
    ]
    return _parallel_askers(lib, saver, count=2), inputs, cfg


@hitl_scenario(parallel=True, subgraphs=True, durabilities=CP)
def parallel_subgraph_interrupts(lib, saver):
    """Two subgraph nodes interrupt in one step; one map answers both (ids of nested tasks)."""
    g = lib.StateGraph(Acc)
    g.add_node("pre", lambda s: {"n": s["n"] + 1})
    g.add_node("left", _child(lib, tag="left"))
    g.add_node("right", _child(lib, tag="right"))
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "left")
    g.add_edge("pre", "right")
    g.add_edge(["left", "right"], lib.END)
    cfg = thread()
    ids = pending_ids(cfg)
    inputs = [
        {"n": 1},
        Call(lambda g: lib.Command(resume={i: f"ans{k}" for k, i in enumerate(ids(g))})),
    ]
    return g.compile(checkpointer=saver), inputs, cfg


# --- static breakpoints per call ------------------------------------------------------
@hitl_scenario(durabilities=CP)
def breakpoints_per_call(lib, saver):
    inputs = [
        Call({"n": 1}, kwargs={"interrupt_before": ["b"]}),
        Call(None, kwargs={"interrupt_after": ["b"]}),
        Call(None, kwargs={"interrupt_before": "*"}),
        None,
        Call({"n": 5}, kwargs={"interrupt_after": "*"}),
        Call(None, kwargs={"interrupt_before": ["c"], "interrupt_after": ["a", "b"]}),
    ]
    return abc_chain(lib, saver), inputs, thread()


@hitl_scenario(durabilities=CP)
def breakpoints_call_overrides_compile(lib, saver):
    """Per-call breakpoints replace the compiled ones; a resume value passes a breakpoint."""
    inputs = [
        {"n": 1},
        Call(None, kwargs={"interrupt_before": ["c"]}),
        lib.Command(resume="passes the breakpoint"),
    ]
    return abc_chain(lib, saver, interrupt_before=["b"]), inputs, thread()


# --- Command.PARENT -------------------------------------------------------------------
def _to_parent(lib, goto: str, item: str):
    return lambda s: lib.Command(graph=lib.Command.PARENT, goto=goto, update={"items": [item]})


@hitl_scenario(subgraphs=True, durabilities=CP)
def command_parent(lib, saver):
    child = linear(
        lib,
        Acc,
        ("c1", lambda s: {"items": ["c1"]}),
        ("jump", _to_parent(lib, "other", "from child")),
    )
    g = lib.StateGraph(Acc)
    g.add_node("child", child.compile())
    g.add_node("other", lambda s: {"items": ["other"]})
    g.add_edge(lib.START, "child")
    g.add_edge("other", lib.END)
    return g.compile(checkpointer=saver), [{"n": 1}], thread()


@hitl_scenario(subgraphs=True, durabilities=CP)
def command_parent_after_interrupt_3_deep(lib, saver):
    """The grandchild asks, then sends the child to another node with Command.PARENT."""

    def ask_then_jump(s):
        answer = lib.interrupt("where to?")
        return lib.Command(graph=lib.Command.PARENT, goto="c_other", update={"items": [answer]})

    gc = lib.StateGraph(Acc)
    gc.add_node("g_jump", ask_then_jump)
    gc.add_edge(lib.START, "g_jump")
    child = lib.StateGraph(Acc)
    child.add_node("grand", gc.compile())
    child.add_node("c_other", _to_parent(lib, "post", "c_other"))
    child.add_edge(lib.START, "grand")
    g = lib.StateGraph(Acc)
    g.add_node("child", child.compile())
    g.add_node("post", lambda s: {"items": ["post"]})
    g.add_edge(lib.START, "child")
    g.add_edge("post", lib.END)
    inputs = [{"n": 1}, lib.Command(resume="answered")]
    return g.compile(checkpointer=saver), inputs, thread()


# --- resume errors and odd resumes ----------------------------------------------------
@hitl_scenario(durabilities=CP)
def resume_odd_cases(lib, saver):
    """What LangGraph does without raising: a resume on a thread with no checkpoint starts
    the run, a resume with nothing pending finishes nothing new, an unknown id in a map is
    ignored; `invoke(None)` on a new thread raises EmptyInputError."""
    g = linear(
        lib, Acc, ("pre", lambda s: {"n": s.get("n", 0) + 1}), ("ask", _ask(lib, "q")), end=True
    )
    inputs = [
        Call(lib.Command(resume="early"), thread("fresh")),
        Call(None, thread("empty")),
        {"n": 1},
        lib.Command(resume={"f" * 32: "unknown id"}),
        lib.Command(resume="answer"),
        lib.Command(resume="nothing pending"),
    ]
    return g.compile(checkpointer=saver), inputs, thread()


@hitl_scenario(parallel=True, durabilities=CP)
def resume_strict_mode(lib, saver):
    """configurable __pregel_strict_resume: mismatched resumes raise UnknownInterruptError
    before anything is written; matching ones go through."""
    cfg = thread()
    cfg["configurable"]["__pregel_strict_resume"] = True
    ids = pending_ids(cfg)
    inputs = [
        {"n": 1},
        lib.Command(resume="ambiguous"),
        lib.Command(resume={}),
        lib.Command(resume={"0" * 32: "unknown"}),
        Call(lambda g: lib.Command(resume={ids(g)[0]: "one"})),
        Call(lambda g: lib.Command(resume={i: "both" for i in ids(g)})),
    ]
    return _parallel_askers(lib, saver), inputs, cfg


@scenario()
def resume_without_checkpointer(lib):
    g = lib.StateGraph(Acc)
    g.add_node("ask", _ask(lib, "q"))
    g.add_edge(lib.START, "ask")
    return g.compile(), [{"n": 1}, lib.Command(resume="x")], None


@hitl_scenario(parallel=True, durabilities=CP)
def resume_superseded_checkpoint(lib, saver):
    """A resume addressed at a checkpoint the thread has moved past reruns the finished
    tasks of that step (it does not hand their saved writes back)."""
    cfg = thread()

    def interrupted(graph):
        return list(graph.get_state_history(cfg))[1].config

    g = lib.StateGraph(Acc)
    g.add_node("pre", lambda s: {"n": s["n"] + 1})
    g.add_node("ask", _ask(lib, "q"))
    g.add_node("side", lambda s: {"items": ["side"]})
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "ask")
    g.add_edge("pre", "side")
    g.add_edge("ask", lib.END)
    inputs = [
        {"n": 1},
        lib.Command(resume="first"),
        Call(lib.Command(resume="again"), interrupted),
    ]
    return g.compile(checkpointer=saver), inputs, cfg


# --- checkpoints saved in older layouts -----------------------------------------------
def _v(n: int) -> str:
    return f"{n:032}.0.5"


class Routed(TypedDict, total=False):
    n: int
    items: Annotated[list, operator.add]


def _old_layout_graph(lib, saver):
    """START -> a -> b -(route)-> c: `a` feeds `b` by a plain edge, `b` routes to `c`."""
    g = lib.StateGraph(Routed)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_node("c", lambda s: {"items": ["c"]})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")

    def route(s) -> str:
        return "c"

    g.add_conditional_edges("b", route, ["c"])
    g.add_edge("c", lib.END)
    return g.compile(checkpointer=saver)


# checkpoints as LangGraph releases before layout v3 stored them for that graph: the edge
# from START in "start:a", the plain edge a -> b in channel "a", the branch in
# "branch:b:route:c" (ids, timestamps and versions made up in the saver's formats)
_OLD_IDS = (
    "1ef00000-0000-6000-bfff-000000000001",
    "1ef00000-0000-6001-8000-000000000002",
    "1ef00000-0000-6002-8001-000000000003",
    "1ef00000-0000-6003-8002-000000000004",
)


def _old_checkpoints(v: int) -> list[tuple[dict, dict]]:
    ts = "2024-07-01T00:00:0{}.000000+00:00"
    start = {
        "channel_values": {"__start__": {"n": 1}},
        "channel_versions": {"__start__": _v(1)},
        "versions_seen": {"__input__": {}},
    }
    step0 = {
        "channel_values": {"n": 1, "items": [], "start:a": "__start__"},
        "channel_versions": {"__start__": _v(2), "n": _v(2), "items": _v(2), "start:a": _v(2)},
        "versions_seen": {"__input__": {}, "__start__": {"__start__": _v(1)}},
    }
    step1 = {
        "channel_values": {"n": 2, "items": ["a"], "a": "a"},
        "channel_versions": {
            "__start__": _v(2),
            "n": _v(3),
            "items": _v(3),
            "start:a": _v(3),
            "a": _v(3),
        },
        "versions_seen": {
            "__input__": {},
            "__start__": {"__start__": _v(1)},
            "a": {"start:a": _v(2)},
        },
    }
    step2 = {
        "channel_values": {"n": 2, "items": ["a", "b"], "branch:b:route:c": "b"},
        "channel_versions": {
            "__start__": _v(2),
            "n": _v(3),
            "items": _v(4),
            "start:a": _v(3),
            "a": _v(4),
            "branch:b:route:c": _v(4),
        },
        "versions_seen": {
            "__input__": {},
            "__start__": {"__start__": _v(1)},
            "a": {"start:a": _v(2)},
            "b": {"a": _v(3)},
            "__interrupt__": {"a": _v(3), "start:a": _v(3), "n": _v(3)},
        },
    }
    out = []
    for k, (body, source) in enumerate(
        ((start, "input"), (step0, "loop"), (step1, "loop"), (step2, "loop"))
    ):
        cp = {"v": v, "ts": ts.format(k), "id": _OLD_IDS[k], **body, "pending_sends": []}
        out.append((cp, {"source": source, "step": k - 1, "parents": {}}))
    return out


def _seed(saver, tid: str, checkpoints: list[tuple[dict, dict]]) -> None:
    parent = None
    for cp, metadata in checkpoints:
        conf = {"thread_id": tid, "checkpoint_ns": ""}
        if parent is not None:
            conf["checkpoint_id"] = parent
        saver.put({"configurable": conf}, cp, metadata, cp["channel_versions"])
        parent = cp["id"]


@hitl_scenario(durabilities=CP)
def old_layout_checkpoints(lib, saver):
    """v1 checkpoints in the pre-v3 channel layout: the history reads them migrated, and a
    run resumes from the latest (b routed to c) and from an earlier one (b due)."""
    _seed(saver, "old", _old_checkpoints(1))
    _seed(saver, "old_mid", _old_checkpoints(2)[:3])
    return _old_layout_graph(lib, saver), [None, None], [thread("old"), thread("old_mid")]


@hitl_scenario(parallel=True, durabilities=CP)
def old_layout_pending_sends(lib, saver):
    """A v2 checkpoint keeping its Sends in `pending_sends` (now the tasks channel)."""

    def fan(s):
        return [lib.Send("work", {"n": k}) for k in (1, 2)]

    g = lib.StateGraph(Routed)
    g.add_node("start", lambda s: {"items": ["start"]})
    g.add_node("work", lambda s: {"items": [f"work{s['n']}"]})
    g.add_edge(lib.START, "start")
    g.add_conditional_edges("start", fan, ["work"])
    g.add_edge("work", lib.END)
    cp = {
        "v": 2,
        "ts": "2024-07-01T00:00:01.000000+00:00",
        "id": _OLD_IDS[1],
        "channel_values": {"n": 0, "items": ["start"]},
        "channel_versions": {"__start__": _v(2), "n": _v(2), "items": _v(3), "start:start": _v(2)},
        "versions_seen": {"__input__": {}, "start": {"start:start": _v(2)}},
        "pending_sends": [lib.Send("work", {"n": 1}), lib.Send("work", {"n": 2})],
    }
    _seed(saver, "t1", [(cp, {"source": "loop", "step": 0, "parents": {}})])
    return g.compile(checkpointer=saver), [None], thread()


@hitl_scenario(durabilities=CP)
def checkpointer_true_subgraph_reentered(lib, saver):
    """A checkpointer=True subgraph (one history per thread) interrupts, is resumed, and is
    called again in the same run by Command(goto): the second call reads what the first
    one saved (with group commit the first call's checkpoints must be committed first)."""

    class Sub(TypedDict, total=False):
        n: int
        items: Annotated[list, operator.add]
        seen: list

    sub = linear(
        lib,
        Sub,
        ("s1", lambda s: {"items": ["s1"], "seen": list(s.get("items", []))}),
        ("s_ask", _ask(lib, "sub")),
    )
    subgraph = sub.compile(checkpointer=True)

    def call_sub(s):
        return {"items": subgraph.invoke({"n": s["n"]})["items"]}

    def again(s):
        if s["n"] < 3:
            return lib.Command(goto="call_sub", update={"n": s["n"] + 1})
        return {"items": ["done"]}

    g = linear(lib, Acc, ("call_sub", call_sub), ("again", again))
    inputs = [{"n": 1}, *(lib.Command(resume=f"r{k}") for k in range(3)), {"n": 2}]
    return g.compile(checkpointer=saver), inputs, thread()


@hitl_scenario(parallel=True, durabilities=CP)
def interrupt_in_send_tasks(lib, saver):
    """Send tasks (PUSH) interrupt; a map answers them, `None` re-raises pending ones."""

    def fan(s):
        return [lib.Send("work", {"n": k}) for k in (1, 2)]

    def work(s):
        answer = lib.interrupt({"q": "work", "n": s["n"]})
        return {"items": [f"w{s['n']}:{answer}"]}

    g = lib.StateGraph(Acc)
    g.add_node("start", lambda s: {"items": ["start"]})
    g.add_node("work", work)
    g.add_edge(lib.START, "start")
    g.add_conditional_edges("start", fan, ["work"])
    g.add_edge("work", lib.END)
    cfg = thread()
    ids = pending_ids(cfg)
    inputs = [
        {"n": 0},
        None,
        Call(lambda g: lib.Command(resume={ids(g)[1]: "second"})),
        Call(lambda g: lib.Command(resume={i: "first" for i in ids(g)})),
    ]
    return g.compile(checkpointer=saver), inputs, cfg


@hitl_scenario(subgraphs=True, parallel=True, durabilities=CP)
def resume_with_update_and_goto(lib, saver):
    """Command(resume=..., update=..., goto=...) in one input."""
    g = lib.StateGraph(Acc)
    g.add_node("pre", lambda s: {"n": s["n"] + 1})
    g.add_node("ask", _ask(lib, "q"))
    g.add_node("extra", lambda s: {"items": [f"extra{s['n']}"]})
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "ask")
    g.add_edge("ask", lib.END)
    g.add_edge("extra", lib.END)
    inputs = [
        {"n": 1},
        lib.Command(resume="ok", update={"n": 10}, goto="extra"),
        lib.Command(goto=lib.Send("extra", {"n": 7})),
    ]
    return g.compile(checkpointer=saver), inputs, thread()


@hitl_scenario(subgraphs=True, parallel=True, durabilities=CP)
def parallel_interrupts_inside_subgraph(lib, saver):
    """Two nodes of one subgraph interrupt in the same step; the parent breaks before the
    subgraph node too."""
    child = lib.StateGraph(Acc)
    child.add_node("cx", _ask(lib, "cx"))
    child.add_node("cy", _ask(lib, "cy"))
    child.add_edge(lib.START, "cx")
    child.add_edge(lib.START, "cy")
    graph = _parent(lib, saver, child.compile(), interrupt_before=["child"])
    cfg = thread()
    ids = pending_ids(cfg)
    inputs = [
        {"n": 1},
        None,
        Call(lambda g: lib.Command(resume={ids(g)[0]: "one"})),
        Call(lambda g: lib.Command(resume={i: "two" for i in ids(g)})),
    ]
    return graph, inputs, cfg


@hitl_scenario(subgraphs=True, durabilities=CP)
def command_parent_errors(lib, saver):
    """Command.PARENT to a node the parent graph does not have."""
    child = lib.StateGraph(Acc)
    child.add_node("jump", _to_parent(lib, "missing", "y"))
    child.add_edge(lib.START, "jump")
    g = linear(lib, Acc, ("child", child.compile()), ("post", lambda s: {"items": ["post"]}))
    return g.compile(checkpointer=saver), [{"n": 1}], thread()


@hitl_scenario(durabilities=CP)
def command_parent_from_root(lib, saver):
    """Command.PARENT in the root graph: there is no parent."""
    g = lib.StateGraph(Acc)
    g.add_node("root_jump", _to_parent(lib, "nowhere", "x"))
    g.add_edge(lib.START, "root_jump")
    return g.compile(checkpointer=saver), [{"n": 1}], thread()


@hitl_scenario(durabilities=CP)
def interrupt_response_schema_and_node_interrupt(lib, saver):
    """interrupt(response_schema=dict) is surfaced as is; NodeInterrupt (deprecated) stops
    the run like an interrupt."""

    def ask(s):
        return {"items": [lib.interrupt("schema?", response_schema={"type": "string"})]}

    def legacy(s):
        if s["n"] < 5:
            raise lib.errors.NodeInterrupt("legacy stop")
        return {"items": ["legacy passed"]}

    g = linear(lib, Acc, ("ask", ask), ("legacy", legacy))
    inputs = [{"n": 1}, lib.Command(resume="answer"), None, lib.Command(update={"n": 9}), None]
    return g.compile(checkpointer=saver), inputs, thread()


@hitl_scenario(subgraphs=True, durabilities=CP)
def interrupts_in_v2_output(lib, saver):
    """version="v2": interrupts in GraphOutput / in the values parts, nested ones too."""
    graph = _parent(lib, saver, _child(lib, ask_count=2))
    v2 = {"version": "v2"}
    inputs = [
        Call({"n": 1}, kwargs=v2),
        Call(lib.Command(resume="A"), kwargs=v2),
        Call(lib.Command(resume="B"), kwargs=v2),
    ]
    return graph, inputs, thread()


@hitl_scenario(subgraphs=True, parallel=True, durabilities=CP)
def interrupts_with_print_mode(lib, saver):
    """print_mode (and debug=True) take invoke's streaming path: its result still carries
    the interrupts (parallel ones, nested ones)."""
    child = lib.StateGraph(Acc)
    child.add_node("cx", _ask(lib, "cx"))
    child.add_edge(lib.START, "cx")
    g = lib.StateGraph(Acc)
    g.add_node("child", child.compile())
    g.add_node("y", _ask(lib, "y"))
    g.add_edge(lib.START, "child")
    g.add_edge(lib.START, "y")
    cfg = thread()
    ids = pending_ids(cfg)
    inputs = [
        Call({"n": 1}, kwargs={"print_mode": "updates"}),
        Call(None, kwargs={"debug": True}),
        Call(lambda g: lib.Command(resume={ids(g)[0]: "one"}), kwargs={"print_mode": "values"}),
        Call(lambda g: lib.Command(resume={i: "two" for i in ids(g)}), kwargs={"debug": True}),
    ]
    return g.compile(checkpointer=saver), inputs, cfg
