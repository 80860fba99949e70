"""Scenarios: DeltaChannel (checkpoints that store writes, snapshots at their cadence)."""

from typing import Annotated, TypedDict

from ._build import linear
from .harness import Call, scenario
from .scenarios_core import CP, thread


def _reducer(current, writes):
    out = list(current)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def _delta(lib, freq):
    return lib.module("channels.delta").DeltaChannel(_reducer, snapshot_frequency=freq)


def _loop_graph(lib, freq, checkpointer, *, rounds=4):
    class S(TypedDict, total=False):
        items: Annotated[list, _delta(lib, freq)]
        other: Annotated[list, _delta(lib, 1000)]
        n: int

    def work(s):
        return {"items": [f"w{s.get('n', 0)}"], "n": s.get("n", 0) + 1}

    def route(s):
        return "work" if s["n"] % rounds else lib.END

    g = lib.StateGraph(S)
    g.add_node("work", work)
    g.add_edge(lib.START, "work")
    g.add_conditional_edges("work", route)
    return g.compile(checkpointer=checkpointer)


@scenario(durabilities=CP)
def delta_loop_snapshots(lib):
    """A loop writing a delta channel: snapshots every 3rd update, the other channel
    written only by the input; several runs on one thread replay from their ancestors."""
    app = _loop_graph(lib, 3, lib.InMemorySaver())
    inputs = [{"items": ["a"], "other": ["o"], "n": 0}, {"items": ["b"]}, {"n": 1}]
    return app, inputs, thread()


@scenario(parallel=True, durabilities=CP)
def delta_parallel_writers_and_overwrite(lib):
    """Parallel tasks writing one delta channel (replayed in task-path order), then a node
    replacing it with an Overwrite (snapshotted at once)."""

    class S(TypedDict, total=False):
        items: Annotated[list, _delta(lib, 100)]

    g = lib.StateGraph(S)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b1", "b2"]})
    g.add_node("reset", lambda s: {"items": lib.Overwrite(["reset", len(s["items"])])})
    g.add_node("after", lambda s: {"items": ["after"]})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge(["a", "b"], "reset")
    g.add_edge("reset", "after")
    app = g.compile(checkpointer=lib.InMemorySaver())
    return app, [{"items": ["in"]}, {"items": ["again"]}], thread()


@scenario(durabilities=CP)
def delta_messages_get_ids(lib):
    """Messages written to a delta channel of `_messages_delta_reducer` get stable ids
    (dicts become messages), replaced by id later."""
    reducer = lib.module("graph.message")._messages_delta_reducer
    DeltaChannel = lib.module("channels.delta").DeltaChannel

    class S(TypedDict):
        messages: Annotated[list, DeltaChannel(reducer, snapshot_frequency=2)]

    def bot(s):
        return {"messages": [{"role": "ai", "content": f"echo {len(s['messages'])}", "id": "ai"}]}

    g = lib.StateGraph(S)
    g.add_node("bot", bot)
    g.add_edge(lib.START, "bot")
    app = g.compile(checkpointer=lib.InMemorySaver())
    inputs = [
        {"messages": [{"role": "user", "content": "hi", "id": "u1"}]},
        {"messages": [{"role": "user", "content": "edited", "id": "u1"}]},
    ]
    return app, inputs, thread()


@scenario(durabilities=CP)
def delta_interrupt_resume(lib):
    """An interrupt in a graph with a delta channel, resumed: the resumed step's writes
    and the loaded ones replay once."""

    class S(TypedDict, total=False):
        items: Annotated[list, _delta(lib, 2)]

    def ask(s):
        answer = lib.interrupt("q")
        return {"items": [f"answer:{answer}"]}

    g = linear(
        lib,
        S,
        ("first", lambda s: {"items": ["first"]}),
        ("ask", ask),
        ("last", lambda s: {"items": [len(s["items"])]}),
    )
    app = g.compile(checkpointer=lib.InMemorySaver())
    return app, [{"items": ["in"]}, Call(lib.Command(resume="yes"))], thread()


@scenario(durabilities=CP)
def delta_replay_from_earlier_checkpoint(lib):
    """A replay from a checkpoint the thread moved past (its fork checkpoint snapshots the
    delta channel with a bumped version: nothing on the old branch is replayed), then a
    run continuing the new branch."""

    class S(TypedDict, total=False):
        items: Annotated[list, _delta(lib, 50)]

    g = linear(
        lib,
        S,
        ("a", lambda s: {"items": [f"a{len(s['items'])}"]}),
        ("b", lambda s: {"items": [f"b{len(s['items'])}"]}),
    )
    app = g.compile(checkpointer=lib.InMemorySaver())

    def before_b(graph):
        snaps = list(graph.get_state_history(thread()))
        return [s for s in snaps if s.next == ("b",)][-1].config

    inputs = [{"items": ["x"]}, {"items": ["y"]}, Call(None, config=before_b), {"items": ["z"]}]
    return app, inputs, thread()
