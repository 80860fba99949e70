"""Streamed runs of steps with one task (warpgraph runs them as lone steps under
stream_mode "updates" / "values": `pregel/_lone.py`), on the reference and on the target.

Each run records one event log: every node call, every saver call (`put`, `put_writes`)
and every chunk as the consumer receives it, in the order they happen. Equal logs mean the
same chunks in the same order, handed on at the same points between node calls and saver
calls (a step's chunks reach the consumer before the next step's node runs). Graphs:
chains, a loop, conditional edges, a node raising mid-stream, a node interrupting; a
consumer that stops after its first (or third) chunk must have let no later node run.
Savers under durability="sync" (LangGraph's "async" saves on a thread: its order against
the chunks is not deterministic) and "exit", and no saver.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import sqlite3
from contextlib import nullcontext
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from .harness import target_lib
from .libs import get_lib
from .normalize import Normalizer

MODES: list[Any] = ["updates", "values", ["updates", "values"], ["values", "updates"]]
SAVERS = ("none", "sync", "exit")


class State(TypedDict):
    items: Annotated[list, operator.add]
    n: int


def _saver(lib: Any, log: list) -> Any:
    class Logged(lib.InMemorySaver):  # type: ignore[name-defined,misc]
        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            log.append(("put", metadata.get("step"), metadata.get("source")))
            return super().put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            log.append(("put_writes", sorted(str(c) for c, _ in writes)))
            super().put_writes(config, writes, task_id, task_path)

        async def aput(self, *args: Any) -> Any:
            return self.put(*args)

        async def aput_writes(self, *args: Any) -> None:
            self.put_writes(*args)

    return Logged()


def _node(lib: Any, name: str, log: list, kind: str = "add") -> Any:
    def node(state: State) -> Any:
        log.append(("node", name, state["n"]))
        if kind == "raise" and state["n"] >= 2:
            raise ValueError(f"{name} fails at {state['n']}")
        if kind == "interrupt" and state["n"] >= 2:
            answer = lib.interrupt({"ask": name})
            return {"items": [answer], "n": state["n"] + 1}
        if kind == "none":
            return None
        return {"items": [name], "n": state["n"] + 1}

    return node


def _chain(lib: Any, log: list, kind: str) -> Any:
    g = lib.StateGraph(State)
    names = [f"c{i}" for i in range(5)]
    for i, name in enumerate(names):
        g.add_node(name, _node(lib, name, log, kind if i == 3 else "add"))
    g.add_edge(lib.START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], lib.END)
    return g


def _loop(lib: Any, log: list, kind: str) -> Any:
    g = lib.StateGraph(State)
    g.add_node("a", _node(lib, "a", log))
    g.add_node("b", _node(lib, "b", log, kind))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", lambda s: "a" if s["n"] < 7 else lib.END)
    return g


def _branches(lib: Any, log: list, kind: str) -> Any:
    g = lib.StateGraph(State)
    for name in ("start", "even", "odd", "last"):
        g.add_node(name, _node(lib, name, log, kind if name == "odd" else "add"))
    g.add_node("quiet", _node(lib, "quiet", log, "none"))
    g.add_edge(lib.START, "start")
    g.add_conditional_edges(
        "start", lambda s: "even" if s["n"] % 2 == 0 else "odd", ["even", "odd"]
    )
    g.add_edge("even", "quiet")
    g.add_edge("odd", "quiet")
    g.add_conditional_edges("quiet", lambda s: "last" if s["n"] < 4 else lib.END)
    g.add_edge("last", "start")
    return g


GRAPHS = {"chain": _chain, "loop": _loop, "branches": _branches}
KINDS = ("add", "raise", "interrupt")


def _build(lib: Any, graph: str, kind: str, saver: str, log: list) -> tuple[Any, dict]:
    cp = None if saver == "none" else _saver(lib, log)
    compiled = GRAPHS[graph](lib, log, kind).compile(checkpointer=cp)
    config = {"configurable": {"thread_id": "t"}} if cp is not None else {}
    return compiled, config


def _options(saver: str, mode: Any) -> dict:
    opts: dict = {"stream_mode": mode}
    if saver != "none":
        opts["durability"] = saver
    return opts


def _run_sync(lib: Any, graph: str, kind: str, saver: str, mode: Any, stop: int | None) -> Any:
    log: list = []
    app, config = _build(lib, graph, kind, saver, log)
    inp = {"items": [], "n": 0}
    try:
        chunks = app.stream(inp, config, **_options(saver, mode))
        for i, chunk in enumerate(chunks):
            log.append(("chunk", chunk))
            if stop is not None and i + 1 >= stop:
                chunks.close()
                log.append(("closed",))
                break
    except Exception as e:  # noqa: BLE001 - the error is part of the log
        log.append(("error", type(e).__name__, str(e)))
    if config:
        log.append(("state", app.get_state(config)))
    return Normalizer()(log)


async def _run_async(
    lib: Any, graph: str, kind: str, saver: str, mode: Any, stop: int | None
) -> Any:
    log: list = []
    app, config = _build(lib, graph, kind, saver, log)
    inp = {"items": [], "n": 0}
    try:
        chunks = app.astream(inp, config, **_options(saver, mode))
        i = 0
        async for chunk in chunks:
            log.append(("chunk", chunk))
            i += 1
            if stop is not None and i >= stop:
                await chunks.aclose()
                log.append(("closed",))
                break
    except Exception as e:  # noqa: BLE001 - the error is part of the log
        log.append(("error", type(e).__name__, str(e)))
    if config:
        log.append(("state", await app.aget_state(config)))
    return Normalizer()(log)


def _cases() -> list:
    out = []
    for graph in GRAPHS:
        for kind in KINDS:
            for saver in SAVERS:
                if kind == "interrupt" and saver == "none":
                    continue  # (interrupt needs a checkpointer)
                for mi, mode in enumerate(MODES):
                    out.append(
                        pytest.param(graph, kind, saver, mode, id=f"{graph}-{kind}-{saver}-m{mi}")
                    )
    return out


@pytest.mark.parametrize(("graph", "kind", "saver", "mode"), _cases())
def test_sync_stream_log(graph: str, kind: str, saver: str, mode: Any) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = _run_sync(ref, graph, kind, saver, mode, None)
    assert any(e[0] == "chunk" for e in want)
    assert _run_sync(target, graph, kind, saver, mode, None) == want


@pytest.mark.parametrize(("graph", "kind", "saver", "mode"), _cases())
async def test_async_stream_log(graph: str, kind: str, saver: str, mode: Any) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = await _run_async(ref, graph, kind, saver, mode, None)
    assert await _run_async(target, graph, kind, saver, mode, None) == want


@pytest.mark.parametrize("stop", [1, 3])
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("mode", MODES[:3])
@pytest.mark.parametrize("graph", list(GRAPHS))
def test_sync_consumer_stops(graph: str, mode: Any, saver: str, stop: int) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = _run_sync(ref, graph, "add", saver, mode, stop)
    # (what the test relies on: the reference ran fewer nodes than the whole run has)
    assert sum(e[0] == "node" for e in want) < sum(
        e[0] == "node" for e in _run_sync(ref, graph, "add", saver, mode, None)
    )
    assert _run_sync(target, graph, "add", saver, mode, stop) == want


@pytest.mark.parametrize("stop", [1, 3])
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("mode", MODES[:3])
@pytest.mark.parametrize("graph", list(GRAPHS))
async def test_async_consumer_stops(graph: str, mode: Any, saver: str, stop: int) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = await _run_async(ref, graph, "add", saver, mode, stop)
    got = await asyncio.wait_for(_run_async(target, graph, "add", saver, mode, stop), 20)
    assert got == want


def _sqlite(lib: Any, path: str) -> Any:
    if lib.name == "langgraph":
        from langgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    from warpgraph.checkpoint.sqlite import SqliteSaver as WgSqlite

    return WgSqlite.from_conn_string(path)


def _run_sqlite(lib: Any, graph: str, kind: str, durability: str, mode: Any, path: str) -> Any:
    """Node calls and chunks in order (LangGraph's SQLite saver saves on a thread under
    durability="async": its calls are left out), then what the saver holds."""
    log: list = []
    saver_cm = _sqlite(lib, path)
    with saver_cm if lib.name != "langgraph" else nullcontext(saver_cm) as saver:
        app = GRAPHS[graph](lib, log, kind).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t"}}
        try:
            for chunk in app.stream(
                {"items": [], "n": 0}, config, stream_mode=mode, durability=durability
            ):
                log.append(("chunk", chunk))
        except Exception as e:  # noqa: BLE001 - the error is part of the log
            log.append(("error", type(e).__name__, str(e)))
        log.append(("state", app.get_state(config)))
        log.append(
            ("saved", [(t.metadata, len(t.pending_writes or ())) for t in saver.list(config)])
        )
        if lib.name == "langgraph":
            saver.conn.close()
    return Normalizer()(log)


@pytest.mark.parametrize("mode", MODES[:3])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("graph", ["chain", "loop"])
def test_sync_stream_sqlite(graph: str, kind: str, durability: str, mode: Any, tmp_path) -> None:
    ref, target = get_lib("langgraph"), target_lib()
    want = _run_sqlite(ref, graph, kind, durability, mode, str(tmp_path / "ref.db"))
    got = _run_sqlite(target, graph, kind, durability, mode, str(tmp_path / "target.db"))
    assert got == want
