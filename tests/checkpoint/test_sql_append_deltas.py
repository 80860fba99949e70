"""Append deltas in the SQL savers (`warpgraph/checkpoint/_sql/appends.py`): SqliteSaver
(plain puts, batched puts, the native group-commit writer), AsyncSqliteSaver and, with a
server, PostgresSaver / AsyncPostgresSaver store a growing list channel as its appended
items; every reader still gets LangGraph's full values."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import ormsgpack
import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from langgraph.graph import StateGraph as RefGraph
from warpgraph.checkpoint._sql import PutOp, appends
from warpgraph.checkpoint._sql.appends import DELTA_TYPE, AppendDeltaError
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

psycopg = pytest.importorskip("psycopg")
from warpgraph.checkpoint.postgres import PostgresSaver
from warpgraph.checkpoint.postgres._schema import BLOBS as PG_BLOBS
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from warpgraph.graph import StateGraph

from tests.checkpoint.test_append_deltas import Chat, Log, Rewritten, _app, _chat, _turn
from tests.checkpoint.test_sqlite import _cp

TEXT = "lorem ipsum dolor sit amet " * 4


def _cfg(thread: str = "t") -> dict:
    return {"configurable": {"thread_id": thread}}


class Side:
    """One saver kind: how to open it, run a graph's turns on it and query its blob table.
    `where`: a SQLite file, or a Postgres DSN (kinds "pg", "apg"); the async kinds run
    on one event loop in a thread of their own."""

    def __init__(self, kind: str, where: str) -> None:
        self.kind, self.where = kind, where
        self.loop: asyncio.AbstractEventLoop | None = None
        if kind in ("async", "apg"):
            self.loop = asyncio.new_event_loop()
            threading.Thread(target=self.loop.run_forever, daemon=True).start()

    def close(self) -> None:
        """Stop the event loop's thread (async kinds)."""
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()  # type: ignore[arg-type]

    def other(self, suffix: str) -> Side:
        """A side of the same kind on another database (Postgres: the same one)."""
        if self.kind in ("pg", "apg"):
            return Side(self.kind, self.where)
        return Side(self.kind, f"{self.where}.{suffix}")

    @contextlib.contextmanager
    def open(self, **kwargs: Any) -> Iterator[Any]:
        if self.kind == "async":
            conn = sqlite3.connect(self.where, check_same_thread=False, isolation_level=None)
            saver = AsyncSqliteSaver(conn, **kwargs)
            self.run(saver.setup())
            try:
                yield saver
            finally:
                saver._runner.close()
                conn.close()
        elif self.kind == "pg":
            with PostgresSaver.from_conn_string(self.where, **kwargs) as saver:
                saver.setup()
                yield saver
        elif self.kind == "apg":
            opened = AsyncPostgresSaver.from_conn_string(self.where, **kwargs)
            saver = self.run(opened.__aenter__())
            self.run(saver.setup())
            try:
                yield saver
            finally:
                self.run(opened.__aexit__(None, None, None))
        else:
            with SqliteSaver.from_conn_string(self.where, **kwargs) as saver:
                yield saver

    def invoke(self, app: Any, value: Any, config: dict) -> Any:
        if self.loop is not None:
            return self.run(app.ainvoke(value, config))
        durability = "async" if self.kind == "writer" else None
        return app.invoke(value, config, durability=durability)

    def history(self, app: Any, thread: str = "t") -> list:
        if self.loop is not None:

            async def collect() -> list:
                return [h async for h in app.aget_state_history(_cfg(thread))]

            got = self.run(collect())
        else:
            got = list(app.get_state_history(_cfg(thread)))
        return [(h.values, h.next, h.metadata["step"]) for h in got]

    def query(self, saver: Any, sql: str, params: Sequence[Any] = ()) -> list:
        """Rows of `sql` (SQLite's text: "wg_blobs", "?") on the saver's database."""
        if self.kind not in ("pg", "apg"):
            return saver.conn.execute(sql, params).fetchall()
        sql = sql.replace("wg_blobs", PG_BLOBS).replace("?", "%s")
        with psycopg.connect(self.where, autocommit=True) as conn:
            cur = conn.execute(sql, list(params))
            return cur.fetchall() if cur.description else []


SQLITE_KINDS = ["sync", "writer", "async"]
PG_KINDS = ["pg", "apg"]


@pytest.fixture(params=[*SQLITE_KINDS, *PG_KINDS])
def side(request: Any, tmp_path: Any) -> Iterator[Side]:
    if request.param in ("pg", "apg"):
        where = request.getfixturevalue("pg_fresh_dsn")
    else:
        where = str(tmp_path / "db.sqlite")
    with contextlib.closing(Side(request.param, where)) as made:
        yield made


def _kinds(side: Side, saver: Any, channel: str, thread: str = "t") -> list[str]:
    """The stored types of a channel's blob rows, in version order."""
    sql = "SELECT type FROM wg_blobs WHERE thread_id = ? AND channel = ? ORDER BY version"
    return [r[0] for r in side.query(saver, sql, (thread, channel))]


def _blob_bytes(side: Side, saver: Any, thread: str = "t") -> int:
    sql = "SELECT coalesce(sum(length(blob)), 0) FROM wg_blobs WHERE thread_id = ?"
    return side.query(saver, sql, (thread,))[0][0]


def _run_turns(side: Side, app: Any, first: dict, turns: int, thread: str = "t") -> None:
    side.invoke(app, first, _cfg(thread))
    for i in range(turns):
        side.invoke(app, {"n": i + 1}, _cfg(thread))


def _ref_history(schema: Any, node: Any, first: dict, turns: int, loop: int = 0) -> Any:
    ref = _app(RefGraph, schema, node, RefSaver(), loop)
    ref.invoke(first, _cfg())
    for i in range(0 if loop else turns):
        ref.invoke({"n": i + 1}, _cfg())
    hist = [(h.values, h.next, h.metadata["step"]) for h in ref.get_state_history(_cfg())]
    return hist, ref.get_state(_cfg()).values


def _drive(side: Side, app: Any, first: dict, loop: int, thread: str = "t") -> None:
    if loop:
        side.invoke(app, first, _cfg(thread))
    else:
        _run_turns(side, app, first, 30, thread)


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
        _drive(side, app, first, loop)
        kinds = _kinds(side, saver, channel)
        assert kinds.count(DELTA_TYPE) > len(kinds) // 2  # stored as deltas
        ref_hist, ref_values = _ref_history(schema, node, first, 30, loop)
        assert side.history(app) == ref_hist
        assert app.get_state(_cfg()).values == ref_values
        ours = _blob_bytes(side, saver)
    other = side.other("off")
    with contextlib.closing(other), other.open(append_deltas=False) as whole:
        _drive(other, _app(StateGraph, schema, node, whole, loop), first, loop, "off")
        assert DELTA_TYPE not in _kinds(other, whole, channel, "off")
        assert ours * 3 < _blob_bytes(other, whole, "off")


def test_bytes_grow_linearly(tmp_path: Any) -> None:
    """O(total) bytes: twice the turns store about twice the bytes, not four times."""
    sizes = []
    for turns in (60, 120):
        side = Side("sync", str(tmp_path / f"{turns}.sqlite"))
        with side.open() as saver:
            _run_turns(side, _app(StateGraph, Log, _turn, saver), {"log": [], "n": 0}, turns)
            sizes.append(_blob_bytes(side, saver))
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
        assert DELTA_TYPE in _kinds(side, new, "log")
        turns = [e["turn"] for e in app.get_state(_cfg()).values["log"]]
        assert turns == [0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14]


def test_reopened_saver_continues_a_thread_as_deltas(side: Side) -> None:
    """A new saver (a new process) continues a thread from what its first read gave:
    the same rows as one saver running all the turns."""
    kinds = []
    for reopen in (False, True):
        thread = f"t{reopen}"
        with side.open() as saver:
            app = _app(StateGraph, Log, _turn, saver)
            _run_turns(side, app, {"log": [], "n": 0}, 5, thread)
            with contextlib.ExitStack() as stack:
                if reopen:  # (the first saver stays open)
                    app = _app(StateGraph, Log, _turn, stack.enter_context(side.open()))
                for i in range(8):
                    side.invoke(app, {"n": 20 + i}, _cfg(thread))
                assert len(app.get_state(_cfg(thread)).values["log"]) == 14
            kinds.append(_kinds(side, saver, "log", thread))
    assert kinds[0] == kinds[1]
    assert kinds[1][6:].count(DELTA_TYPE) >= 6


def test_non_append_values_are_stored_whole(side: Side) -> None:
    with side.open() as saver:
        app = _app(StateGraph, Rewritten, _turn, saver)
        _run_turns(side, app, {"log": [], "n": 0}, 8)
        assert set(_kinds(side, saver, "log")) == {"msgpack"}
        assert len(app.get_state(_cfg()).values["log"]) == 9


def _deltas(side: Side, saver: Any) -> list[list]:
    rows = side.query(saver, "SELECT blob FROM wg_blobs WHERE type = ?", (DELTA_TYPE,))
    return [ormsgpack.unpackb(bytes(r[0])) for r in rows]


def test_chains_are_bounded(side: Side, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(appends, "MAX_DEPTH", 4)
    with side.open() as saver:
        app = _app(StateGraph, Log, _turn, saver)
        _run_turns(side, app, {"log": [], "n": 0}, 30)
        depths = [fields[4] for fields in _deltas(side, saver)]
        assert depths and max(depths) == 4
        assert _kinds(side, saver, "log").count("msgpack") >= 30 // 5
        assert len(app.get_state(_cfg()).values["log"]) == 31


def test_bytes_rule_starts_new_bases(side: Side) -> None:
    with side.open() as saver:
        _run_turns(side, _app(StateGraph, Log, _turn, saver), {"log": [], "n": 0}, 60)
        for _, _, _, _, _, chain, base, _ in _deltas(side, saver):
            assert chain <= base
        assert _kinds(side, saver, "log").count("msgpack") >= 3  # bases grow geometrically


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


# --- direct puts ------------------------------------------------------------------------


@pytest.fixture(params=["sync", "pg"])
def direct(request: Any, tmp_path: Any) -> Iterator[tuple[Side, Any]]:
    """A sync saver (SQLite or Postgres) for direct calls."""
    if request.param == "pg":
        side = Side("pg", request.getfixturevalue("pg_fresh_dsn"))
    else:
        side = Side("sync", str(tmp_path / "x.sqlite"))
    with side.open() as saver:
        yield side, saver


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


def _forget(saver: Any) -> None:
    """Drop a saver's read caches (a test changed its rows behind its back)."""
    if isinstance(saver, SqliteSaver):
        saver._core.forget()


def test_direct_puts_read_back_exactly(direct: tuple[Side, Any]) -> None:
    side, saver = direct
    configs, cps = _put_chain(saver, [10, 11, 12, 12, 14])
    assert _kinds(side, saver, "log") == ["msgpack", *[DELTA_TYPE] * 4]
    for config, cp in zip(configs, cps):
        got = saver.get_tuple(config).checkpoint
        assert got["channel_values"] == cp["channel_values"]
    listed = [t.checkpoint["channel_values"]["log"] for t in saver.list(None)]
    assert listed == [cp["channel_values"]["log"] for cp in reversed(cps)]


def test_corrupt_deltas_raise_clear_errors(direct: tuple[Side, Any]) -> None:
    side, saver = direct
    configs, _ = _put_chain(saver, [10, 11, 12])
    version = f"{3:032}.0"
    fields = _deltas(side, saver)[-1]
    fields[3] += 1  # claims one item more than it holds
    update = "UPDATE wg_blobs SET blob = ? WHERE version = ?"
    side.query(saver, update, (ormsgpack.packb(fields), version))
    _forget(saver)
    with pytest.raises(AppendDeltaError, match="version"):
        saver.get_tuple(configs[2])
    side.query(saver, update, (b"\xc1junk", version))
    _forget(saver)
    with pytest.raises(AppendDeltaError, match="not valid msgpack"):
        saver.get_tuple(configs[2])
    side.query(saver, "DELETE FROM wg_blobs WHERE version = ?", (f"{1:032}.0",))  # its base
    _forget(saver)
    with pytest.raises(AppendDeltaError, match="missing"):
        saver.get_tuple(configs[1])


def test_a_failed_put_is_no_later_delta_base(direct: tuple[Side, Any]) -> None:
    """A batch whose first put fails alone: the later put extending that put's value is
    stored whole, never as a delta naming a version that was not stored."""
    _, saver = direct
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
    assert saver.get_tuple(results[1]).checkpoint["channel_values"]["log"] == third


def test_version_stored_again_rebases_its_dependents(tmp_path: Any) -> None:
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, cps = _put_chain(saver, [10, 11, 12])
        # the second checkpoint stored again under its id, its version with other bytes
        other = _items(100, 105)
        again = _cp({"log": other}, {"log": f"{2:032}.0"}, cid=cps[1]["id"])
        saver.put(configs[0], again, {"step": 1}, {"log": f"{2:032}.0"})
        assert saver.get_tuple(configs[1]).checkpoint["channel_values"]["log"] == other
        assert saver.get_tuple(configs[2]).checkpoint["channel_values"] == cps[2]["channel_values"]


def test_a_put_prepared_before_a_failure_is_stored_whole(tmp_path: Any) -> None:
    """The group-commit writers prepare a put when it is submitted: one prepared before
    the put it extends failed (in an earlier batch) stores its values whole."""
    with SqliteSaver.from_conn_string(str(tmp_path / "x.sqlite")) as saver:
        configs, cps = _put_chain(saver, [4])
        core, conn = saver._core, saver.conn
        second = [*cps[0]["channel_values"]["log"], *_items(4, 6)]
        third = [*second, *_items(6, 8)]
        cp2 = _cp({"log": second}, {"log": f"{2:032}.0"})
        cp3 = _cp({"log": third}, {"log": f"{3:032}.0"})
        failing = PutOp(configs[0], cp2, {"step": 1}, {"log": f"{2:032}.0"}, expected_head="x")
        later = PutOp(configs[0], cp3, {"step": 2}, {"log": f"{3:032}.0"})
        with saver.lock:
            steps = [core.prepare(failing), core.prepare(later)]
            assert steps[1][5][0][2] == DELTA_TYPE  # (a delta of the failing put's value)
            assert isinstance(core.commit_steps(conn, steps[:1])[0], Exception)
            result = core.commit_steps(conn, steps[1:])[0]
        assert saver.get_tuple(result).checkpoint["channel_values"]["log"] == third
        assert _kinds(Side("sync", ""), saver, "log") == ["msgpack", "msgpack"]
