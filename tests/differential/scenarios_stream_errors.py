"""Scenarios: a step that fails as it is applied, after a lone task ran: LangGraph's
stream raises without the chunks that task queued (unless the stream is eager)."""

from typing import TypedDict

from .harness import scenario
from .scenarios_core import thread


class X(TypedDict, total=False):
    x: int
    note: str


def _clash(lib):
    """`a` and `ask` run in parallel; `ask` interrupts, `a`'s write is kept; on resume only
    `ask` runs, and its write to `x` clashes with `a`'s when the step is applied."""

    def ask(s):
        answer = lib.interrupt("go?")
        return {"x": 2, "note": answer}

    g = lib.StateGraph(X)
    g.add_node("a", lambda s: {"x": 1})
    g.add_node("ask", ask)
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "ask")
    return g.compile(checkpointer=lib.InMemorySaver())


@scenario(parallel=True, durabilities=(None, "sync", "exit"))
def lone_task_then_invalid_update(lib):
    return _clash(lib), [{"x": 0}, lib.Command(resume="yes")], thread()


def _twin_writers(lib):
    """Two Sends to `w` in one step both write LastValue `x`: the step's writes are saved,
    then applying them fails. A later run on the thread finds every task of that step done."""

    def fan(s):
        return [lib.Send("w", {"x": i}) for i in range(2)]

    g = lib.StateGraph(X)
    g.add_node("a", lambda s: {"note": "a"})
    g.add_node("w", lambda s: {"x": s["x"] + 10})
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", fan)
    return g.compile(checkpointer=lib.InMemorySaver())


@scenario(parallel=True, durabilities=(None, "sync", "exit"))
def resumed_step_with_every_write_saved_fails_again(lib):
    """Nothing runs on the second and third calls, yet LangGraph's stream hands on the
    resumed values and the cached updates before the step fails again."""
    return _twin_writers(lib), [{"x": 0}, None, lib.Command(resume="yes")], thread()
