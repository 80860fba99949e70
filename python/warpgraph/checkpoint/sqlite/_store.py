"""The SQL and row logic of the SQLite savers, written once against a `sqlite3.Connection`.

`SqliteSaver` calls these methods under its lock; `AsyncSqliteSaver` calls the same methods
on its connection's worker thread. Every write runs in one `BEGIN IMMEDIATE` transaction
(the write lock is taken up front, so the busy timeout applies and a deferred transaction
never has to be upgraded, the classic source of "database is locked"). The read path is
`_reads.ReadsMixin`; pending-state and maintenance parts are mixins too.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from warpgraph import _core
from warpgraph.checkpoint._sql import (
    CONFIG_KEY_EXPECTED_HEAD,
    NO_EXPECTATION,
    CheckpointConflictError,
    PutOp,
    WritesOp,
    codec,
    expected_head_of,
)
from warpgraph.checkpoint._sql.appends import (
    DELTA_TYPE,
    AppendDeltaError,
    Rebuilt,
    Tails,
    parse_delta,
)
from warpgraph.checkpoint._sql.codec import VersionsState
from warpgraph.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    RunnableConfig,
    SerializerProtocol,
)
from warpgraph.checkpoint.sqlite._bulk import (
    _HEAD,
    _INSERT_BLOBS,
    _INSERT_CP,
    _INSERT_WRITES,
    _REPLACE_WRITES,
    blob_rows_to_store,
    checkpoint_row,
    run_bulk,
)
from warpgraph.checkpoint.sqlite._maintenance import MaintenanceMixin
from warpgraph.checkpoint.sqlite._pending import PendingStatesMixin
from warpgraph.checkpoint.sqlite._reads import _HAS_BLOB, ReadsMixin, _target

Key = tuple[str, str, str]
_UNKNOWN: Any = object()
TAILS = 4096  # (thread, ns, channel) tails kept for append deltas (`_sql/appends.py`)
REBUILT_MAX = 32 * 1024 * 1024  # bytes of rebuilt append-delta values kept
LOST_MAX = 65_536  # blob keys of failed puts kept (`SqliteCore._lost`)


def _base_key(payload: Any) -> str | None:
    """The blob key of the version an append delta's bytes extend (None: unreadable)."""
    try:
        return codec.version_key(parse_delta(bytes(payload), "")[0])
    except AppendDeltaError:
        return None


def _no_base(state: VersionsState, depth: int) -> None:
    return None


class SqliteCore(ReadsMixin, MaintenanceMixin, PendingStatesMixin):
    """Row logic + SQL shared by the sync and async SQLite savers (not thread-safe itself)."""

    def __init__(
        self, serde: SerializerProtocol, *, cache_size: int = 128, append_deltas: bool = True
    ) -> None:
        self.serde = serde
        self.cache_size = cache_size
        # append deltas (`_sql/appends.py`): the list values last stored or read per
        # (thread, ns, channel), kept when a put is prepared (puts are stored in that
        # order; a failed one drops them all: `drop_tails`). A chain's base is a blob
        # row: larger than INLINE_MAX (smaller values may live only in records).
        self.tails = Tails(TAILS, codec.INLINE_MAX) if append_deltas else None
        self._lists = None if self.tails is None else self.tails.encoder(serde.dumps_typed)
        # (thread, ns, channel, version key) -> full typed value of a delta read before
        self._rebuilt = Rebuilt(REBUILT_MAX)
        # the blob keys of puts that failed: a put prepared before that was known (the
        # group-commit writers prepare puts when they are submitted) stores whole a delta
        # naming one of them (`_unlost`)
        self._lost: set[tuple[str, str, str, str]] = set()
        self._states: OrderedDict[Key, VersionsState] = OrderedDict()
        self._txn_states: dict[Key, VersionsState] | None = None
        # checkpoints queued on the native writer, not committed yet (see `_pending.py`)
        self._pending: dict[Key, tuple[int, VersionsState]] = {}
        # the native writer's items of the usual ops in one crossing (default serializer)
        self._items = (
            _core.SqliteItems(
                (self._states, self._pending),
                (
                    serde.dumps_typed,
                    EXCLUDED_METADATA_KEYS,
                    codec.INLINE_MAX,
                    codec.CORE_KEYS,
                    codec.WRITES_IDX_MAP,
                ),
                (VersionsState, PutOp, WritesOp),
                (NO_EXPECTATION, CONFIG_KEY_EXPECTED_HEAD),
                self._lists,
            )
            if codec.native_serde(serde) and getattr(_core, "SQLITE_WRITES_FENCE", False)
            else None
        )
        self._cursor_conn: sqlite3.Connection | None = None
        self._cursor: sqlite3.Cursor | None = None
        # (thread, ns, channel, version) -> its blob row's (type, bytes), or None for no
        # row or an "empty" one: a version's blob is written once, with the first
        # checkpoint holding that version (versions are unique: random fraction), so a
        # read may keep it until the thread is deleted or copied over (`forget`)
        self._blobs: dict[tuple[str, str, str, str], tuple[str, bytes] | None] = {}
        self._plans: dict[Key, tuple] = {}  # see `_plan`
        # `get_tuple`'s rows while the database is unchanged (see `_reads.ReadsMixin`)
        self._tuple_rows: dict[tuple[str, str, str | None], tuple] = {}
        self._stampable: tuple[sqlite3.Connection, bool] | None = None

    def cursor(self, conn: sqlite3.Connection) -> sqlite3.Cursor:
        """A cursor of `conn` kept for the write path's statements, each consumed at once
        (`conn.execute` makes a new cursor per call)."""
        if conn is not self._cursor_conn:
            self._cursor, self._cursor_conn = conn.cursor(), conn
        return self._cursor  # type: ignore[return-value]

    # --- version-state cache ----------------------------------------------------------
    def _cached(self, key: Key) -> VersionsState | None:
        if self._txn_states is not None and key in self._txn_states:
            return self._txn_states[key]
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
            return state
        pending = self._pending.get(key)
        return None if pending is None else pending[1]

    def _remember(self, key: Key, state: VersionsState) -> None:
        if self._txn_states is not None:
            self._txn_states[key] = state
            return
        self._states[key] = state
        if len(self._states) > self.cache_size:
            self._states.popitem(last=False)

    def drop_tails(self) -> None:
        """Forget every tail (after a failed write: the next put of a channel must not
        extend a version that was not stored)."""
        if self.tails is not None:
            self.tails.forget()

    def forget(self) -> None:
        """Drop cached version states (after deletes / copies)."""
        self._states.clear()
        self._blobs.clear()
        self._plans.clear()
        self._tuple_rows.clear()
        self._rebuilt.clear()
        self.drop_tails()
        if self._txn_states is not None:
            self._txn_states.clear()

    def _state_for(
        self,
        conn: sqlite3.Connection,
        thread: str,
        ns: str,
        cid: str,
        depth: int,
        base_id: str | None,
        record: dict[str, Any],
    ) -> VersionsState:
        key = (thread, ns, cid)
        state = self._cached(key)
        if state is None:
            base = self.state_of(conn, thread, ns, base_id) if base_id is not None else None
            state = codec.state_from_record(record, depth, base, base_id)
            self._remember(key, state)
        return state

    def state_of(
        self, conn: sqlite3.Connection, thread: str, ns: str, cid: str
    ) -> VersionsState | None:
        """Full versions of a stored checkpoint (follows at most log2(depth)+1 base links)."""
        state = self._cached((thread, ns, cid))
        if state is not None:
            return state
        row = conn.execute(
            "SELECT depth, base_id, type, checkpoint FROM wg_checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, ns, cid),
        ).fetchone()
        if row is None:
            return None
        record = self.serde.loads_typed((row[2], row[3]))
        return self._state_for(conn, thread, ns, cid, row[0], row[1], record)

    # --- transactions -----------------------------------------------------------------
    def transaction(self, conn: sqlite3.Connection, fn: Callable[[], Any]) -> Any:
        """Run `fn` in one BEGIN IMMEDIATE ... COMMIT; states cached inside it become
        visible to the cache only once the commit succeeded."""
        if conn.in_transaction:
            conn.commit()
        cur = self.cursor(conn)
        cur.execute("BEGIN IMMEDIATE")
        self._txn_states = {}
        try:
            result = fn()
            cur.execute("COMMIT")
        except BaseException:
            self._txn_states = None
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        staged, self._txn_states = self._txn_states, None
        states = self._states
        for key, state in staged.items():
            states[key] = state
            states.move_to_end(key)
        while len(states) > self.cache_size:
            states.popitem(last=False)
        return result

    # --- writes -----------------------------------------------------------------------
    # A prepared operation (serialized outside any transaction) is a plain tuple, run by
    # `store`: a put's (thread, ns, cid, parent_id, checkpoint, blob rows, metadata JSON,
    # run_id, expected head, new versions), or a writes op's (regular rows, special rows, fence), its
    # fence None or (thread, ns, expected head).
    def prepare(self, op: PutOp | WritesOp) -> tuple:
        """Serialize an operation (outside any transaction); returns its prepared tuple."""
        if isinstance(op, PutOp):
            thread, ns, parent_id = _target(op.config)
            checkpoint = op.checkpoint
            lists = None if self._lists is None else (self._lists, thread, ns)
            blobs = codec.blob_rows(
                self.serde, checkpoint["channel_values"], op.new_versions, lists
            )
            metadata, run_id = codec.dump_metadata(op.config, op.metadata)
            expected = op.expected_head
            if expected is NO_EXPECTATION:  # maybe set through the config
                expected = expected_head_of(op.config)
            cid = checkpoint["id"]
            return (
                thread,
                ns,
                cid,
                parent_id,
                checkpoint,
                blobs,
                metadata,
                run_id,
                expected,
                op.new_versions,
            )
        if isinstance(op, WritesOp):
            thread, ns, cid = _target(op.config)
            if not cid:
                raise ValueError('put_writes needs config["configurable"]["checkpoint_id"]')
            regular, special = codec.write_rows_of(
                self.serde, thread, ns, cid, op.writes, op.task_id, op.task_path
            )
            expected = op.expected_head
            fence = None if expected is NO_EXPECTATION else (thread, ns, expected)
            return regular, special, fence
        raise TypeError(f"put_batch takes PutOp or WritesOp items, not {type(op).__name__}")

    def read_parent_states(self, conn: sqlite3.Connection, op: PutOp) -> None:
        """Read the version states a put is encoded against (its parent's and skip-delta
        base's) into the cache, from the database when neither cached nor queued."""
        thread, ns, parent_id = _target(op.config)
        self.parent_and_base(conn, thread, ns, parent_id)

    def put_rows(self, conn: sqlite3.Connection, prepared: tuple) -> tuple:
        """A prepared put encoded: `(checkpoint row, blob rows, state)` (`_core.SqliteItems`
        makes the same in one crossing)."""
        thread, ns, cid, parent_id, checkpoint, blobs, metadata, run_id, _, new = prepared
        enc, blobs = self.encode_put(conn, thread, ns, parent_id, checkpoint, blobs, new)
        row = checkpoint_row(thread, ns, cid, parent_id, enc, run_id, metadata)
        return row, blob_rows_to_store(thread, ns, blobs, enc), enc.state

    @staticmethod
    def check_fence(
        cur: sqlite3.Cursor, thread: str, ns: str, expected: Any, heads: dict | None
    ) -> None:
        """Raise CheckpointConflictError unless the head of (thread, ns) is `expected`.
        `heads`: the heads this transaction knows already (None: read it)."""
        key = (thread, ns)
        actual = heads.get(key, _UNKNOWN) if heads is not None else _UNKNOWN
        if actual is _UNKNOWN:
            # a separate SELECT: folding it into the INSERT (INSERT ... SELECT ... WHERE
            # head IS ?) reads the target table, so SQLite stages the row in a temp table
            # (measured slower)
            actual = cur.execute(_HEAD, key).fetchone()[0]
            if heads is not None:
                heads[key] = actual
        if actual != expected:
            raise CheckpointConflictError(thread, ns, expected, actual)

    def store(self, conn: sqlite3.Connection, prepared: tuple, heads: dict | None = None) -> Any:
        """Run one prepared operation in the caller's transaction: a put's config, or None.
        `heads`: (thread, ns) -> head, known in this transaction (kept current here; only
        for a transaction that is rolled back as a whole when a step fails)."""
        if len(prepared) == 3:
            regular, special, fence = prepared
            if fence is not None and (regular or special):
                self.check_fence(self.cursor(conn), *fence, heads)
            if regular:
                self.cursor(conn).executemany(_INSERT_WRITES, regular)
            if special:
                self.cursor(conn).executemany(_REPLACE_WRITES, special)
            return None
        thread, ns, cid, parent_id, checkpoint, blobs, metadata, run_id, expected, new = prepared
        cur = self.cursor(conn)
        if expected is not NO_EXPECTATION:
            self.check_fence(cur, thread, ns, expected, heads)
        if heads is not None:  # the head after this put: max(head, cid) when known
            head = heads.get((thread, ns), _UNKNOWN)
            if head is not _UNKNOWN:
                heads[(thread, ns)] = cid if head is None or cid > head else head
        enc, blobs = self.encode_put(conn, thread, ns, parent_id, checkpoint, blobs, new)
        row = checkpoint_row(thread, ns, cid, parent_id, enc, run_id, metadata)
        if cur.execute(_INSERT_CP, row).rowcount == 0:
            # the same id stored again: re-base its dependents, store it in full
            enc = self._replace_checkpoint(conn, thread, ns, cid, parent_id, checkpoint, blobs)
            self.rebase_dependents(conn, thread, ns, blobs)
            conn.execute(
                "UPDATE wg_checkpoints SET parent_checkpoint_id = ?, base_id = NULL, "
                "depth = ?, run_id = ?, type = ?, checkpoint = ?, metadata = ? "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                (parent_id, enc.depth, run_id, *enc.record, metadata, thread, ns, cid),
            )
        if blobs:
            rows = blob_rows_to_store(thread, ns, blobs, enc)
            if rows:
                cur.executemany(_INSERT_BLOBS, rows)
        self._remember((thread, ns, cid), enc.state)
        return codec.config_of(thread, ns, cid)

    def encode_put(
        self,
        conn: sqlite3.Connection,
        thread: str,
        ns: str,
        parent_id: str | None,
        checkpoint: Any,
        blobs: list,
        new_versions: Any = None,
    ) -> tuple[codec.EncodedCheckpoint, list]:
        """Encode a checkpoint against its parent's (cached or stored) versions: the
        encoding and the put's blob rows.

        A version that is neither the parent's nor one of `new_versions` (a copy of another
        checkpoint, a fork saved under another parent) had its value stored by an earlier
        put: in a blob row, which reads find, or only inline in the records of the
        checkpoints naming it. Then that inline copy is found (`find_inline`) and carried
        by this put like a new value (in its record, or a blob row when too large)."""
        parent, base = self.parent_and_base(conn, thread, ns, parent_id)
        enc = codec.encode_against(self.serde, checkpoint, parent, base, blobs, new_versions)
        if enc.unsourced:  # (never for the loop's checkpoints)
            cv, values = checkpoint["channel_versions"], checkpoint["channel_values"]
            # (a channel without a value in the checkpoint had none at that version)
            wanted = {ch: cv[ch] for ch in enc.unsourced if ch in values}
            found = self.find_inline(conn, thread, ns, wanted) if wanted else None
            if found:
                blobs = [*blobs, *found]
                enc = codec.encode_against(self.serde, checkpoint, parent, base, blobs)
        return enc, blobs

    def find_inline(
        self, conn: sqlite3.Connection, thread: str, ns: str, wanted: dict[str, Any]
    ) -> list[tuple[str, str, str, bytes]]:
        """Blob rows `(channel, version key, type, bytes)` of the `wanted` {channel: version}
        values kept inline by a stored (or cached: committed, queued or in this transaction)
        checkpoint of (thread, ns); the versions no such checkpoint holds inline are left
        out (a blob row holds them, or they had no value). Scans the newest records first,
        after the cached states and the blob rows."""
        found: list[tuple[str, str, str, bytes]] = []
        wanted = dict(wanted)

        def take(state: VersionsState) -> None:
            for ch in [ch for ch, v in wanted.items() if ch in state.inline]:
                if state.channel_versions.get(ch) == wanted[ch]:
                    found.append((ch, codec.version_key(wanted.pop(ch)), *state.inline[ch]))

        caches = [
            self._txn_states or {},
            self._states,
            {k: s for k, (_, s) in self._pending.items()},
        ]
        for cache in caches:
            for (t, n, _), state in list(cache.items()):
                if wanted and t == thread and n == ns:
                    take(state)
        for ch, v in list(wanted.items()):  # a blob row holds it: reads find that
            if conn.execute(_HAS_BLOB, (thread, ns, ch, codec.version_key(v))).fetchone():
                del wanted[ch]
        if not wanted:
            return found
        rows = conn.execute(
            "SELECT checkpoint_id, depth, base_id, type, checkpoint FROM wg_checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC",
            (thread, ns),
        )
        loads = self.serde.loads_typed
        for cid, depth, base_id, typ, blob in rows:
            record = loads((typ, blob))
            if any(codec.names_inline(record, ch, v) for ch, v in wanted.items()):
                take(self._state_for(conn, thread, ns, cid, depth, base_id, record))
                if not wanted:
                    break
        return found

    def parent_and_base(
        self, conn: sqlite3.Connection, thread: str, ns: str, parent_id: str | None
    ) -> tuple[VersionsState | None, VersionsState | None]:
        """The versions of a put's parent, and of its skip-delta base (up the parent's
        base chain), to encode it against; None when it has no (stored) parent."""
        parent = base = self.state_of(conn, thread, ns, parent_id) if parent_id else None
        if parent is not None:
            depth = codec.skip_base_depth(parent.depth + 1)
            while base.depth > depth and base.base_id is not None:  # type: ignore[union-attr]
                base = self.state_of(conn, thread, ns, base.base_id)  # type: ignore[union-attr]
                if base is None:
                    break
        return parent, base

    def _replace_checkpoint(
        self,
        conn: sqlite3.Connection,
        thread: str,
        ns: str,
        cid: str,
        parent_id: str | None,
        checkpoint: Any,
        blobs: list,
    ) -> codec.EncodedCheckpoint:
        """A checkpoint stored again under its id: re-base its dependents, encode in full."""
        self.detach(conn, thread, ns, {cid})
        self.forget()
        parent = self.state_of(conn, thread, ns, parent_id) if parent_id else None
        # (`blobs` holds the values `encode_put` found for it already)
        return codec.encode_checkpoint(self.serde, checkpoint, parent, _no_base, blobs)

    def whole_values(self, steps: Sequence[Any]) -> list[Any]:
        """`steps` with each put's append deltas replaced by the whole values."""
        out = []
        dumps = self.serde.dumps_typed
        for step in steps:
            if (
                not isinstance(step, BaseException)
                and len(step) != 3
                and any(b[2] == DELTA_TYPE for b in step[5])
            ):
                values = step[4]["channel_values"]
                blobs = [
                    (ch, vkey, *dumps(values[ch])) if typ == DELTA_TYPE else (ch, vkey, typ, data)
                    for ch, vkey, typ, data in step[5]
                ]
                step = (*step[:5], blobs, *step[6:])
            out.append(step)
        return out

    def _lose(self, steps: Sequence[Any]) -> None:
        """The puts among `steps` were not stored: forget every tail and remember their
        blob keys (`_lost`)."""
        self.drop_tails()
        lost = self._lost
        if len(lost) > LOST_MAX:
            lost.clear()
        for step in steps:
            if not isinstance(step, BaseException) and len(step) != 3:
                lost.update((step[0], step[1], b[0], b[1]) for b in step[5])

    def _unlost(self, steps: Sequence[Any]) -> list[Any]:
        """`steps` with each put whose append delta names a lost version (`_lose`) storing
        its values whole."""
        lost, out = self._lost, []
        for step in steps:
            if (
                not isinstance(step, BaseException)
                and len(step) != 3
                and any(
                    b[2] == DELTA_TYPE and (step[0], step[1], b[0], _base_key(b[3])) in lost
                    for b in step[5]
                )
            ):
                step = self.whole_values([step])[0]
            out.append(step)
        return out

    def put(self, conn: sqlite3.Connection, op: PutOp) -> RunnableConfig:
        return self.run_batch(conn, [op])[0]

    def put_writes(self, conn: sqlite3.Connection, op: WritesOp) -> None:
        self.run_batch(conn, [op])

    def batch(self, conn: sqlite3.Connection, ops: Sequence[Any], return_exceptions: bool) -> Any:
        return self.run_batch(conn, ops, return_exceptions=return_exceptions)

    def commit_steps(self, conn: sqlite3.Connection, steps: Sequence[Any]) -> list[Any]:
        return self.run_steps(conn, steps, return_exceptions=True)

    def run_batch(
        self,
        conn: sqlite3.Connection,
        ops: Sequence[PutOp | WritesOp],
        *,
        return_exceptions: bool = False,
    ) -> list[Any]:
        """Run ops in order in one transaction (see `run_steps`)."""
        steps: list[Any] = []
        for op in ops:
            try:
                steps.append(self.prepare(op))
            except Exception as exc:
                if not return_exceptions:
                    raise
                steps.append(exc)
        return self.run_steps(conn, steps, return_exceptions=return_exceptions)

    def run_steps(
        self, conn: sqlite3.Connection, steps: Sequence[Any], *, return_exceptions: bool = False
    ) -> list[Any]:
        """Run prepared operations (`prepare`) in order in one transaction.

        return_exceptions=False: all or nothing (the first error rolls back and is raised).
        True: each step runs in a savepoint; a failing step is rolled back alone and its
        exception is returned in its slot while the others commit. Exception objects in
        `steps` (failed preparations) are passed through.
        """
        if self._lost:
            steps = self._unlost(steps)
        if not return_exceptions:
            store = self.store
            heads: dict = {}  # (all or nothing: what a failed step read is rolled back too)
            try:
                return self.transaction(conn, lambda: [store(conn, s, heads) for s in steps])
            except BaseException:
                self._lose(steps)  # (their versions were not stored)
                raise

        try:  # no savepoints while nothing fails (the usual case); rows inserted in bulk
            return self.transaction(conn, lambda: run_bulk(self, conn, steps))
        except Exception:  # noqa: BLE001, S110 - rerun with one savepoint per step
            pass
        # a step may fail alone now: no later step may read its values as a delta's base
        steps = self.whole_values(steps)
        self.drop_tails()

        def isolated() -> list[Any]:
            out: list[Any] = []
            for s in steps:
                if isinstance(s, BaseException):
                    out.append(s)
                    continue
                conn.execute("SAVEPOINT wg_op")
                staged = dict(self._txn_states or {})
                try:
                    out.append(self.store(conn, s))
                except Exception as exc:  # noqa: BLE001 - returned in its slot
                    conn.execute("ROLLBACK TO wg_op")
                    self._txn_states = staged
                    out.append(exc)
                conn.execute("RELEASE wg_op")
            return out

        try:
            results = self.transaction(conn, isolated)
        except BaseException:
            self._lose(steps)
            raise
        self._lose([s for s, r in zip(steps, results) if isinstance(r, BaseException)])
        return results  # type: ignore[no-any-return]
