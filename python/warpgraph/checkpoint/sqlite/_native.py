"""`NativeGroupCommitWriter`: `SqliteSaver`'s shared group-commit writer, committing on a
thread that does not need the GIL (`_core.SqliteWriter`).

The Python `GroupCommitWriter` commits on a Python thread, which runs only when the
submitting thread lets go of the GIL: with a run producing checkpoints, in practice after
the run. This one serializes and encodes each operation when it is submitted
(`SqliteCore.native_items`) and hands the rows to a native thread, which inserts and
commits them on its own connection while the run goes on. It must use the interpreter's
own SQLite library (a second copy in one process breaks SQLite's POSIX locking), so it
is used only when `native_library()` proves the library it found is that one; otherwise
(and for ":memory:" databases, or with WARPGRAPH_SQLITE_NATIVE_WRITER=0) the saver keeps
the Python writer. Both have the same interface, ordering and failure semantics; batches
that are not the usual case go through the saver's Python path (`native_fallback`).
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
import weakref
from concurrent.futures import Future
from functools import cache
from typing import Any

from warpgraph import _core
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint._sql import PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import WriterApi
from warpgraph.checkpoint.sqlite._bulk import (
    _HEAD,
    _INSERT_BLOBS,
    _INSERT_CP,
    _INSERT_WRITES,
    _REPLACE_WRITES,
)

ENV_SWITCH = "WARPGRAPH_SQLITE_NATIVE_WRITER"
# a native module built before writes were fenced would store them unchecked: not used
FENCES_WRITES = getattr(_core, "SQLITE_WRITES_FENCE", False)
_forked = [False]  # set in a forked child: only then compare pids (getpid is a syscall)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _forked.__setitem__(0, True))


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:  # (also NaN)
        raise ValueError(f"{name} must be a number of seconds >= 0, not {raw!r}")
    return value


# A transaction stays open while operations keep coming: it commits once none came for
# LINGER seconds, WINDOW seconds after its first one at the latest, and at once when a
# run waits for it (its end) or the writer closes. Holding the write lock that long
# delays other writers of the file (they wait, within their busy timeout).
LINGER = _seconds("WARPGRAPH_SQLITE_WRITER_LINGER", 0.0002)
WINDOW = _seconds("WARPGRAPH_SQLITE_WRITER_WINDOW", 0.01)
# Short waits spin rather than sleep (waking a sleeping thread takes tens of microseconds
# on a small VM): a run waiting for its commit spins up to SPIN seconds before it sleeps,
# and the writer spins while a transaction is open (at most LINGER after its last
# operation) instead of polling. 0 turns both off.
SPIN = _seconds("WARPGRAPH_SQLITE_WRITER_SPIN", 0.001)


@cache
def native_library() -> tuple[str | None] | None:
    """`(library,)`: the shared object through which the native writer reaches the
    interpreter's SQLite (None: the main program), or None when it cannot be proven to
    be the same copy of the library (then the native writer is not used).

    Proof: an allocation made through the `sqlite3` module shows in the found library's
    `sqlite3_memory_used()`, and both report the same version."""
    import _sqlite3

    library = getattr(_sqlite3, "__file__", None)  # None: built into the interpreter
    try:
        version, before = _core.sqlite_library(library)
    except RuntimeError:
        return None
    if version != _version_number(sqlite3.sqlite_version_info):
        return None
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE TABLE probe (x)")
        during = _core.sqlite_library(library)[1]
    finally:
        conn.close()
    return (library,) if during > before else None


def _version_number(info: tuple[int, int, int]) -> int:
    return info[0] * 1_000_000 + info[1] * 1_000 + info[2]


def database_file(conn: sqlite3.Connection) -> str | None:
    """The file of `conn`'s main database, or None (in memory / temporary)."""
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return file or None
    return None


def writer_uri(conn_uri: str, path: str) -> str:
    """The URI for a second connection to the database a "file:" URI opened: the same
    query parameters on `path`, the absolute file `PRAGMA database_list` names (a relative
    URI would resolve against the working directory of the moment)."""
    rest = conn_uri.split("#", 1)[0].split("?", 1)
    query = rest[1] if len(rest) > 1 else ""
    return "file:" + urllib.parse.quote(path, safe="/") + ("?" + query if query else "")


def native_writer_for(saver: Any, max_batch: int) -> NativeGroupCommitWriter | None:
    """A native writer for `saver` (a `SqliteSaver`), or None when it cannot have one."""
    if not FAST_PATHS or not FENCES_WRITES or os.environ.get(ENV_SWITCH, "1") == "0":
        return None
    found = native_library()
    if found is None:
        return None
    with saver.lock:
        path = database_file(saver.conn)
        if path is None:
            return None
        busy = saver.conn.execute("PRAGMA busy_timeout").fetchone()[0]
        synchronous = saver.conn.execute("PRAGMA synchronous").fetchone()[0]
        autocheckpoint = saver.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    conn_uri = getattr(saver, "_conn_uri", None)
    try:
        return NativeGroupCommitWriter(
            saver,
            found[0],
            writer_uri(conn_uri, path) if conn_uri else path,
            busy,
            synchronous,
            max_batch,
            wal_autocheckpoint=autocheckpoint,
            uri=conn_uri is not None,
        )
    except RuntimeError:  # e.g. the file cannot be opened read-write by a new connection
        return None


class NativeGroupCommitWriter(WriterApi):
    """Same interface as `GroupCommitWriter` (see there for the semantics), for a
    `SqliteSaver` whose database is a file; its rows are committed natively."""

    def __init__(
        self,
        saver: Any,
        library: str | None,
        path: str,
        busy_timeout_ms: int,
        synchronous: int,
        max_batch: int = 512,
        *,
        linger: float = LINGER,
        window: float = WINDOW,
        spin: float = SPIN,
        wal_autocheckpoint: int = 1000,
        uri: bool = False,
    ) -> None:
        """`path`: the database file, or (`uri`) a "file:" URI naming it."""
        ref = weakref.ref(saver)

        def fallback(steps: list) -> list:  # called by the native thread, with the GIL
            s = ref()
            if s is None:
                raise RuntimeError("the saver of this writer was garbage-collected")
            return s._exec((type(s._core).native_fallback, (steps,)))  # type: ignore[no-any-return]

        self._saver = ref
        self._pid = os.getpid()  # (a forked child has the object but not the thread)
        self.max_batch = max_batch
        self.owner: Any = None  # what must stay alive while the writer runs (its saver)
        self._seq = 0  # guarded by the saver's lock (seq order is queue order)
        self.path = path
        self._native = _core.SqliteWriter(
            library,
            path,
            uri,
            int(busy_timeout_ms),
            [
                f"PRAGMA synchronous = {int(synchronous)}",
                # (0: never, like the saver's connection; else the thread checkpoints)
                f"PRAGMA wal_autocheckpoint = {int(wal_autocheckpoint)}",
            ],
            (_HEAD, _INSERT_CP, _INSERT_BLOBS, _INSERT_WRITES, _REPLACE_WRITES),
            fallback,
            max_batch,
            linger,
            window,
            int(wal_autocheckpoint),
            spin,
        )

    @property
    def closed(self) -> bool:
        return self._native.closed  # type: ignore[no-any-return]

    @property
    def alive(self) -> bool:
        """Whether the native thread still runs."""
        return self._native.alive  # type: ignore[no-any-return]

    @property
    def batches(self) -> int:
        """Transactions committed on the native connection so far."""
        return self._native.batches  # type: ignore[no-any-return]

    # --- submission -------------------------------------------------------------------
    def submit(self, op: PutOp | WritesOp) -> Future:
        if self.closed:
            raise RuntimeError("GroupCommitWriter is closed")
        fut: Future = Future()
        try:
            self._push([op], fut, True)
        except Exception as exc:  # noqa: BLE001 - reported through the future
            fut.set_exception(exc)
        return fut

    def _push(self, ops: list[PutOp | WritesOp], target: Any, want_result: bool = False) -> None:
        if _forked[0] and os.getpid() != self._pid:
            raise RuntimeError(
                f"this SQLite writer's thread runs in process {self._pid}, not in this "
                "forked one (open the saver again in the child)"
            )
        saver = self._saver()
        if saver is None:
            raise RuntimeError("the saver of this writer was garbage-collected")
        with saver.lock:
            core = saver._core
            if core.serde is not saver.serde or not saver.is_setup:
                core = saver._core_for(saver.conn)
            committed = self._native.committed
            if committed != core.promoted:
                core.promote(committed)
            items: list[tuple] = []
            try:
                core.native_items(saver.conn, ops, self._seq, target, want_result, items)
                self._native.push(items)
            except BaseException:  # nothing of `ops` is queued
                core.forget_pending([it[4][:3] for it in items if it[0] == "put"])
                raise
            self._seq += len(ops)

    # queue `ops` in order, failures reported to the sink: `_push` itself (one call less)
    submit_many = _push  # type: ignore[assignment]

    def marker(self) -> Future:
        marker: Future = Future()
        if self._push_marker(marker) is None:
            marker.set_result(None)
        return marker

    def flush(self, timeout: float | None = None) -> None:
        """Block until everything submitted so far is committed (the wait needs no
        future: the native thread does not take the GIL to end it)."""
        seq = self._push_marker(None)
        if seq is not None and not self._native.wait(seq, timeout):
            if not self.alive:
                return  # closed meanwhile: its thread committed what it held
            raise TimeoutError(f"the SQLite writer did not commit within {timeout} s")

    def _push_marker(self, future: Future | None) -> int | None:
        """Queue a marker (resolving `future`, if any); None when closed (then it waited
        for the thread to commit what it held)."""
        saver = self._saver()
        if saver is not None and not self.closed and os.getpid() == self._pid:
            with saver.lock:
                self._seq += 1
                try:
                    self._native.push([("marker", self._seq, future)])
                    return self._seq
                except RuntimeError:  # closed meanwhile
                    pass
        self.close()
        return None

    def close(self) -> None:
        """Commit what is queued, then stop the thread (from that thread: only ask)."""
        if os.getpid() == self._pid:  # (a forked child has no thread to stop)
            self._native.close()
