"""The native group-commit writer of `SqliteSaver` (`sqlite/_native.py`): it is used when
the interpreter's own SQLite is reachable, commits what runs submit without the GIL, and
hands anything unusual back to the saver's Python path with the same outcomes.

Stored results are compared with the Python writer's on the same operations (the Python
writer is itself checked against LangGraph in test_sqlite_writer.py)."""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from concurrent.futures import Future
from typing import Any

import pytest
from warpgraph.checkpoint._sql import CheckpointConflictError, PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import FailureSink, GroupCommitWriter
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._native import (
    NativeGroupCommitWriter,
    database_file,
    native_library,
    native_writer_for,
)

from tests._subproc import run_python

# the native writer is a fast path (off with WARPGRAPH_FAST_PATHS=0)
pytestmark = pytest.mark.fast_paths


def _cp(n: int, cid: str | None = None) -> dict:
    return {
        "v": 4,
        "id": cid or f"{n:04d}-{uuid.uuid4()}",
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"n": n, "big": "x" * 200 * n},
        "channel_versions": {"n": str(n), "big": str(n)},
        "versions_seen": {"step": {"n": str(max(n - 1, 0))}},
        "updated_channels": ["n"],
    }


def _cfg(thread: str, cid: str | None = None) -> dict:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if cid:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def _chain(thread: str, n: int) -> list[PutOp | WritesOp]:
    """Puts of a chain of checkpoints (each fenced on the previous one) with writes."""
    ops: list[PutOp | WritesOp] = []
    parent = None
    for i in range(1, n + 1):
        cp = _cp(i, f"{thread}-{i:04d}")
        ops.append(
            PutOp(_cfg(thread, parent), cp, {"step": i}, {"n": str(i), "big": str(i)}, parent)
        )
        ops.append(WritesOp(_cfg(thread, cp["id"]), [("n", i + 1), ("x", None)], f"task-{i}", "p"))
        parent = cp["id"]
    return ops


def _stored(path: str, thread: str) -> list:
    with SqliteSaver.from_conn_string(path) as reader:
        return [
            (
                t.checkpoint["id"],
                t.checkpoint["channel_values"],
                t.metadata.get("step"),
                t.pending_writes,
            )
            for t in reader.list(_cfg(thread))
        ]


@pytest.fixture
def path(tmp_path) -> str:
    return str(tmp_path / "native.db")


def test_the_interpreters_sqlite_is_found_and_proven_the_same() -> None:
    # this platform (CPython linking the system libsqlite3) must get the native writer;
    # elsewhere the saver falls back to the Python writer (tested below)
    assert native_library() is not None


def test_file_savers_get_the_native_writer_others_the_python_one(path, monkeypatch) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        assert isinstance(saver.shared_writer(), NativeGroupCommitWriter)
    with SqliteSaver.from_conn_string(":memory:") as saver:  # no file to open twice
        assert isinstance(saver.shared_writer(), GroupCommitWriter)
    monkeypatch.setenv("WARPGRAPH_SQLITE_NATIVE_WRITER", "0")
    with SqliteSaver.from_conn_string(path) as saver:
        assert isinstance(saver.shared_writer(), GroupCommitWriter)


@pytest.mark.parametrize("max_batch", [1, 512])
def test_it_stores_what_the_python_writer_stores(tmp_path, max_batch: int) -> None:
    stored = []
    for native in (True, False):
        path = str(tmp_path / f"{native}.db")
        with SqliteSaver.from_conn_string(path) as saver:
            writer = native_writer_for(saver, max_batch) if native else saver.writer()
            assert isinstance(writer, NativeGroupCommitWriter) == native
            with writer:
                sink = FailureSink()
                ops = _chain("t", 12)
                writer.submit_many(ops[:10], sink)
                writer.submit_many(ops[10:], sink)
                writer.flush()
                assert sink.error is None
                assert writer.batches >= 1
        stored.append(_stored(path, "t"))
    assert stored[0] == stored[1] and len(stored[0]) == 12


def _timed_writer(
    saver: SqliteSaver, linger: float, window: float, spin: float = 0.001
) -> NativeGroupCommitWriter:
    found = native_library()
    assert found is not None
    path = database_file(saver.conn)
    return NativeGroupCommitWriter(
        saver, found[0], path, 5000, 2, linger=linger, window=window, spin=spin
    )


def _until(cond: Any, what: str, timeout: float = 60.0) -> None:
    """Bounded polling (generous limit: the machine may be busy)."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.002)


# the thread spins while a transaction is open (spin > 0) or polls (0): the same timing
SPINS = pytest.mark.parametrize("spin", [0.0, 0.001], ids=["poll", "spin"])


@SPINS
def test_a_transaction_stays_open_while_operations_keep_coming(path, spin: float) -> None:
    """Operations that come while a transaction is open join it: with a linger time and a
    window longer than the test, only the flush commits, all of them at once."""
    with SqliteSaver.from_conn_string(path) as saver:
        with _timed_writer(saver, linger=120.0, window=240.0, spin=spin) as writer:
            sink = FailureSink()
            ops = _chain("a", 3)
            for op in ops:
                writer.submit_many([op], sink)
            assert writer.batches == 0  # (submitted: queued to the thread) none committed
            writer.flush(timeout=60)
            assert sink.error is None and writer.batches == 1
        assert len(_stored(path, "a")) == 3


@SPINS
def test_the_window_ends_a_transaction_while_operations_keep_coming(path, spin: float) -> None:
    """A transaction is never older than the window: with a linger time longer than the
    test, operations that keep coming are still committed."""
    with SqliteSaver.from_conn_string(path) as saver:
        with _timed_writer(saver, linger=120.0, window=0.05, spin=spin) as writer:
            sink = FailureSink()
            submitted = 0
            deadline = time.monotonic() + 60
            while writer.batches == 0:  # (only the window can commit)
                assert time.monotonic() < deadline, "the window never ended a transaction"
                writer.submit_many(_chain(f"w{submitted}", 1), sink)
                submitted += 1
                time.sleep(0.005)
            writer.flush(timeout=60)
            assert sink.error is None
        assert all(len(_stored(path, f"w{i}")) == 1 for i in range(submitted))


@SPINS
def test_the_linger_time_ends_a_transaction_when_operations_stop(path, spin: float) -> None:
    """Once no operation came for the linger time, the thread commits by itself (no
    flush): an operation submitted only after the previous one committed gets its own
    transaction."""
    with SqliteSaver.from_conn_string(path) as saver:
        with _timed_writer(saver, linger=0.01, window=120.0, spin=spin) as writer:
            sink = FailureSink()
            ops = _chain("l", 2)
            for i, op in enumerate(ops):
                writer.submit_many([op], sink)
                _until(lambda i=i: writer._native.committed > i, f"operation {i} to commit")
            assert sink.error is None and writer.batches == len(ops)
        assert len(_stored(path, "l")) == 2


def test_futures_get_results_and_errors(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        with native_writer_for(saver, 512) as writer:  # type: ignore[union-attr]
            first = _cp(1)
            f1 = writer.put(
                _cfg("f"), first, {"step": 1}, {"n": "1", "big": "1"}, expected_head=None
            )
            f2 = writer.put_writes(_cfg("f", first["id"]), [("n", 2)], "task")
            stale = writer.put(_cfg("f"), _cp(2), {}, {"n": "2"}, expected_head=None)
            bad = writer.put_writes(_cfg("f", first["id"]), [("n", object())], "task")
            assert f1.result(30)["configurable"]["checkpoint_id"] == first["id"]
            assert f2.result(30) is None
            with pytest.raises(CheckpointConflictError):
                stale.result(30)
            with pytest.raises(TypeError, match="Cannot serialize"):
                bad.result(0)  # failed when submitted: nothing was queued
        assert writer.closed and not writer.alive
        with pytest.raises(RuntimeError, match="closed"):
            writer.put(_cfg("f"), _cp(3), {}, {})
    assert [s[0] for s in _stored(path, "f")] == [first["id"]]


def test_a_conflict_fails_only_its_operation_and_those_encoded_against_it(path) -> None:
    """A put encoded against a queued checkpoint whose commit then fails must not be
    stored as a delta of it: the writer sends it back to the Python path, which fences
    it (a run's puts) or encodes it against what is stored."""
    with SqliteSaver.from_conn_string(path) as saver:
        saver.put(_cfg("c"), _cp(1, "00-first"), {}, {"n": "1", "big": "1"})
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # the writer waits for the lock meanwhile
        with native_writer_for(saver, 1) as writer:  # type: ignore[union-attr]
            doomed = _cp(2, "01-doomed")
            f_doomed = writer.put(_cfg("c", "00-first"), doomed, {}, {"n": "2"}, expected_head="zz")
            child = _cp(3, "02-child")
            f_child = writer.put(_cfg("c", doomed["id"]), child, {}, {"n": "3", "big": "3"})
            blocker.execute("COMMIT")
            with pytest.raises(CheckpointConflictError):
                f_doomed.result(60)
            assert f_child.result(60)["configurable"]["checkpoint_id"] == child["id"]
        blocker.close()
        rows = saver.conn.execute(
            "SELECT checkpoint_id, base_id FROM wg_checkpoints WHERE thread_id = 'c' "
            "ORDER BY checkpoint_id"
        ).fetchall()
        assert rows == [("00-first", None), ("02-child", None)]  # the child stored in full
        got = saver.get_tuple(_cfg("c", child["id"]))
        assert got.checkpoint["channel_values"] == child["channel_values"]


def test_a_checkpoint_stored_again_is_rebased_like_the_python_writer_does(tmp_path) -> None:
    stored = []
    for native in (True, False):
        path = str(tmp_path / f"{native}.db")
        with SqliteSaver.from_conn_string(path) as saver:
            writer = native_writer_for(saver, 512) if native else saver.writer()
            with writer:
                a, b = _cp(1, "00-a"), _cp(2, "01-b")
                writer.put(_cfg("r"), a, {}, {"n": "1", "big": "1"}).result(30)
                writer.put(_cfg("r", a["id"]), b, {}, {"n": "2", "big": "2"}).result(30)
                again = {**_cp(5, "00-a")}
                writer.put(_cfg("r"), again, {"step": 5}, {"n": "5", "big": "5"}).result(30)
        stored.append(_stored(path, "r"))
    assert stored[0] == stored[1]
    assert stored[0][1][1] == _cp(5)["channel_values"]  # "00-a" holds the new content


def test_an_sql_error_reaches_the_sink_and_the_writer_goes_on(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        saver.conn.execute(
            "CREATE TRIGGER no_bad BEFORE INSERT ON wg_writes WHEN NEW.thread_id = 'bad' "
            "BEGIN SELECT RAISE(ABORT, 'no writes for bad'); END"
        )
        writer = saver.shared_writer()
        assert isinstance(writer, NativeGroupCommitWriter)
        bad, good = FailureSink(), FailureSink()
        writer.submit_many(_chain("bad", 2), bad)
        writer.submit_many(_chain("good", 2), good)
        writer.flush()
        assert isinstance(bad.error, sqlite3.IntegrityError) and good.error is None
        assert len(_stored(path, "good")) == 2
        assert len(_stored(path, "bad")) == 2  # its puts committed, its writes did not
        assert all(not s[3] for s in _stored(path, "bad"))
        ok = FailureSink()
        writer.submit_many(_chain("after", 3), ok)
        writer.flush()
        assert ok.error is None and len(_stored(path, "after")) == 3


@SPINS
def test_a_flush_keeps_its_timeout_and_then_sees_the_commit(path, spin: float) -> None:
    """A waiting run spins, then sleeps: either way within its timeout, and it returns
    once the commit it waits for is made."""
    with (
        SqliteSaver.from_conn_string(path) as saver,
        _timed_writer(saver, linger=0.0002, window=0.01, spin=spin) as writer,
    ):
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # the writer waits for the lock
        sink = FailureSink()
        writer.submit_many(_chain("t", 3), sink)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="did not commit within 0.2 s"):
            writer.flush(timeout=0.2)
        assert 0.2 <= time.monotonic() - started < 5
        blocker.execute("COMMIT")
        blocker.close()
        writer.flush(timeout=60)
        assert sink.error is None and len(_stored(path, "t")) == 3


def test_a_marker_waits_for_everything_before_it(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        writer = saver.shared_writer()
        sink = FailureSink()
        writer.submit_many(_chain("m", 30), sink)
        marker = writer.marker()
        assert isinstance(marker, Future)
        marker.result(60)
        with SqliteSaver.from_conn_string(path) as reader:  # another connection sees it all
            assert len(list(reader.list(_cfg("m")))) == 30


CHILD = """
import sqlite3, sys
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._native import native_library
native_library.cache_clear()
import _sqlite3
_sqlite3.__file__ = "/nonexistent/_sqlite3.so"  # the library cannot be found
print(native_library())
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    print(type(saver.shared_writer()).__name__)
"""


def test_without_a_provable_library_the_python_writer_is_used(path) -> None:
    proc = run_python(CHILD, path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["None", "GroupCommitWriter"]


@pytest.mark.parametrize("raw", ["soon", "-1", "nan"])
def test_a_bad_timing_setting_is_a_clear_error(raw, monkeypatch) -> None:
    from warpgraph.checkpoint.sqlite import _native

    monkeypatch.setenv("WARPGRAPH_SQLITE_WRITER_LINGER", raw)
    with pytest.raises(ValueError, match="WARPGRAPH_SQLITE_WRITER_LINGER must be a number"):
        _native._seconds("WARPGRAPH_SQLITE_WRITER_LINGER", 0.1)
    monkeypatch.setenv("WARPGRAPH_SQLITE_WRITER_LINGER", "0.001")
    assert _native._seconds("WARPGRAPH_SQLITE_WRITER_LINGER", 0.1) == 0.001


def _wal_after(path: str, autocheckpoint: int, rounds: int) -> tuple[int, int]:
    """(frames the WAL file has room for, times the log was restarted) after `rounds`
    commits of the writer. A restart (the writer beginning the log again once it was copied
    into the database) bumps the checkpoint sequence number of the WAL header (bytes
    12-15, big-endian)."""
    with SqliteSaver.from_conn_string(path) as saver:
        saver.conn.execute(f"PRAGMA wal_autocheckpoint = {autocheckpoint}")
        writer = saver.shared_writer()
        sink = FailureSink()
        with open(path + "-wal", "rb") as f:
            first = int.from_bytes(f.read(32)[12:16], "big")
        for i in range(rounds):
            writer.submit_many(_chain(f"w{i}", 5), sink)
            writer.flush()
        assert sink.error is None
        frames = os.path.getsize(path + "-wal") // 4120
        with open(path + "-wal", "rb") as f:
            restarts = int.from_bytes(f.read(32)[12:16], "big") - first
    assert len(_stored(path, f"w{rounds - 1}")) == 5
    return frames, restarts


def test_the_writer_checkpoints_the_log_itself(path, tmp_path) -> None:
    """The native connection does not checkpoint the WAL inside a commit (a run would
    wait for it): once the log passed the saver's wal_autocheckpoint, the checkpointer
    thread copies it beside the writer, and the writer itself copies what is left at
    twice that, so the log is begun again from its start instead of growing without
    bound. How far the file grows before a restart depends on how the threads are
    scheduled on a loaded machine (a starved checkpointer thread holds the copy up), so
    what is checked is that restarts happen with checkpoints on and never with them off,
    in the same test."""
    rounds = 120
    unchecked, unchecked_restarts = _wal_after(str(tmp_path / "off.sqlite"), 0, rounds)
    _, restarts = _wal_after(path, 50, rounds)
    assert unchecked > 1000, unchecked  # ~11 frames a round: the log only grows
    assert unchecked_restarts == 0
    assert restarts >= 1, restarts


FORKED = """
import os, sys
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.checkpoint.sqlite import SqliteSaver
sys.path.insert(0, sys.argv[2])
from test_sqlite_native_writer import _chain
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    writer = saver.shared_writer()
    writer.submit_many(_chain("parent", 2), FailureSink())
    pid = os.fork()
    if pid == 0:
        try:
            writer.submit_many(_chain("child", 2), FailureSink())
        except RuntimeError as exc:
            print("child:", "forked" in str(exc), flush=True)
        writer.close()  # nothing to join here: must not hang
        os._exit(0)
    os.waitpid(pid, 0)
    writer.flush()
    print("parent: ok", flush=True)
"""


def test_a_forked_child_gets_a_clear_error_not_a_hang(path) -> None:
    here = os.path.dirname(__file__)
    proc = run_python(FORKED, path, here)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["child: True", "parent: ok"]
    assert len(_stored(path, "parent")) == 2 and _stored(path, "child") == []


def test_promote_moves_committed_states_to_the_cache_in_seq_order() -> None:
    """`promote`: states of committed ops join the version-state cache (oldest first, the
    cache trimmed to its size); later ones stay pending, and `_cached` sees both."""
    from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from warpgraph.checkpoint.sqlite._store import SqliteCore

    core = SqliteCore(JsonPlusSerializer(), cache_size=3)
    states = {("t", "", f"c{i}"): object() for i in range(6)}
    for seq, (key, state) in enumerate(states.items(), start=1):
        core._pending[key] = (seq, state)  # type: ignore[assignment]
    keys = list(states)

    core.promote(2)  # a prefix: one by one
    assert list(core._states) == keys[:2]
    assert list(core._pending) == keys[2:]
    assert all(core._cached(k) is states[k] for k in keys)

    core.promote(6)  # all that is left: at once, the cache trimmed to its oldest
    assert core._pending == {}
    assert list(core._states) == keys[3:]
    assert all(core._states[k] is states[k] for k in keys[3:])
    assert core._cached(keys[0]) is None

    core.promote(7)  # nothing pending: nothing changes
    assert list(core._states) == keys[3:]


def test_writer_uri_keeps_the_query_on_the_absolute_file() -> None:
    from warpgraph.checkpoint.sqlite._native import writer_uri

    assert writer_uri("file:data.db?psow=1&nolock=1#x", "/srv/a b/data.db") == (
        "file:/srv/a%20b/data.db?psow=1&nolock=1"
    )
    assert writer_uri("file:data.db", "/srv/q?#%.db") == "file:/srv/q%3F%23%25.db"


def test_a_uri_saver_gives_its_parameters_to_the_native_writer(tmp_path, monkeypatch) -> None:
    """`from_conn_string("file:...?...")`: the native writer opens the same file with the
    same URI parameters (a VFS or nolock must hold for both connections)."""
    monkeypatch.chdir(tmp_path)  # a relative URI: the writer gets the absolute file
    with SqliteSaver.from_conn_string("file:u.db?psow=1") as saver:
        writer = saver.shared_writer()
        assert isinstance(writer, NativeGroupCommitWriter)
        assert writer.path == f"file:{tmp_path / 'u.db'}?psow=1"
        thread = uuid.uuid4().hex
        ops = _chain(thread, 3)
        sink = FailureSink()
        writer.submit_many(ops, sink)
        writer.flush()
        assert sink.error is None
        assert saver.get_tuple(_cfg(thread)).checkpoint["id"] == f"{thread}-0003"
    with SqliteSaver.from_conn_string(str(tmp_path / "p.db")) as saver:
        assert saver.shared_writer().path == str(tmp_path / "p.db")  # a path stays one
