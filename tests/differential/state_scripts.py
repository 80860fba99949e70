"""Scripts of state-API calls (update_state, bulk_update_state, get_state, history, replay and
fork through invoke at a checkpoint), run the same on langgraph and warpgraph.

A script is a generator `script(lib, saver) -> yields Call`: each `Call` names a method of a
graph (or "checkpoints": the saver's list of the thread) and its arguments; the runner
(`test_state_api.py`) performs it with the sync or the async API and sends back the result,
or the exception it raised (scripts go on after an error: it is part of the trace). The
runner records every result; both traces are normalised and must be identical.
"""

from __future__ import annotations

import itertools
import operator
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from ._build import linear

SCRIPTS: dict[str, Any] = {}


@dataclass
class Call:
    method: str  # invoke | stream | update_state | bulk_update_state | get_state | ...
    target: Any  # a compiled graph
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def script(fn: Any) -> Any:
    SCRIPTS[fn.__name__] = fn
    return fn


def cfg(tid: str = "t1") -> dict:
    return {"configurable": {"thread_id": tid}}


class Val(TypedDict):
    value: Annotated[list, operator.add]


class Two(TypedDict, total=False):
    value: Annotated[list, operator.add]
    flag: str


def _node(name: str) -> Any:
    def fn(state: Any) -> dict:
        return {"value": [name]}

    return fn


def chain(lib: Any, names: str = "abc", schema: Any = Val) -> Any:
    """START -> names[0] -> names[1] -> ..., each node adding its name to `value`."""
    g = lib.StateGraph(schema)
    for n in names:
        g.add_node(n, _node(n))
    g.add_edge(lib.START, names[0])
    for x, y in itertools.pairwise(names):
        g.add_edge(x, y)
    return g


def history(app: Any, config: dict) -> Any:
    return Call("get_state_history", app, (config,))


def _snap(hist: list, pred: Any) -> Any:
    return next(s for s in hist if pred(s))


# --------------------------------------------------------------------------- update_state
@script
def update_as_node_variants(lib, saver):
    app = chain(lib).compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    hist = yield history(app, c)
    before_b = _snap(hist, lambda s: s.next == ("b",))
    # inferred (the last node that ran: a), explicit, unknown, input, END, None values
    fork = yield Call("update_state", app, (before_b.config, {"value": ["x"]}))
    yield Call("get_state", app, (fork,))
    yield Call("update_state", app, (before_b.config, {"value": ["y"]}, "c"))
    yield Call("update_state", app, (c, {"value": ["z"]}, "nope"))
    yield Call("update_state", app, (c, {"value": ["in"]}, "__input__"))
    yield Call("get_state", app, (c,))
    yield Call("update_state", app, (c, None, lib.END))
    yield Call("get_state", app, (c,))
    yield Call("update_state", app, (before_b.config, None))
    yield Call("invoke", app, (None, fork))
    yield Call("checkpoints", app, (c,))
    yield history(app, c)


@script
def update_fresh_thread_and_errors(lib, saver):
    app = chain(lib, "ab").compile(checkpointer=saver)
    # fresh thread: nothing ran, the input channel names no node -> ambiguous
    yield Call("update_state", app, (cfg("f"), {"value": ["v"]}))
    yield Call("update_state", app, (cfg("f"), {"value": ["v"]}, "a"))
    yield Call("get_state", app, (cfg("f"),))
    yield Call("invoke", app, (None, cfg("f")))
    yield Call("update_state", app, (cfg("g"), {"value": ["i"]}, "__input__"))
    yield Call("get_state", app, (cfg("g"),))
    yield Call("update_state", app, (cfg("h"), None, "__copy__"))
    yield Call("bulk_update_state", app, (cfg("h"), []))
    yield Call("bulk_update_state", app, (cfg("h"), [[]]))
    su = lib.types.StateUpdate
    yield Call("bulk_update_state", app, (cfg("h"), [[su({"value": [1]}), su({"value": [2]})]]))
    yield Call("bulk_update_state", app, (cfg("h"), [[su(None, lib.END), su(None, lib.END)]]))
    yield Call("bulk_update_state", app, (cfg("h"), [[su({}, "__copy__"), su({}, "a")]]))
    yield Call("bulk_update_state", app, (cfg("h"), [[su({}, "__input__"), su({}, "a")]]))
    yield Call("update_state", app, (cfg("h"), {}, "__input__"))
    yield Call("update_state", app, ({"configurable": {"thread_id": "x"}, "x": 1}, {"value": [1]}))
    no_cp = chain(lib, "ab").compile()
    yield Call("update_state", no_cp, (cfg("z"), {"value": [1]}, "a"))
    yield Call("get_state", no_cp, (cfg("z"),))
    yield Call("checkpoints", app, (cfg("f"),))
    yield Call("checkpoints", app, (cfg("g"),))


@script
def update_parallel_ambiguous_and_bulk(lib, saver):
    g = lib.StateGraph(Val)
    for n in ("a", "b", "c"):
        g.add_node(n, _node(n))
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge("a", "c")
    g.add_edge("b", "c")
    app = g.compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c), {"durability": "sync"})
    yield Call("update_state", app, (c, {"value": ["amb"]}))
    su = lib.types.StateUpdate
    hist = yield history(app, c)
    first = _snap(hist, lambda s: s.next == ("a", "b"))
    out = yield Call(
        "bulk_update_state",
        app,
        (
            first.config,
            [
                [su({"value": ["A"]}, "a"), su({"value": ["B"]}, "b")],
                [su({"value": ["C"]}, "c")],
            ],
        ),
    )
    yield Call("get_state", app, (out,))
    yield Call("bulk_update_state", app, (first.config, [[su({"value": [1]}), su({}, "a")]]))
    # copy with updates: each reuses the copied task's id of its node
    copied = yield Call(
        "update_state",
        app,
        (first.config, [({"value": ["ca"]}, "a"), ({"value": ["cb"]}, "b")], "__copy__"),
    )
    yield Call("get_state", app, (copied,))
    yield Call("update_state", app, (first.config, ["bad"], "__copy__"))
    yield Call("update_state", app, (first.config, [1], "__copy__"))
    yield Call("invoke", app, (None, copied), {"durability": "sync"})
    yield Call("checkpoints", app, (c,))
    yield history(app, c)


@script
def update_with_command_and_branches(lib, saver):
    class S(TypedDict, total=False):
        value: Annotated[list, operator.add]
        route: str

    def router(s: dict) -> str:
        return "yes" if s.get("route") == "yes" else "no"

    def cmd_node(s: dict) -> Any:
        return lib.Command(update={"value": ["cmd"]}, goto="no")

    g = lib.StateGraph(S)
    g.add_node("start", _node("start"))
    g.add_node("yes", _node("yes"))
    g.add_node("no", _node("no"))
    g.add_node("cmd", cmd_node, destinations=("yes", "no"))
    g.add_edge(lib.START, "start")
    g.add_conditional_edges("start", router, ["yes", "no"])
    app = g.compile(checkpointer=saver, interrupt_before=["yes", "no"])
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    yield Call("get_state", app, (c,))
    # the branch of `start` reads the fresh state (with the update's write)
    yield Call("update_state", app, (c, {"route": "yes"}, "start"))
    yield Call("get_state", app, (c,))
    yield Call("update_state", app, (c, lib.Command(update={"value": ["u"]}, goto="no"), "cmd"))
    yield Call("get_state", app, (c,))
    yield Call("update_state", app, (c, lib.Command(goto=["yes", "no"]), "cmd"))
    yield Call("get_state", app, (c,))
    send = lib.Send("no", {"value": ["sent"]})
    yield Call("update_state", app, (c, lib.Command(update={"route": "no"}, goto=send), "cmd"))
    yield Call("get_state", app, (c,))
    yield Call("update_state", app, (c, lib.Command(graph=lib.Command.PARENT, goto="no"), "cmd"))
    yield Call("invoke", app, (None, c))
    yield Call("checkpoints", app, (c,))
    yield history(app, c)


def _forked(lib, saver, name: str, action: Any) -> Any:
    """START -> a -> (`name` -> c, b): `action` runs beside b, c after it."""
    g = lib.StateGraph(Val)
    g.add_node("a", _node("a"))
    g.add_node(name, action)
    g.add_node("b", _node("b"))
    g.add_node("c", _node("c"))
    g.add_edge(lib.START, "a")
    g.add_edge("a", name)
    g.add_edge("a", "b")
    g.add_edge(name, "c")
    return g.compile(checkpointer=saver)


@script
def update_task_id_and_interrupt(lib, saver):
    def ask(s: dict) -> dict:
        answer = lib.interrupt("question?")
        return {"value": [f"ask:{answer}"]}

    app = _forked(lib, saver, "ask", ask)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    state = yield Call("get_state", app, (c,))
    ask_task = next(t for t in state.tasks if t.name == "ask")
    # the update lands as the pending task's writes: it no longer runs, its interrupt ends
    yield Call("update_state", app, (c, {"value": ["answered"]}, "ask", ask_task.id))
    yield Call("get_state", app, (c,))
    yield Call("invoke", app, (None, c))
    yield history(app, c)
    # a second thread: resuming an interrupt through update_state of the interrupted node
    c2 = cfg("t2")
    yield Call("invoke", app, ({"value": []}, c2))
    yield Call("update_state", app, (c2, {"value": ["by-update"]}, "ask"))
    yield Call("get_state", app, (c2,))
    yield Call("invoke", app, (None, c2))
    yield Call("checkpoints", app, (c2,))


# --------------------------------------------------------------------------- subgraphs
def _nested(lib, saver, sub_checkpointer: Any = None):
    def ask(s: dict) -> dict:
        return {"value": [f"sub_ask:{lib.interrupt('sub question')}"]}

    sub = linear(lib, Val, ("s1", _node("s1")), ("s_ask", ask))
    kw = {} if sub_checkpointer is None else {"checkpointer": sub_checkpointer}
    parent = linear(
        lib, Val, ("pre", _node("pre")), ("sub", sub.compile(**kw)), ("post", _node("post"))
    )
    return parent.compile(checkpointer=saver)


@script
def update_subgraph_by_namespace(lib, saver):
    app = _nested(lib, saver)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    state = yield Call("get_state", app, (c,), {"subgraphs": True})
    sub_config = state.tasks[0].state.config
    yield Call("get_state", app, (sub_config,))
    out = yield Call("update_state", app, (sub_config, {"value": ["sub_upd"]}, "s_ask"))
    yield Call("get_state", app, (out,))
    yield Call("get_state", app, (c,), {"subgraphs": True})
    yield Call("invoke", app, (None, c))
    bad = {"configurable": {"thread_id": "t1", "checkpoint_ns": "nope:123"}}
    yield Call("update_state", app, (bad, {"value": ["x"]}))
    yield Call("get_state", app, (bad,))
    yield Call("checkpoints", app, (c,))
    yield history(app, c)


@script
def replay_stateful_subgraph(lib, saver):
    app = _nested(lib, saver, sub_checkpointer=True)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    yield Call("invoke", app, (lib.Command(resume="first"), c))
    yield Call("invoke", app, ({"value": []}, c))
    yield Call("invoke", app, (lib.Command(resume="second"), c))
    hist = yield history(app, c)
    before_sub = [s for s in hist if s.next == ("sub",)][-1]
    # replay: the subgraph starts from its state before that point, and interrupts again
    yield Call("invoke", app, (None, before_sub.config))
    yield Call("get_state", app, (c,), {"subgraphs": True})
    yield Call("invoke", app, (lib.Command(resume="replayed"), c))
    # fork: update, then run from the fork
    hist = yield history(app, c)
    before_sub = [s for s in hist if s.next == ("sub",)][-1]
    fork = yield Call("update_state", app, (before_sub.config, {"value": ["forked"]}))
    yield Call("invoke", app, (None, fork))
    yield Call("invoke", app, (lib.Command(resume="on-fork"), c))
    yield history(app, c)


@script
def replay_and_fork_root(lib, saver):
    def ask(s: dict) -> dict:
        first = lib.interrupt("Question 1?")
        second = lib.interrupt("Question 2?")
        return {"value": [f"{first}+{second}"]}

    g = linear(lib, Val, ("a", _node("a")), ("ask", ask), ("b", _node("b")))
    app = g.compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c))
    yield Call("invoke", app, (lib.Command(resume="one"), c))
    yield Call("invoke", app, (lib.Command(resume="two"), c))
    hist = yield history(app, c)
    before_ask = _snap(hist, lambda s: s.next == ("ask",))
    # replay from before the node: both interrupts fire again
    yield Call("invoke", app, (None, before_ask.config))
    yield Call("invoke", app, (lib.Command(resume="r1"), c))
    yield Call("invoke", app, (lib.Command(resume="r2"), c))
    hist = yield history(app, c)
    first = _snap(hist, lambda s: s.next == ("a",))
    yield Call("stream", app, (None, first.config), {"stream_mode": "updates"})
    if "sqlite" not in type(saver).__module__:
        # (warpgraph's SQLite saver replaces a task's RESUME write however it is batched,
        # as the in-memory savers do; LangGraph's keeps the first one in a mixed batch)
        yield Call("checkpoints", app, (c,))
    yield history(app, c)


@script
def history_fields_and_partial_barrier(lib, saver):
    g = lib.StateGraph(Val)
    for n in ["s", "zeta", "alpha", "mid", "j"]:
        g.add_node(n, _node(n))
    g.add_edge(lib.START, "s")
    g.add_edge("s", "zeta")
    g.add_edge("s", "alpha")
    g.add_edge("alpha", "mid")
    g.add_edge(["zeta", "mid"], "j")
    app = g.compile(checkpointer=saver, interrupt_after=["mid"])
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c), {"durability": "sync"})
    yield Call("get_state", app, (c,))
    yield history(app, c)
    yield Call("get_state_history", app, (c,), {"limit": 2})
    yield Call("get_state_history", app, (c,), {"filter": {"source": "loop"}})
    hist = yield history(app, c)
    yield Call("get_state_history", app, (c,), {"before": hist[1].config})
    yield Call("invoke", app, (None, c), {"durability": "sync"})
    yield Call("update_state", app, (hist[1].config, {"value": ["late"]}, "zeta"))
    yield history(app, c)


@script
def replay_subgraph_called_in_loop(lib, saver):
    class Sub(TypedDict):
        sub_trail: Annotated[list, operator.add]

    class Parent(TypedDict):
        counter: int
        results: Annotated[list, operator.add]

    def inc(s: dict) -> dict:
        return {"counter": s["counter"] + 1, "results": [f"inc:{s['counter']}"]}

    def sub_step(s: dict) -> dict:
        return {"sub_trail": [f"s{len(s['sub_trail'])}"]}

    sub = lib.StateGraph(Sub)
    sub.add_node("sub_step", sub_step)
    sub.add_edge(lib.START, "sub_step")
    g = linear(lib, Parent, ("inc", inc), ("sub_node", sub.compile(checkpointer=True)))
    g.add_conditional_edges(
        "sub_node", lambda s: "inc" if s["counter"] < 2 else lib.END, ["inc", lib.END]
    )
    app = g.compile(checkpointer=saver)
    c = cfg()
    # the stateful subgraph runs twice per run: its second run reads what its first wrote
    yield Call("invoke", app, ({"counter": 0, "results": []}, c))
    yield Call("invoke", app, ({"counter": 0, "results": []}, c))
    hist = yield history(app, c)
    start_2nd = next(s for s in hist if s.next == ("inc",) and s.values["counter"] == 0)
    yield Call("invoke", app, (None, start_2nd.config))
    sub_cfg = {"configurable": {"thread_id": "t1", "checkpoint_ns": "sub_node"}}
    yield Call("get_state", app, (sub_cfg,))
    yield history(app, sub_cfg)
    yield history(app, c)


@script
def update_recovers_failed_task(lib, saver):
    attempts: list = []

    def flaky(s: dict) -> dict:
        attempts.append(1)
        raise ValueError("boom")

    app = _forked(lib, saver, "flaky", flaky)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c), {"durability": "sync"})
    # the snapshot shows the task's error and the parallel task's result
    state = yield Call("get_state", app, (c,))
    yield history(app, c)
    failed = next(t for t in state.tasks if t.name == "flaky")
    yield Call("update_state", app, (c, {"value": ["fixed"]}, "flaky", failed.id))
    yield Call("get_state", app, (c,))
    yield Call("invoke", app, (None, c), {"durability": "sync"})
    yield Call("checkpoints", app, (c,))


@script
def replay_three_levels_and_parallel_subgraphs(lib, saver):
    def ask(s: dict) -> dict:
        return {"value": [f"inner_ask:{lib.interrupt('inner?')}"]}

    inner = linear(lib, Val, ("i1", _node("i1")), ("i_ask", ask))
    mid = linear(lib, Val, ("m1", _node("m1")), ("inner", inner.compile(checkpointer=True)))
    side = lib.StateGraph(Val)
    side.add_node("side_step", _node("side_step"))
    side.add_edge(lib.START, "side_step")
    g = lib.StateGraph(Val)
    g.add_node("pre", _node("pre"))
    g.add_node("mid", mid.compile(checkpointer=True))
    g.add_node("side", side.compile(checkpointer=True))
    g.add_node("post", _node("post"))
    g.add_edge(lib.START, "pre")
    g.add_edge("pre", "mid")
    g.add_edge("pre", "side")
    g.add_edge("mid", "post")
    app = g.compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", app, ({"value": []}, c), {"durability": "sync"})
    yield Call("invoke", app, (lib.Command(resume="one"), c), {"durability": "sync"})
    yield Call("invoke", app, ({"value": []}, c), {"durability": "sync"})
    yield Call("invoke", app, (lib.Command(resume="two"), c), {"durability": "sync"})
    hist = yield history(app, c)
    before = [s for s in hist if s.next == ("mid", "side")][-1]
    # replay from the parent: every stateful subgraph level starts from its earlier state
    yield Call("invoke", app, (None, before.config), {"durability": "sync"})
    yield Call("get_state", app, (c,), {"subgraphs": True})
    yield Call("invoke", app, (lib.Command(resume="three"), c), {"durability": "sync"})
    for ns in ("mid", "side", "mid|inner"):
        yield history(app, {"configurable": {"thread_id": "t1", "checkpoint_ns": ns}})
    yield history(app, c)


# --------------------------------------------------------------------------- DeltaChannel
def _delta_reducer(current: list, writes: list) -> list:
    out = list(current)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def delta_chain(lib: Any, freq: int, names: str = "abc", *, binop: bool = False) -> Any:
    """`chain` whose `value` is a DeltaChannel (or, with `binop`, the operator.add channel
    a thread written before the migration used)."""
    if binop:
        channel: Any = operator.add
    else:
        delta = lib.module("channels.delta").DeltaChannel
        channel = delta(_delta_reducer, snapshot_frequency=freq)
    state = TypedDict("DeltaVal", {"value": Annotated[list, channel]})  # type: ignore[misc]
    return chain(lib, names, state)


def delta_listing(app: Any, config: dict, saver: Any) -> Any:
    """The saver's checkpoints, except on SQLite: LangGraph's SqliteSaver keeps a value only
    in the checkpoint that stored it, warpgraph's finds it by version (as both InMemorySavers
    do), so a checkpoint after a DeltaChannel snapshot lists the snapshot too there (the
    states read back, compared above, are the same)."""
    if "Sqlite" not in type(saver).__name__:
        yield Call("checkpoints", app, (config,))


@script
def delta_update_state_and_bulk(lib, saver):
    """update_state on a new thread (snapshotted), after runs (counters, snapshots at the
    cadence), several updates of one superstep (own task ids), as input and at END."""
    app = delta_chain(lib, 3).compile(checkpointer=saver)
    su = lib.types.StateUpdate
    yield Call("update_state", app, (cfg("new"), {"value": ["u0"]}, "a"))
    yield Call("get_state", app, (cfg("new"),))
    yield Call("invoke", app, ({"value": ["in"]}, cfg()))
    yield Call("update_state", app, (cfg(), {"value": ["u1"]}, "b"))
    yield Call("update_state", app, (cfg(), {"value": ["u2"]}, "c"))
    yield Call(
        "bulk_update_state",
        app,
        (cfg(), [[su({"value": ["x"]}, "a", "task-1"), su({"value": ["y"]}, "b", "task-2")]]),
    )
    yield Call("update_state", app, (cfg(), {"value": ["as-input"]}, "__input__"))
    yield Call("update_state", app, (cfg(), {"value": lib.Overwrite(["over"])}, "c"))
    yield Call("invoke", app, (None, cfg()))
    yield Call("get_state", app, (cfg(),))
    yield history(app, cfg())
    yield from delta_listing(app, cfg(), saver)


@script
def delta_time_travel_and_fork(lib, saver):
    """Runs on a delta thread, then a replay from an earlier checkpoint and an update on a
    checkpoint the thread moved past (a fork: snapshots instead of writes on the base)."""
    app = delta_chain(lib, 2).compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", app, ({"value": ["one"]}, c))
    yield Call("invoke", app, ({"value": ["two"]}, c))
    hist = yield history(app, c)
    before_b = [s for s in hist if s.next == ("b",)][-1]
    yield Call("invoke", app, (None, before_b.config))
    forked = yield Call("update_state", app, (before_b.config, {"value": ["forked"]}, "a"))
    yield Call("get_state", app, (forked,))
    yield Call("invoke", app, (None, forked))
    yield Call("get_state", app, (c,))
    yield history(app, c)
    yield from delta_listing(app, c, saver)


@script
def delta_migrated_thread(lib, saver):
    """A thread written with operator.add read and continued after the field became a
    DeltaChannel (seeded by the stored values)."""
    old = delta_chain(lib, 2, binop=True).compile(checkpointer=saver)
    new = delta_chain(lib, 2).compile(checkpointer=saver)
    c = cfg()
    yield Call("invoke", old, ({"value": ["old"]}, c))
    yield Call("get_state", new, (c,))
    yield Call("invoke", new, ({"value": ["new"]}, c))
    yield Call("update_state", new, (c, {"value": ["upd"]}, "c"))
    yield Call("get_state", new, (c,))
    yield history(new, c)
    yield from delta_listing(new, c, saver)
