"""A small thread to inspect, written by either library's SQLite or Postgres saver: a node,
an interrupt resumed with a value, and a thread left waiting at the interrupt."""

from __future__ import annotations

import importlib
import operator
from typing import Annotated, TypedDict


class S(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]
    answer: str


def write_threads(lib: str, saver) -> None:
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")

    def a(s):
        return {"n": s["n"] + 1, "log": ["a"]}

    def b(s):
        return {"answer": types.interrupt("approve?"), "log": ["b"]}

    g = graph_mod.StateGraph(S)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(graph_mod.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", graph_mod.END)
    graph = g.compile(checkpointer=saver)
    graph.invoke({"n": 1, "log": []}, {"configurable": {"thread_id": "waiting"}})
    done = {"configurable": {"thread_id": "done"}}
    graph.invoke({"n": 5, "log": []}, done)
    graph.invoke(types.Command(resume="yes"), done)


def write_sqlite(lib: str, path: str) -> None:
    import sqlite3

    mod = importlib.import_module(f"{lib}.checkpoint.sqlite")
    conn = sqlite3.connect(path, check_same_thread=False)
    try:
        saver = mod.SqliteSaver(conn)
        saver.setup()
        write_threads(lib, saver)
    finally:
        conn.close()


def write_postgres(lib: str, dsn: str) -> None:
    mod = importlib.import_module(f"{lib}.checkpoint.postgres")
    with mod.PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()
        write_threads(lib, saver)


class Fan(TypedDict, total=False):
    n: int
    results: Annotated[list, operator.add]


class Part(TypedDict, total=False):
    x: int
    results: Annotated[list, operator.add]


def send_graph(lib: str, saver):
    """A fan-out by Send to a two-node subgraph, then a join."""
    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")
    START, END = graph_mod.START, graph_mod.END
    sg = graph_mod.StateGraph(Part)
    sg.add_node("double", lambda s: {"x": s["x"] * 2})
    sg.add_node("emit", lambda s: {"results": [s["x"]]})
    sg.add_edge(START, "double")
    sg.add_edge("double", "emit")
    sg.add_edge("emit", END)
    g = graph_mod.StateGraph(Fan)
    g.add_node("spread", lambda s: {})
    g.add_node("worker", sg.compile())
    g.add_node("join", lambda s: {"n": sum(s["results"])})
    g.add_edge(START, "spread")
    g.add_conditional_edges(
        "spread", lambda s: [types.Send("worker", {"x": i, "results": []}) for i in range(s["n"])]
    )
    g.add_edge("worker", "join")
    g.add_edge("join", END)
    return g.compile(checkpointer=saver)
