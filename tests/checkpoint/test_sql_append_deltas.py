"""Append deltas in the SQL savers (`warpgraph/checkpoint/_sql/appends.py`): SqliteSaver
(plain puts, batched puts, the native group-commit writer), AsyncSqliteSaver and, with a
server, PostgresSaver / AsyncPostgresSaver store a growing list channel as its appended
items; every reader still gets LangGraph's full values."""

from __future__ import annotations

import asyncio
import contextlib
import operator
import sqlite3
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import ormsgpack
import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from langgraph.graph import StateGraph as RefGraph
from warpgraph.checkpoint._sql import PutOp, appends
from warpgraph.checkpoint._sql.appends import DELTA_TYPE, AppendDeltaError
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from warpgraph.graph import END, START, StateGraph

messages = pytest.importorskip("langchain_core.messages")
from langgraph.graph.message import add_messages

TEXT = "lorem ipsum dolor sit amet " * 4


class Log(TypedDict):
    log: Annotated[list, operator.add]
    n: int


class Chat(TypedDict):
    messages: Annotated[list, add_messages]
    n: int


def _turn(state: dict) -> dict:
    return {"log": [{"turn": state["n"], "text": TEXT}], "n": state["n"] + 1}


def _chat(state: dict) -> dict:
    n = state["n"]
    return {
        "messages": [
            messages.HumanMessage(f"q{n} {TEXT}", id=f"h{n}"),
            messages.AIMessage(f"a{n}", id=f"a{n}"),
        ],
        "n": n + 1,
    }


def _app(graph_cls: Any, schema: Any, node: Any, saver: Any, loop: int = 0) -> Any:
    g = graph_cls(schema)
    g.add_node("a", node)
    g.add_edge(START, "a")
    if loop:
        g.add_conditional_edges("a", lambda s: "a" if s["n"] < loop else END)
    else:
        g.add_edge("a", END)
    return g.compile(checkpointer=saver)


def _cfg(thread: str = "t") -> dict:
    return {"configurable": {"thread_id": thread}}


class Side:
    """One saver kind: how to open it and run a graph's turns on it."""

    def __init__(self, kind: str, path: str) -> None:
        self.kind, self.path = kind, path

    @contextlib.contextmanager
    def open(self, **kwargs: Any) -> Iterator[Any]:
        if self.kind == "async":
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            saver = AsyncSqliteSaver(conn, **kwargs)
            asyncio.run(saver.setup())
            try:
                yield saver
            finally:
                saver._runner.close()
                conn.close()
            return
        with SqliteSaver.from_conn_string(self.path, **kwargs) as saver:
            yield saver

    def invoke(self, app: Any, value: Any, config: dict) -> Any:
        if self.kind == "async":
            return asyncio.run(app.ainvoke(value, config))
        durability = "async" if self.kind == "writer" else None
        return app.invoke(value, config, durability=durability)

    def history(self, app: Any, thread: str = "t") -> list:
        if self.kind == "async":

            async def collect() -> list:
                return [h async for h in app.aget_state_history(_cfg(thread))]

            got = asyncio.run(collect())
        else:
            got = list(app.get_state_history(_cfg(thread)))
        return [(h.values, h.next, h.metadata["step"]) for h in got]


@pytest.fixture(params=["sync", "writer", "async"])
def side(request: Any, tmp_path: Any) -> Side:
    return Side(request.param, str(tmp_path / "db.sqlite"))


def _kinds(saver: Any, channel: str) -> list[str]:
    return [
        r[0] for r in saver.conn.execute("SELECT type FROM wg_blobs WHERE channel = ?", (channel,))
    ]


def _blob_bytes(saver: Any) -> int:
    return saver.conn.execute("SELECT coalesce(sum(length(blob)), 0) FROM wg_blobs").fetchone()[0]


def _run_turns(side: Side, app: Any, first: dict, turns: int, thread: str = "t") -> None:
    side.invoke(app, first, _cfg(thread))
    for i in range(turns):
        side.invoke(app, {"n": i + 1}, _cfg(thread))


def _ref_history(schema: Any, node: Any, first: dict, turns: int, loop: int = 0) -> Any:
    ref = _app(RefGraph, schema, node, RefSaver(), loop)
    if loop:
        ref.invoke(first, _cfg())
    else:
        ref.invoke(first, _cfg())
        for i in range(turns):
            ref.invoke({"n": i + 1}, _cfg())
    hist = [(h.values, h.next, h.metadata["step"]) for h in ref.get_state_history(_cfg())]
    return hist, ref.get_state(_cfg()).values


@pytest.mark.parametrize("kind", ["dicts", "messages"])
@pytest.mark.parametrize("loop", [0, 30])
def test_history_equals_reference(side: Side, kind: str, loop: int) -> None:
    schema, node, first, channel = (
        (Log, _turn, {"log": [], "n": 0}, "log")
        if kind == "dicts"
        else (Chat, _chat, {"n": 0}, "messages")
    )
    with side.open() as saver:
        app = _app(StateGraph, schema, node, saver, loop)
        if loop:
            side.invoke(app, first, _cfg())
        else:
            _run_turns(side, app, first, 30)
        kinds = _kinds(saver, channel)
        assert kinds.count(DELTA_TYPE) > len(kinds) // 2  # stored as deltas
        ref_hist, ref_values = _ref_history(schema, node, first, 30, loop)
        assert side.history(app) == ref_hist
        assert app.get_state(_cfg()).values == ref_values
        ours = _blob_bytes(saver)
    with Side(side.kind, side.path + ".off").open(append_deltas=False) as whole:
        app = _app(StateGraph, schema, node, whole, loop)
        if loop:
            side.invoke(app, first, _cfg())
        else:
            _run_turns(side, app, first, 30)
        assert DELTA_TYPE not in _kinds(whole, channel)
        assert ours * 3 < _blob_bytes(whole)


def test_bytes_grow_linearly(tmp_path: Any) -> None:
    """O(total) bytes: twice the turns store about twice the bytes, not four times."""
    sizes = []
    for turns in (60, 120):
        side = Side("sync", str(tmp_path / f"{turns}.sqlite"))
        with side.open() as saver:
            _run_turns(side, _app(StateGraph, Log, _turn, saver), {"log": [], "n": 0}, turns)
            sizes.append(_blob_bytes(saver))
    assert sizes[1] < 2.6 * sizes[0], sizes


def test_threads_written_without_deltas_load_and_continue(side: Side) -> None:
    with side.open(append_deltas=False) as old:
        _run_turns(side, _app(StateGraph, Log, _turn, old), {"log": [], "n": 0}, 6)
        before = side.history(_app(StateGraph, Log, _turn, old))
    with side.open() as new:
        app = _app(StateGraph, Log, _turn, new)
        assert side.history(app) == before
        for i in range(5):
            side.invoke(app, {"n": 10 + i}, _cfg())
        assert DELTA_TYPE in _kinds(new, "log")
        turns = [e["turn"] for e in app.get_state(_cfg()).values["log"]]
        assert turns == [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14]


def test_reopened_saver_continues_a_thread_as_deltas(side: Side) -> None:
    """A new saver (a new process) continues a thread from what its first read gave:
    the same rows as one saver running all the turns."""
    kinds = []
    for reopen in (False, True):
        path = f"{side.path}.{reopen}"
        with Side(side.kind, path).open() as saver:
            app = _app(StateGraph, Log, _turn, saver)
            _run_turns(side, app, {"log": [], "n": 0}, 5)
            if reopen:
                stack = Side(side.kind, path).open()  # (the first saver stays open)
                saver = stack.__enter__()
                app = _app(StateGraph, Log, _turn, saver)
            for i in range(8):
                side.invoke(app, {"n": 20 + i}, _cfg())
            kinds.append(_kinds(saver, "log"))
            assert len(app.get_state(_cfg()).values["log"]) == 14
            if reopen:
                stack.__exit__(None, None, None)
    assert kinds[0] == kinds[1]
    assert kinds[1][6:].count(DELTA_TYPE) >= 6


def _rewrite(left: list, right: list) -> list:
    return [*right, *left]  # prepends: never an extension of the stored list


class Rewritten(TypedDict):
    log: Annotated[list, _rewrite]
    n: int


def test_non_append_values_are_stored_whole(side: Side) -> None:
    with side.open() as saver:
        app = _app(StateGraph, Rewritten, _turn, saver)
        _run_turns(side, app, {"log": [], "n": 0}, 8)
        assert set(_kinds(saver, "log")) == {"msgpack"}
        assert len(app.get_state(_cfg()).values["log"]) == 9


def _depths(saver: Any) -> list[int]:
    rows = saver.conn.execute("SELECT blob FROM wg_blobs WHERE type = ?", (DELTA_TYPE,))
    return [ormsgpack.unpackb(r[0])[4] for r in rows]


def test_chains_are_bounded(side: Side, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(appends, "MAX_DEPTH", 4)
    with side.open() as saver:
        app = _app(StateGraph, Log, _turn, saver)
        _run_turns(side, app, {"log": [], "n": 0}, 30)
        depths = _depths(saver)
        assert depths and max(depths) == 4
        assert _kinds(saver, "log").count("msgpack") >= 30 // 5
        assert len(app.get_state(_cfg()).values["log"]) == 31


def test_bytes_rule_starts_new_bases(side: Side) -> None:
    with side.open() as saver:
        _run_turns(side, _app(StateGraph, Log, _turn, saver), {"log": [], "n": 0}, 60)
        rows = saver.conn.execute("SELECT blob FROM wg_blobs WHERE type = ?", (DELTA_TYPE,))
        for (payload,) in rows:
            _, _, _, _, _, chain, base, _ = ormsgpack.unpackb(payload)
            assert chain <= base
        assert _kinds(saver, "log").count("msgpack") >= 3  # bases grow geometrically


def test_prune_copy_and_delete_for_runs_keep_chains(side: Side) -> None:
    with side.open() as saver:
        app = _app(StateGraph, Log, _turn, saver)
        _run_turns(side, app, {"log": [], "n": 0}, 12)
        want = app.get_state(_cfg()).values
        saver.copy_thread("t", "copy")
        saver.prune(["t"], strategy="keep_latest")
        assert app.get_state(_cfg()).values == want
        assert app.get_state(_cfg("copy")).values == want
        run_ids = {h.metadata.get("run_id") for h in saver.list(_cfg("copy"))}
        run_ids.discard(None)
        last = next(iter(saver.list(_cfg("copy")))).metadata.get("run_id")
        saver.delete_for_runs(sorted(run_ids - {last}))
        assert app.get_state(_cfg("copy")).values == want
        side.invoke(app, {"n": 100}, _cfg())  # and the thread goes on
        assert len(app.get_state(_cfg()).values["log"]) == 14


def _cp(values: dict, versions: dict, cid: str | None = None) -> dict:
    return {
        "v": 4,
        "id": cid or str(uuid6()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": {},
        "updated_channels": sorted(versions),
    }


def _items(lo: int, hi: int) -> list:
    return [{"i": i, "text": TEXT} for i in range(lo, hi)]


def _put_chain(saver: Any, lengths: list[int]) -> tuple[list, list]:
    """Puts of one growing list (each value extending the previous one's objects)."""
    configs, cps = [], []
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    value: list = []
    for n, length in enumerate(lengths):
        value = [*value, *_items(len(value), length)]
        cp = _cp({"log": value}, {"log": f"{n + 1:032}.0"})
        config = saver.put(config, cp, {"step": n}, {"log": f"{n + 1:032}.0"})
        configs.append(config)
        cps.append(cp)
    return configs, cps


def test_direct_puts_read_back_exactly(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, cps = _put_chain(saver, [10, 11, 12, 12, 14])
        assert _kinds(saver, "log") == ["msgpack", *[DELTA_TYPE] * 4]
        for config, cp in zip(configs, cps):
            got = saver.get_tuple(config).checkpoint
            assert got["channel_values"] == cp["channel_values"]
        listed = [t.checkpoint["channel_values"]["log"] for t in saver.list(None)]
        assert listed == [cp["channel_values"]["log"] for cp in reversed(cps)]


def test_corrupt_deltas_raise_clear_errors(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, _ = _put_chain(saver, [10, 11, 12])
        conn = saver.conn
        version = f"{3:032}.0"
        payload = conn.execute("SELECT blob FROM wg_blobs WHERE version = ?", (version,))
        fields = ormsgpack.unpackb(payload.fetchone()[0])
        fields[3] += 1  # claims one item more than it holds
        conn.execute(
            "UPDATE wg_blobs SET blob = ? WHERE version = ?", (ormsgpack.packb(fields), version)
        )
        saver._core.forget()
        with pytest.raises(AppendDeltaError, match="version"):
            saver.get_tuple(configs[2])
        conn.execute("UPDATE wg_blobs SET blob = ? WHERE version = ?", (b"\xc1junk", version))
        saver._core.forget()
        with pytest.raises(AppendDeltaError, match="not valid msgpack"):
            saver.get_tuple(configs[2])
        conn.execute("DELETE FROM wg_blobs WHERE version = ?", (f"{1:032}.0",))  # its base
        saver._core.forget()
        with pytest.raises(AppendDeltaError, match="missing"):
            saver.get_tuple(configs[1])


def test_a_failed_put_is_no_later_delta_base(tmp_path: Any) -> None:
    """A batch whose middle put fails alone: the later put extending that put's value is
    stored whole, never as a delta naming a version that was not stored."""
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, cps = _put_chain(saver, [4])
        first = cps[0]["channel_values"]["log"]
        second = [*first, *_items(4, 6)]
        third = [*second, *_items(6, 8)]
        cp2 = _cp({"log": second}, {"log": f"{2:032}.0"})
        cp3 = _cp({"log": third}, {"log": f"{3:032}.0"})
        ops = [
            PutOp(configs[0], cp2, {"step": 1}, {"log": f"{2:032}.0"}, expected_head="nope"),
            PutOp(configs[0], cp3, {"step": 2}, {"log": f"{3:032}.0"}),
        ]
        results = saver.put_batch(ops, return_exceptions=True)
        assert isinstance(results[0], Exception)
        got = saver.get_tuple(results[1]).checkpoint["channel_values"]["log"]
        assert got == third


def test_version_stored_again_rebases_its_dependents(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, cps = _put_chain(saver, [10, 11, 12])
        # the second checkpoint stored again under its id, its version with other bytes
        other = _items(100, 105)
        again = _cp({"log": other}, {"log": f"{2:032}.0"}, cid=cps[1]["id"])
        saver.put(configs[0], again, {"step": 1}, {"log": f"{2:032}.0"})
        assert saver.get_tuple(configs[1]).checkpoint["channel_values"]["log"] == other
        assert saver.get_tuple(configs[2]).checkpoint["channel_values"] == cps[2]["channel_values"]
