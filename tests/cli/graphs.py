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
