"""The seed example: a two-node graph, checkpointed to SQLite, streamed, inspected, resumed.

Run with `.venv/bin/python examples/quickstart.py` after `make build`. Pass a database path
to keep the threads between runs (`python examples/quickstart.py threads.sqlite`), then look
inside with `warpgraph threads threads.sqlite`.
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from pathlib import Path
from typing import TypedDict

from warpgraph.checkpoint.sqlite import SqliteSaver
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


def main(db_path: str) -> None:
    config = {"configurable": {"thread_id": f"t1-{uuid.uuid4().hex[:8]}"}}
    print(f"database: {db_path}  thread: {config['configurable']['thread_id']}")

    with SqliteSaver.from_conn_string(db_path) as saver:
        graph = build(saver)
        for chunk in graph.stream({"n": 1}, config, stream_mode="updates"):
            print("update:", chunk)

    # A new connection (as a new process would open) sees the persisted thread.
    with SqliteSaver.from_conn_string(db_path) as saver:
        graph = build(saver)
        for snapshot in reversed(list(graph.get_state_history(config))):
            meta = snapshot.metadata
            print(f"checkpoint step={meta['step']:>2} source={meta['source']:<5} next={snapshot.next}")
        print("state:", graph.get_state(config).values)
        print("second invoke on the same thread:", graph.invoke({"n": 2}, config))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        with tempfile.TemporaryDirectory() as tmp:
            main(str(Path(tmp) / "quickstart.sqlite"))
