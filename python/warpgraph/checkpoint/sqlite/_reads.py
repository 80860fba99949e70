"""SqliteCore's reads: `get_tuple`, `list`, and building checkpoint tuples from rows (skip-
delta records, inline values, blob rows read once and cached, append deltas rebuilt, the
tails a read leaves for the next put's deltas). The statements are here with them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import ormsgpack

from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint._sql import (
    codec,
)
from warpgraph.checkpoint._sql.appends import (
    DELTA_TYPE,
)
from warpgraph.checkpoint._sql.codec import VersionsState
from warpgraph.checkpoint._sql.values import (
    PLAIN_TYPES,
    freeze_plain,
    loads_given,
    loads_many,
    msgpack_payload,
    thaw_plain,
    unpack_payload,
)
from warpgraph.checkpoint.base import (
    CheckpointTuple,
    RunnableConfig,
)
from warpgraph.checkpoint.sqlite._bulk import (
    _HEAD,
)

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
_LOAD_WRITES_IN = (  # (a few checkpoints: their ids as parameters, no JSON to build and walk)
    "SELECT checkpoint_id, task_id, channel, type, value FROM wg_writes WHERE thread_id = ? AND "
    "checkpoint_ns = ? AND checkpoint_id IN ({ids}) ORDER BY checkpoint_id, task_path, task_id, idx"
)
WRITES_IN_MAX = 64  # checkpoints whose writes `_LOAD_WRITES_IN` reads (more: `_LOAD_WRITES`)
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
# What a read of this connection can tell about changes since its previous one: other
# connections' commits (`data_version`, any process), this connection's own DDL
# (`schema_version`), two plain PRAGMA statements (cheaper than one SELECT joining the two
# pragma tables); its own row changes are `conn.total_changes`. Each is read before the
# rows it stamps, so a change committed in between only makes a later stamp differ.
_DATA_VERSION = "PRAGMA data_version"
_SCHEMA_VERSION = "PRAGMA schema_version"
TUPLE_ROWS = 64
# the keys of the checkpoints `codec.checkpoint_from_record` builds of current records
_CHECKPOINT_KEYS = frozenset(
    ("v", "ts", "id", "channel_values", "channel_versions", "versions_seen", "updated_channels")
)  # `get_tuple` row sets kept (see `ReadsMixin.get_tuple`)
BLOB_CACHE = 1024  # blob rows (or their absence) kept per saver, each at most BLOB_CACHE_MAX
BLOB_CACHE_MAX = 16 * 1024
PLAN_MAX = 16 * 1024  # a read plan keeps its inline values' msgpack array up to this size
LIST_CHUNK = 32  # `list` builds tuples (and fetches their blobs) this many rows at a time


_NOT_YET = object()  # (a `_tuple_rows` entry not frozen yet)
_LISTED = object()  # (first in the `_tuple_rows` key of a tuple `list` built: see `build_many`)


def _freeze_tuple(tup: CheckpointTuple) -> tuple | None:
    """(checkpoint, metadata, pending writes) of `tup` (made from a recipe, not handed
    out yet) as `_from_frozen` copies them, or None unless all three hold only immutable
    values in plain containers (`values.freeze_plain`)."""
    checkpoint = freeze_plain(tup.checkpoint)
    metadata = None if checkpoint is None else freeze_plain(tup.metadata)
    if metadata is None:
        return None
    writes = tup.pending_writes
    leaves = PLAIN_TYPES
    for w in writes:
        if type(w) is not tuple or not all(type(x) in leaves for x in w):
            return None
    return checkpoint, metadata, tuple(writes)


def _from_frozen(frozen: tuple, recipe: tuple, config: RunnableConfig | None) -> CheckpointTuple:
    """`ReadsMixin._from_recipe` without decoding: fresh containers of the frozen parts."""
    checkpoint, metadata, writes = frozen
    thread, ns, cid, parent_id = recipe[3:]
    return CheckpointTuple(
        config=config or codec.config_of(thread, ns, cid),
        checkpoint=thaw_plain(checkpoint),  # type: ignore[arg-type]
        metadata=thaw_plain(metadata),  # type: ignore[arg-type]
        parent_config=codec.config_of(thread, ns, parent_id) if parent_id else None,
        pending_writes=list(writes),
    )


def _listed_tuple(held: tuple) -> CheckpointTuple:
    """A fresh copy of a tuple `list` kept decoded (`ReadsMixin._keep_listed`)."""
    (checkpoint, metadata, writes), parent_id, thread, ns, cid = held[2:]
    return CheckpointTuple(
        config=codec.config_of(thread, ns, cid),
        checkpoint=thaw_plain(checkpoint),  # type: ignore[arg-type]
        metadata=thaw_plain(metadata),  # type: ignore[arg-type]
        parent_config=codec.config_of(thread, ns, parent_id) if parent_id else None,
        pending_writes=list(writes),
    )


_WRITES_IN: dict[int, str] = {}


def _writes_in(n: int) -> str:
    """`_LOAD_WRITES_IN` for `n` checkpoint ids."""
    query = _WRITES_IN.get(n)
    if query is None:
        query = _WRITES_IN[n] = _LOAD_WRITES_IN.format(ids=", ".join("?" * n))
    return query


_scan_json = json.JSONDecoder().scan_once


def _load_metadata(text: Any) -> Any:
    """`codec.load_metadata(text)`: a stored JSON object (compact, as the savers write it)
    read by the decoder's scanner without `json.loads`' wrapping; anything else (leading or
    trailing whitespace, bytes, an error to raise) by `codec.load_metadata`."""
    if type(text) is str and text[:1] == "{":
        try:
            value, end = _scan_json(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return codec.load_metadata(text)


def _target(config: RunnableConfig) -> tuple[str, str, str | None]:
    conf = config.get("configurable") if isinstance(config, dict) else None
    if not conf or conf.get("thread_id") is None:
        raise ValueError('config["configurable"]["thread_id"] is required')
    return str(conf["thread_id"]), conf.get("checkpoint_ns") or "", conf.get("checkpoint_id")


class ReadsMixin:
    """The read path of `SqliteCore` (its caches and settings are the core's)."""

    # --- reads ------------------------------------------------------------------------
    def get_tuple(self, conn: sqlite3.Connection, config: RunnableConfig) -> CheckpointTuple | None:
        """The selected checkpoint's rows are kept with the database's stamp taken before
        they were read (`_stamp`); while the stamp is the same, nothing has changed the
        database since and those rows are read again without a query (the tuple is built
        from them as from a query's rows: fresh objects, tails kept). Read a second time,
        a tuple whose parts are all msgpack (`_recipe`) is kept as one msgpack array and
        later reads decode that (fresh objects, in one call)."""
        thread, ns, cid = _target(config)
        stamp = self._stamp(conn) if FAST_PATHS else None
        key = (thread, ns, cid)
        held = self._tuple_rows.get(key) if stamp is not None else None
        again = held is not None and held[0] is conn and held[1] == stamp
        if again:
            rows, recipe = held[2], held[3]  # type: ignore[index]
            if recipe:
                frozen = held[4]  # type: ignore[index]
                if frozen is not None and frozen is not _NOT_YET:
                    return _from_frozen(frozen, recipe, config if cid else None)
                tup = self._from_recipe(recipe, config if cid else None)
                if frozen is _NOT_YET:  # (read a third time: kept decoded if it can be)
                    self._tuple_rows[key] = (*held[:4], _freeze_tuple(tup))  # type: ignore[misc]
                return tup
        else:
            if cid:
                rows = conn.execute(_TUPLE_BY_ID, (thread, ns, cid)).fetchall()
            else:
                rows = conn.execute(_TUPLE_HEAD, (thread, ns)).fetchall()
            if stamp is not None:
                if len(self._tuple_rows) >= TUPLE_ROWS:
                    self._tuple_rows.clear()
                self._tuple_rows[key] = (conn, stamp, rows, None, _NOT_YET)
        if not rows or rows[0][0] != 0:
            return None
        row = rows[0][1:]
        found = row[2]
        writes = {(row[0], row[1]): [(found, w[4], w[5], w[7], w[8]) for w in rows[1:]]}
        tup = self.build_many(conn, [row], config if cid else None, writes, True)[0]
        if again and recipe is None:
            recipe = self._recipe(row, rows[1:], tup)
            self._tuple_rows[key] = (conn, stamp, rows, recipe, _NOT_YET)
        return tup

    def _recipe(self, row: Sequence[Any], writes: Sequence[Any], tup: CheckpointTuple) -> Any:
        """How to make `tup` (just built from `row` and its `writes` rows, not handed out
        yet) again with one decoder call: (the msgpack array of [the checkpoint without
        its values, the metadata, the values, the writes' values], the channels, the
        writes' (task, channel), thread, ns, id, parent id); False when a part is not
        plain msgpack: values read from blob rows (their tails are kept on every read),
        a checkpoint with keys of an older layout, a metadata value msgpack cannot hold,
        a write of another type."""
        thread, ns, cid, parent_id = row[0], row[1], row[2], row[3]
        plan = self._plans.get((thread, ns, cid))
        checkpoint = tup.checkpoint
        if (
            plan is None
            or plan[4] is None
            or not _CHECKPOINT_KEYS.issuperset(checkpoint)
            # (a blob key known as no row or an "empty" one: `build_many` took every value
            # from the record, in one decoder call, as `_from_recipe` does)
            or any(self._blobs.get(k, False) is not None for k in plan[1])
        ):
            return False
        inlined = plan[3]
        shell = {k: None if k == "channel_values" else v for k, v in checkpoint.items()}
        try:
            head = [("msgpack", ormsgpack.packb(shell)), ("msgpack", ormsgpack.packb(tup.metadata))]
        except (TypeError, ValueError, OverflowError):
            return False
        state = plan[0]
        typed = [*head, *(state.inline[ch] for ch in inlined), *((w[7], w[8]) for w in writes)]
        payload = msgpack_payload(self.serde, typed, PLAN_MAX)
        if payload is None:
            return False
        return (payload, inlined, tuple((w[4], w[5]) for w in writes), thread, ns, cid, parent_id)

    def _from_recipe(self, recipe: tuple, config: RunnableConfig | None) -> CheckpointTuple:
        payload, inlined, writes, thread, ns, cid, parent_id = recipe
        out = unpack_payload(self.serde, payload)
        checkpoint = out[0]
        n = len(inlined) + 2
        checkpoint["channel_values"] = dict(zip(inlined, out[2:n]))
        return CheckpointTuple(
            config=config or codec.config_of(thread, ns, cid),
            checkpoint=checkpoint,
            metadata=out[1],
            parent_config=codec.config_of(thread, ns, parent_id) if parent_id else None,
            pending_writes=[(t, c, v) for (t, c), v in zip(writes, out[n:])],
        )

    def _stamp(self, conn: sqlite3.Connection) -> tuple | None:
        """(data_version, schema_version, total_changes) of `conn`: unchanged only while
        no connection committed a change, this one changed no row and ran no DDL. None
        (keep nothing) inside a transaction (what it reads may be rolled back) and for a
        database without a file (in-memory ones: shared-cache connections)."""
        if conn.in_transaction:
            return None
        held = self._stampable
        if held is None or held[0] is not conn:
            files = {r[1]: r[2] for r in conn.execute("PRAGMA database_list")}
            held = self._stampable = (conn, bool(files.get("main")))
        if not held[1]:
            return None
        return (
            conn.execute(_DATA_VERSION).fetchone()[0],
            conn.execute(_SCHEMA_VERSION).fetchone()[0],
            conn.total_changes,
        )

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
        """`list`'s first page: no tuples yet, then the job building the first chunk (with
        the database's stamp taken before the rows were read: `build_many`)."""
        stamp = self._stamp(conn) if FAST_PATHS else None
        rows = self.list_rows(conn, config, filter=filter, before=before, limit=limit)
        return (), (ReadsMixin.list_chunk, (rows, 0, stamp)) if rows else None

    def list_chunk(
        self, conn: sqlite3.Connection, rows: Sequence[Any], start: int, stamp: Any = None
    ) -> tuple[list[CheckpointTuple], tuple | None]:
        """The tuples of rows[start:start + LIST_CHUNK] and the job of the next chunk.
        `stamp`: the one the rows were read under; the tuples may come from (and are kept
        for) the earlier lists of the same rows while the database's stamp is still that."""
        end = start + LIST_CHUNK
        more = (ReadsMixin.list_chunk, (rows, end, stamp)) if end < len(rows) else None
        if stamp is not None and self._stamp(conn) != stamp:
            stamp = None  # (changed since the rows were read: nothing kept applies)
        return self.build_many(conn, rows[start:end], stamp=stamp), more

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
        stamp: Any = None,
    ) -> list[CheckpointTuple]:
        """Tuples for checkpoint rows: one query for all their blobs (each distinct
        (channel, version) fetched once; none if all are cached) and, unless `fetched`
        holds their writes ({(thread, ns): [(checkpoint_id, task_id, channel, type, value)]}
        in order), one per (thread, ns). Append deltas are rebuilt into full values;
        `remember`: the list values read become tails (`get_tuple`: a run continues
        from them). `stamp` (`list`: the database's stamp, unchanged since the rows were
        read): each tuple is kept under it in `_tuple_rows`; built again under the same
        stamp, kept decoded if it can be (`_freeze_tuple`), and then copied from that."""
        loads = self.serde.loads_typed
        decoded: list[Any] = []
        cache = self._blobs
        blobs: dict[tuple, tuple[str, bytes]] = {}  # the values read from blob rows
        wanted: dict[tuple[str, str, str, str], None] = {}
        plans = self._plans
        listed = self._tuple_rows if stamp is not None and config is None else None
        for thread, ns, cid, parent_id, base_id, depth, typ, blob, metadata in rows:
            if listed is not None:
                held = listed.get((_LISTED, thread, ns, cid))
                if (
                    held is not None
                    and held[0] is conn
                    and held[1] == stamp
                    and held[3] == parent_id
                    and held[2] is not None
                    and held[2] is not _NOT_YET
                ):
                    decoded.append(held)  # (a kept tuple: copied below)
                    continue
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
                if len(d) != 7:  # (not a kept tuple)
                    groups.setdefault((d[0], d[1]), []).append(d[2])
            for (thread, ns), ids in groups.items():
                if len(ids) == 1:
                    query, params = _LOAD_WRITES_ONE, (thread, ns, ids[0])
                elif len(ids) <= WRITES_IN_MAX:
                    query = _writes_in(len(ids))
                    params = (thread, ns, *ids)
                else:
                    query, params = _LOAD_WRITES, (thread, ns, json.dumps(ids))
                fetched[(thread, ns)] = conn.execute(query, params).fetchall()
        for (thread, ns), got in fetched.items():
            values = loads_many(self.serde, [(r[3], r[4]) for r in got])
            for (cid, task_id, channel, _, _), value in zip(got, values):
                writes.setdefault((thread, ns, cid), []).append((task_id, channel, value))
        out = []
        for d in decoded:
            if len(d) == 7:  # (kept by an earlier list under the same stamp)
                out.append(_listed_tuple(d))
                continue
            thread, ns, cid, parent_id, record, state, metadata, plan = d
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
            tup = CheckpointTuple(
                config=config or codec.config_of(thread, ns, cid),
                checkpoint=codec.checkpoint_from_record(record, state, values),
                metadata=_load_metadata(metadata),
                parent_config=codec.config_of(thread, ns, parent_id) if parent_id else None,
                pending_writes=writes.get((thread, ns, cid), []),
            )
            if listed is not None:
                self._keep_listed(conn, stamp, thread, ns, cid, parent_id, tup)
            out.append(tup)
        return out

    def _keep_listed(
        self,
        conn: sqlite3.Connection,
        stamp: Any,
        thread: str,
        ns: str,
        cid: str,
        parent_id: Any,
        tup: CheckpointTuple,
    ) -> None:
        """Keep a tuple `list` built (not handed out yet) under `stamp`: the first time as
        seen, the second time decoded (`_freeze_tuple`; None if it cannot be)."""
        key = (_LISTED, thread, ns, cid)
        listed = self._tuple_rows
        held = listed.get(key)
        if held is not None and held[0] is conn and held[1] == stamp and held[3] == parent_id:
            if held[2] is _NOT_YET:
                listed[key] = (conn, stamp, _freeze_tuple(tup), parent_id, thread, ns, cid)
            return
        if len(listed) >= TUPLE_ROWS:
            listed.clear()
        listed[key] = (conn, stamp, _NOT_YET, parent_id, thread, ns, cid)

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
