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
