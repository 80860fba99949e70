"""The SQL and row logic of the SQLite savers, written once against a `sqlite3.Connection`.

`SqliteSaver` calls these methods under its lock; `AsyncSqliteSaver` calls the same methods
on its connection's worker thread. Every write runs in one `BEGIN IMMEDIATE` transaction
(the write lock is taken up front, so the busy timeout applies and a deferred transaction
never has to be upgraded, the classic source of "database is locked").
"""

from __future__ import annotations

import json
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
from warpgraph.checkpoint._sql.values import (
    loads_given,
    loads_many,
    msgpack_payload,
    unpack_payload,
)
from warpgraph.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    CheckpointTuple,
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

_REST = (
    "checkpoint_ns, checkpoint_id, parent_checkpoint_id, base_id, depth, type, checkpoint, metadata"
)
_COLS = f"thread_id, {_REST}"
_SELECT = f"SELECT {_COLS} FROM wg_checkpoints"
_LOAD_BLOBS = (
    # j.value = [thread, ns, channel, version]; CROSS JOIN fixes the loop order: one
    # primary-key lookup per wanted (thread, ns, channel, version)
    "SELECT j.key, b.type, b.blob FROM json_each(?) AS j CROSS JOIN wg_blobs AS b "
    "ON b.thread_id = json_extract(j.value, '$[0]') "
    "AND b.checkpoint_ns = json_extract(j.value, '$[1]') "
    "AND b.channel = json_extract(j.value, '$[2]') AND b.version = json_extract(j.value, '$[3]')"
)
_LOAD_WRITES = (
    "SELECT checkpoint_id, task_id, channel, type, value FROM wg_writes WHERE thread_id = ? AND "
    "checkpoint_ns = ? AND checkpoint_id IN (SELECT value FROM json_each(?)) "
    "ORDER BY checkpoint_id, task_path, task_id, idx"
)
_LOAD_WRITES_ONE = (  # (one checkpoint: no JSON list to build and walk)
    "SELECT checkpoint_id, task_id, channel, type, value FROM wg_writes WHERE thread_id = ? AND "
    "checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_path, task_id, idx"
)
_HAS_BLOB = (
    "SELECT 1 FROM wg_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
    "AND version = ?"
)
_BLOB = (
    "SELECT type, blob FROM wg_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
    "AND version = ?"
)
# `get_tuple` in one statement: the checkpoint row (k = 0) and its writes (k = 1, in
# their order: task_path, task_id, idx), `{cid}` the id parameter or the head's subquery
_ONE_TUPLE = (
    f"SELECT 0 AS k, {_COLS} FROM wg_checkpoints "
    "WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = {cid} "
    "UNION ALL SELECT 1, task_path, task_id, idx, task_id, channel, NULL, type, value, NULL "
    "FROM wg_writes WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = {cid} "
    "ORDER BY k, thread_id, checkpoint_ns, checkpoint_id"
)
_TUPLE_BY_ID = _ONE_TUPLE.format(cid="?3")
_TUPLE_HEAD = _ONE_TUPLE.format(
    cid="(SELECT max(checkpoint_id) FROM wg_checkpoints WHERE thread_id = ?1 "
    "AND checkpoint_ns = ?2)"
)
Key = tuple[str, str, str]
BLOB_CACHE = 1024  # blob rows (or their absence) kept per saver, each at most BLOB_CACHE_MAX
BLOB_CACHE_MAX = 16 * 1024
PLAN_MAX = 16 * 1024  # a read plan keeps its inline values' msgpack array up to this size
_UNKNOWN: Any = object()
LIST_CHUNK = 32  # `list` builds tuples (and fetches their blobs) this many rows at a time
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


def _target(config: RunnableConfig) -> tuple[str, str, str | None]:
    conf = config.get("configurable") if isinstance(config, dict) else None
    if not conf or conf.get("thread_id") is None:
        raise ValueError('config["configurable"]["thread_id"] is required')
    return str(conf["thread_id"]), conf.get("checkpoint_ns") or "", conf.get("checkpoint_id")


class SqliteCore(MaintenanceMixin, PendingStatesMixin):
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

    # --- reads ------------------------------------------------------------------------
    def get_tuple(self, conn: sqlite3.Connection, config: RunnableConfig) -> CheckpointTuple | None:
        thread, ns, cid = _target(config)
        if cid:
            rows = conn.execute(_TUPLE_BY_ID, (thread, ns, cid)).fetchall()
        else:
            rows = conn.execute(_TUPLE_HEAD, (thread, ns)).fetchall()
        if not rows or rows[0][0] != 0:
            return None
        row = rows[0][1:]
        found = row[2]
        writes = {(row[0], row[1]): [(found, w[4], w[5], w[7], w[8]) for w in rows[1:]]}
        return self.build_many(conn, [row], config if cid else None, writes, True)[0]

    def list_rows(
        self,
        conn: sqlite3.Connection,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> list[tuple]:
        """The checkpoint rows `list` yields, newest first (tuples built lazily)."""
        sql, params = self.list_query(config, filter=filter, before=before, limit=limit)
        return conn.execute(sql, params).fetchall()

    @staticmethod
    def list_query(
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> tuple[str, list[Any]]:
        """Parameterised SELECT for `list`; filter keys are validated and matched literally."""
        where: list[str] = []
        params: list[Any] = []
        if config is not None:
            conf = config.get("configurable", {})
            if conf.get("thread_id") is not None:
                where.append("thread_id = ?")
                params.append(str(conf["thread_id"]))
            if conf.get("checkpoint_ns") is not None:
                where.append("checkpoint_ns = ?")
                params.append(conf["checkpoint_ns"])
            if conf.get("checkpoint_id"):
                where.append("checkpoint_id = ?")
                params.append(conf["checkpoint_id"])
        for key, value in (filter or {}).items():
            path = codec.json_path(key)
            is_null, param = codec.filter_param(value)
            if is_null:
                where.append("json_extract(metadata, ?) IS NULL")
                params.append(path)
                continue
            if key == "run_id" and isinstance(value, str):
                where.append("run_id = ?")  # lets the run_id index narrow the scan
                params.append(value)
            where.append("json_extract(metadata, ?) = ?")
            params.extend((path, param))
        if before is not None:
            before_id = (before.get("configurable") or {}).get("checkpoint_id")
            if before_id:
                where.append("checkpoint_id < ?")
                params.append(before_id)
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY checkpoint_id DESC"
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool):
                raise TypeError(f"limit must be an int or None, not {type(limit).__name__}")
            sql += " LIMIT ?"
            params.append(limit)
        return sql, params

    def list_start(
        self, conn: sqlite3.Connection, config: Any, filter: Any, before: Any, limit: Any
    ) -> tuple[tuple, tuple | None]:
        """`list`'s first page: no tuples yet, then the job building the first chunk."""
        rows = self.list_rows(conn, config, filter=filter, before=before, limit=limit)
        return (), (SqliteCore.list_chunk, (rows, 0)) if rows else None

    def list_chunk(
        self, conn: sqlite3.Connection, rows: Sequence[Any], start: int
    ) -> tuple[list[CheckpointTuple], tuple | None]:
        """The tuples of rows[start:start + LIST_CHUNK] and the job of the next chunk."""
        end = start + LIST_CHUNK
        more = (SqliteCore.list_chunk, (rows, end)) if end < len(rows) else None
        return self.build_many(conn, rows[start:end]), more

    def _plan(self, thread: str, ns: str, cid: str, state: VersionsState) -> tuple:
        """How a checkpoint's values are read, kept per checkpoint while its cached state is
        that very object: (state, its blob keys, [(channel, blob key or None if inline)],
        the inline channels, their msgpack array or None)."""
        inline = state.inline
        keys = [
            (ch, None if ch in inline else (thread, ns, ch, codec.version_key(v)))
            for ch, v in state.channel_versions.items()
        ]
        inlined = tuple(ch for ch, key in keys if key is None)
        payload = msgpack_payload(self.serde, [inline[ch] for ch in inlined], PLAN_MAX)
        plan = (state, [key for _, key in keys if key is not None], keys, inlined, payload)
        if len(self._plans) >= self.cache_size:
            self._plans.clear()
        self._plans[(thread, ns, cid)] = plan
        return plan

    def build_tuple(
        self, conn: sqlite3.Connection, row: Sequence[Any], config: RunnableConfig | None = None
    ) -> CheckpointTuple:
        return self.build_many(conn, [row], config)[0]

    def build_many(
        self,
        conn: sqlite3.Connection,
        rows: Sequence[Sequence[Any]],
        config: RunnableConfig | None = None,
        fetched: dict[tuple[str, str], list] | None = None,
        remember: bool = False,
    ) -> list[CheckpointTuple]:
        """Tuples for checkpoint rows: one query for all their blobs (each distinct
        (channel, version) fetched once; none if all are cached) and, unless `fetched`
        holds their writes ({(thread, ns): [(checkpoint_id, task_id, channel, type, value)]}
        in order), one per (thread, ns). Append deltas are rebuilt into full values;
        `remember`: the list values read become tails (`get_tuple`: a run continues
        from them)."""
        loads = self.serde.loads_typed
        decoded = []
        cache = self._blobs
        blobs: dict[tuple, tuple[str, bytes]] = {}  # the values read from blob rows
        wanted: dict[tuple[str, str, str, str], None] = {}
        plans = self._plans
        for thread, ns, cid, parent_id, base_id, depth, typ, blob, metadata in rows:
            record = loads((typ, blob))
            state = self._state_for(conn, thread, ns, cid, depth, base_id, record)
            plan = plans.get((thread, ns, cid))
            if plan is None or plan[0] is not state:
                plan = self._plan(thread, ns, cid, state)
            for key in plan[1]:
                if key in cache:
                    if (hit := cache[key]) is not None:
                        blobs[key] = hit
                else:
                    wanted[key] = None
            decoded.append((thread, ns, cid, parent_id, record, state, metadata, plan))
        if wanted:
            keys_list = list(wanted)
            found = {}
            for idx, t, b in conn.execute(_LOAD_BLOBS, (json.dumps(keys_list),)):
                found[keys_list[idx]] = None if t == "empty" else (t, b)
            if len(cache) + len(keys_list) > BLOB_CACHE:
                cache.clear()
            for key in keys_list:
                hit = found.get(key)
                if hit is None:
                    cache[key] = None
                    continue
                blobs[key] = hit
                if hit[1] is None or len(hit[1]) <= BLOB_CACHE_MAX:
                    cache[key] = hit  # (a larger one is read again next time)
        stored_as: dict[tuple, tuple[str, bytes]] = {}  # the deltas among them
        fresh: dict[tuple, Any] = {}  # their decoded values (for one tuple each)
        for key, hit in blobs.items():
            if hit[0] == DELTA_TYPE:
                stored_as[key] = hit
        for key, hit in stored_as.items():
            blobs[key], fresh[key] = self._rebuild(conn, key, hit)
        writes: dict[tuple[str, str, str], list] = {}
        if fetched is None:
            fetched = {}
            groups: dict[tuple[str, str], list[str]] = {}
            for d in decoded:
                groups.setdefault((d[0], d[1]), []).append(d[2])
            for (thread, ns), ids in groups.items():
                if len(ids) == 1:
                    query, params = _LOAD_WRITES_ONE, (thread, ns, ids[0])
                else:
                    query, params = _LOAD_WRITES, (thread, ns, json.dumps(ids))
                fetched[(thread, ns)] = conn.execute(query, params).fetchall()
        for (thread, ns), got in fetched.items():
            values = loads_many(self.serde, [(r[3], r[4]) for r in got])
            for (cid, task_id, channel, _, _), value in zip(got, values):
                writes.setdefault((thread, ns, cid), []).append((task_id, channel, value))
        out = []
        for thread, ns, cid, parent_id, record, state, metadata, plan in decoded:
            _, blob_keys, keys, inlined, payload = plan
            values = None
            if payload is not None and not any(k in blobs for k in blob_keys):
                try:  # (every value inline: one decoder call, fresh objects)
                    values = dict(zip(inlined, unpack_payload(self.serde, payload)))
                except (ValueError, TypeError, RecursionError):
                    pass  # each value again below: the failing one raises its own error
            if values is None:
                channels, stored = [], []
                given: dict[int, Any] = {}
                for ch, key in keys:
                    if key is None:
                        channels.append(ch)
                        stored.append(state.inline[ch])
                    elif key in blobs:
                        if key in fresh:
                            given[len(stored)] = fresh.pop(key)
                        channels.append(ch)
                        stored.append(blobs[key])
                values = dict(zip(channels, loads_given(self.serde, stored, given)))
                if remember and self.tails is not None:
                    self._read_tails(thread, ns, state, values, keys, blobs, stored_as)
            out.append(
                CheckpointTuple(
                    config=config or codec.config_of(thread, ns, cid),
                    checkpoint=codec.checkpoint_from_record(record, state, values),
                    metadata=codec.load_metadata(metadata),
                    parent_config=codec.config_of(thread, ns, parent_id) if parent_id else None,
                    pending_writes=writes.get((thread, ns, cid), []),
                )
            )
        return out

    def _rebuild(
        self, conn: sqlite3.Connection, key: tuple[str, str, str, str], typed: tuple[str, bytes]
    ) -> tuple[tuple[str, bytes], Any]:
        """The full (typed, decoded) value of the append delta `typed` stored at `key`."""
        thread, ns, channel, vkey = key
        cache = self._blobs
        version_key = codec.version_key

        def at(v: Any) -> tuple:
            return (thread, ns, channel, version_key(v))

        def fetch(v: Any) -> tuple[str, bytes] | None:
            k = at(v)
            hit = cache.get(k)
            if hit is None:
                row = conn.execute(_BLOB, k).fetchone()
                hit = None if row is None or row[0] == "empty" else (row[0], row[1])
            return hit

        return self._rebuilt.rebuild(self.serde.loads_typed, fetch, at, typed, vkey, channel)

    def _read_tails(
        self,
        thread: str,
        ns: str,
        state: VersionsState,
        values: dict[str, Any],
        keys: list,
        blobs: dict[tuple, tuple[str, bytes]],
        stored_as: dict[tuple, tuple[str, bytes]],
    ) -> None:
        """Tails of the list values a `get_tuple` returns (read from blob rows)."""
        read = self.tails.read  # type: ignore[union-attr]
        versions = state.channel_versions
        for ch, key in keys:
            if key is not None and type(values.get(ch)) is list:
                typed = stored_as.get(key) or blobs[key]
                read(thread, ns, ch, typed, versions[ch], values[ch])

    def head(self, conn: sqlite3.Connection, thread: str, ns: str) -> str | None:
        return conn.execute(_HEAD, (thread, ns)).fetchone()[0]

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
