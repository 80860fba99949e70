"""The seed example: a two-node graph, checkpointed, streamed and resumed.

Run with `make example` (installs warpgraph into .venv first).
"""

from __future__ import annotations

from typing import TypedDict

from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int


def a(state: State) -> State:
    return {"n": state["n"] + 1}


def b(state: State) -> State:
    return {"n": state["n"] * 10}


def build(checkpointer):
    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=checkpointer)


def main() -> None:
    saver = InMemorySaver()
    graph = build(saver)
    config = {"configurable": {"thread_id": "t1"}}

    for chunk in graph.stream({"n": 1}, config, stream_mode="updates"):
        print("update:", chunk)

    for snapshot in reversed(list(graph.get_state_history(config))):
        meta = snapshot.metadata
        print(f"checkpoint step={meta['step']:>2} source={meta['source']:<5} next={snapshot.next}")

    print("final:", graph.get_state(config).values)
    print("second invoke on the same thread:", graph.invoke({"n": 2}, config))


if __name__ == "__main__":
    main()
