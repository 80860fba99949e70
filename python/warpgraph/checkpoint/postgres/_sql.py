"""SQL and row logic of the Postgres savers (reads, deletes, copy, prune, setup; the
write side is in `_put`), shared by the sync and async classes.

Every operation is a generator ("sans-IO"): it yields `Query` objects, receives each one's
result (`None`, one row or all rows) and returns the operation's value; put and put_writes
are a `Write` (their statement and value) instead. The sync saver runs them on psycopg
cursors, the async saver on async ones; nothing else differs.
Each operation is ONE statement (data-modifying CTEs), so it is atomic on an autocommit
connection and costs one round trip; no saver-wide lock is needed.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Sequence
from typing import Any, Literal, NamedTuple

from warpgraph.checkpoint._sql import codec, config_of
from warpgraph.checkpoint._sql.appends import (
    DELTA_TYPE,
    PREV_VERSION_SQL,
    Rebuilt,
    Tails,
    text_version,
)
from warpgraph.checkpoint.base import (
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_id,
)
from warpgraph.checkpoint.postgres._schema import (
    BLOBS,
    CHECKPOINT_COLUMNS,
    CHECKPOINTS,
    CREATE_MIGRATIONS_TABLE,
    HEADS,
    MIGRATIONS_TABLE,
    SETUP_LOCK_KEY,
    WRITES,
    pending_migrations,
)

PRUNE_STRATEGIES = ("keep_latest", "delete")


class Query(NamedTuple):
    sql: str
    params: Any = None
    fetch: Literal["none", "one", "all", "pipeline"] = "none"  # pipeline: params = queries
    transaction: bool = False  # run in an explicit transaction (setup only)
    raw: bool = False  # a write: $n placeholders, a parameter list, no result (RawCursor)
    parts: Any = None  # `_put.Parts` of a write statement (lets put_batch merge statements)


Op = Generator[Query, Any, Any]


class Write(NamedTuple):
    """A write operation, encoded: its one statement (None: nothing to store) and the value
    it returns once that ran (cheaper than a generator on the hot path)."""

    query: Query | None
    value: Any = None


def start(op: Op) -> tuple[Query | None, Any]:
    """(first query, None), or (None, the op's value) when it needs no query."""
    try:
        return next(op), None
    except StopIteration as stop:
        return None, stop.value


def resume(op: Op, result: Any) -> tuple[Query | None, Any]:
    """Feed a query's result to an op: (next query, None) or (None, the op's value)."""
    try:
        return op.send(result), None
    except StopIteration as stop:
        return None, stop.value


# --- reads -------------------------------------------------------------------------------


# The checkpoints are picked (filtered, ordered, limited) first ("page"); then each
# distinct (thread, ns, channel, version) blob the page reads is looked up once (a page of
# consecutive checkpoints shares most blobs) and returned in the first row only; each row
# carries its own writes. {where} and {limit} are built from fixed fragments.
# The aggregates have no ORDER BY (a sort each on PostgreSQL 15): all arrays of one
# aggregate row come from the same input rows, hence stay aligned; writes are put in
# LangGraph's order (task_path, task_id, idx) in Python.
def _writes_of(alias: str) -> str:
    """A LATERAL join aggregating the writes of checkpoint row `alias` (columns w.*)."""
    return f"""LEFT JOIN LATERAL (
    SELECT array_agg(wr.task_id) AS tasks, array_agg(wr.task_path) AS paths,
           array_agg(wr.idx) AS idxs, array_agg(wr.channel) AS chs,
           array_agg(wr.type) AS tys, array_agg(wr.blob) AS blobs
    FROM {WRITES} wr
    WHERE wr.thread_id = {alias}.thread_id AND wr.checkpoint_ns = {alias}.checkpoint_ns
        AND wr.checkpoint_id = {alias}.checkpoint_id
) w ON true"""


_SELECT = f"""
WITH page AS (
    SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type,
           c.checkpoint, c.metadata, c.channels, c.versions, c.inlined, c.inline_type,
           c.inline,
           row_number() OVER (ORDER BY c.checkpoint_id DESC) AS rn
    FROM {CHECKPOINTS} c {{where}} ORDER BY c.checkpoint_id DESC {{limit}}
), pb AS MATERIALIZED (  -- computed once, not per page row
    SELECT array_agg(k.thread_id) AS ts, array_agg(k.checkpoint_ns) AS nss,
           array_agg(k.channel) AS chs, array_agg(k.version) AS vers,
           array_agg(x.type) AS tys, array_agg(x.blob) AS blobs
    FROM (SELECT DISTINCT p.thread_id, p.checkpoint_ns, cv.channel, cv.version
          FROM page p, unnest(p.channels, p.versions) AS cv(channel, version)
          WHERE cv.channel <> ALL (p.inlined)) k
    CROSS JOIN LATERAL (  -- LIMIT 1 keeps this a primary-key lookup per blob
        SELECT b.type, b.blob FROM {BLOBS} b
        WHERE b.thread_id = k.thread_id AND b.checkpoint_ns = k.checkpoint_ns
            AND b.channel = k.channel AND b.version = k.version LIMIT 1
    ) x
)
SELECT p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.parent_checkpoint_id, p.type,
       p.checkpoint, p.metadata, w.tasks, w.paths, w.idxs, w.chs, w.tys, w.blobs,
       p.inline_type, p.inline,
       CASE WHEN p.rn = 1 THEN pb.ts END, CASE WHEN p.rn = 1 THEN pb.nss END,
       CASE WHEN p.rn = 1 THEN pb.chs END, CASE WHEN p.rn = 1 THEN pb.vers END,
       CASE WHEN p.rn = 1 THEN pb.tys END, CASE WHEN p.rn = 1 THEN pb.blobs END
FROM page p
CROSS JOIN pb
{_writes_of("p")}
ORDER BY p.checkpoint_id DESC"""


def _live_chains(start: str) -> str:
    """A recursive CTE `live`: the blob rows `start` selects (`b`: append deltas) and every
    row their chains read, one primary-key lookup per link (the base version a delta
    names is read from its bytes in SQL: `PREV_VERSION_SQL`)."""
    return f"""live(thread_id, checkpoint_ns, channel, version, type, blob, depth) AS (
    SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob, 0 {start}
  UNION ALL
    SELECT b.thread_id, b.checkpoint_ns, b.channel, b.version, b.type, b.blob, l.depth + 1
    FROM live l JOIN {BLOBS} b ON b.thread_id = l.thread_id
        AND b.checkpoint_ns = l.checkpoint_ns AND b.channel = l.channel
        AND b.version = ({PREV_VERSION_SQL.format(b="l.blob")})
    WHERE l.type = '{DELTA_TYPE}' AND l.depth < 300
)"""


# The blob rows the append deltas among a read's blobs read (`_sql/appends.py`): from the
# deltas (unnest of their keys' columns) down each chain to its base, one primary-key
# lookup per link (the base version a delta names is read from its bytes in SQL).
_CHAIN_START = f"""FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS s(t, ns, ch, v)
    JOIN {BLOBS} b ON b.thread_id = s.t AND b.checkpoint_ns = s.ns AND b.channel = s.ch
        AND b.version = s.v"""
CHAIN_SQL = f"""
WITH RECURSIVE {_live_chains(_CHAIN_START)}
SELECT DISTINCT thread_id, checkpoint_ns, channel, version, type, blob FROM live"""


def chains_op(rows: Sequence[Any]) -> Op:
    """(rows, the blob rows of their append deltas' chains: `CHAIN_SQL`, or () when the
    rows read no delta)."""
    if not rows or not rows[0][15] or DELTA_TYPE not in rows[0][19]:
        return rows, ()
    starts = [k[:4] for k in zip(*rows[0][15:20]) if k[4] == DELTA_TYPE]
    chain = yield Query(CHAIN_SQL, [list(col) for col in zip(*starts)], "all")
    return rows, chain


def rows_to_tuples(
    serde: SerializerProtocol,
    rows: Sequence[Any],
    chains: Sequence[Any] = (),
    tails: Tails | None = None,
) -> Iterator[CheckpointTuple]:
    """Decode `_SELECT` rows (newest first) into CheckpointTuples, lazily; `chains`: the
    blob rows their append deltas read (`chains_op`); `tails`: the saver's, given the
    list values read (`get_tuple`: a run continues from them).

    Every tuple gets its own freshly decoded values (blob bytes are shared, objects not).
    """
    if not rows:
        return
    loads = serde.loads_typed
    ts, nss, chs, vers, tys, blobs = rows[0][15:21]
    index: dict[tuple[str, str, str, str], tuple[str, bytes]] = {}
    if ts:
        for key in zip(ts, nss, chs, vers, tys, blobs):
            index[key[:4]] = (key[4], key[5] if key[5] is not None else b"")
    for key in chains:
        index[key[:4]] = (key[4], key[5] if key[5] is not None else b"")
    rebuilt = None  # (made for the first delta)
    version_key = codec.version_key
    for row in rows:
        (
            thread_id,
            ns,
            cid,
            parent,
            typ,
            envelope,
            metadata,
            w_task,
            w_path,
            w_idx,
            w_ch,
            w_ty,
            w_blob,
            inline_type,
            inline,
        ) = row[:15]
        record = loads((typ, envelope))
        if "channel_versions" in record:  # the checkpoint with its inlined values
            checkpoint = record
            inlined = record["channel_values"]
            channel_versions = record["channel_versions"]
        else:  # rows written before: the shared codec's record + the inline columns
            state = codec.state_from_record(record, 0, None, None)
            inlined = loads((inline_type, inline)) if inline is not None else {}
            channel_versions = state.channel_versions
            checkpoint = codec.checkpoint_from_record(record, state, inlined)
        values = {}
        for ch, ver in channel_versions.items():
            if ch in inlined:
                values[ch] = inlined[ch]
            elif (blob := index.get((thread_id, ns, ch, version_key(ver)))) is not None:
                if blob[0] == DELTA_TYPE:
                    rebuilt = rebuilt or Rebuilt()
                    values[ch] = _rebuild(loads, rebuilt, index, (thread_id, ns, ch), blob, ver)
                else:
                    values[ch] = loads(blob)
                if tails is not None and type(values[ch]) is list and text_version(ver):
                    tails.read(thread_id, ns, ch, blob, ver, values[ch])
        checkpoint["channel_values"] = values
        writes = []
        if w_task:
            stored = sorted(zip(w_path, w_task, w_idx, w_ch, w_ty, w_blob))
            for _path, task, _idx, ch, ty, blob in stored:
                writes.append((task, ch, loads((ty, blob if blob is not None else b""))))
        yield CheckpointTuple(
            config=config_of(thread_id, ns, cid),
            checkpoint=checkpoint,
            metadata=metadata,
            parent_config=config_of(thread_id, ns, parent) if parent else None,
            pending_writes=writes,
        )


def _rebuild(
    loads: Any,
    rebuilt: Rebuilt,
    index: dict[tuple[str, str, str, str], tuple[str, bytes]],
    line: tuple[str, str, str],
    typed: tuple[str, bytes],
    version: Any,
) -> Any:
    """The value of the append delta `typed` stored at `version` of `line` (thread, ns,
    channel), its chain read from `index`."""

    def at(v: Any) -> tuple[str, str, str, str]:
        return (*line, codec.version_key(v))

    def fetch(v: Any) -> tuple[str, bytes] | None:
        return index.get(at(v))

    return rebuilt.rebuild(loads, fetch, at, typed, version, line[2])[1]


# One checkpoint (get_tuple): `_SELECT`'s columns without its page machinery (window
# function, materialized blob list, cross join): the newest matching row by the primary
# key, then its writes and blobs looked up for that row alone (a LIMIT above nested loops
# evaluates the laterals once). About half the server time of `_SELECT` with LIMIT 1.
_SELECT_ONE = f"""
SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.type,
       c.checkpoint, c.metadata, w.tasks, w.paths, w.idxs, w.chs, w.tys, w.blobs,
       c.inline_type, c.inline, b.ts, b.nss, b.chs, b.vers, b.tys, b.blobs
FROM {CHECKPOINTS} c
{_writes_of("c")}
LEFT JOIN LATERAL (
    SELECT array_agg(x.thread_id) AS ts, array_agg(x.checkpoint_ns) AS nss,
           array_agg(cv.channel) AS chs, array_agg(cv.version) AS vers,
           array_agg(x.type) AS tys, array_agg(x.blob) AS blobs
    FROM unnest(c.channels, c.versions) AS cv(channel, version)
    CROSS JOIN LATERAL (  -- (aggregating the blob row's own key columns: an aggregate
        -- of outer columns only would belong to the outer query)
        SELECT bl.thread_id, bl.checkpoint_ns, bl.type, bl.blob FROM {BLOBS} bl
        WHERE bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
            AND bl.channel = cv.channel AND bl.version = cv.version LIMIT 1
    ) x
    WHERE cv.channel <> ALL (c.inlined)
) b ON true
WHERE c.thread_id = %s AND c.checkpoint_ns = %s{{id}}
ORDER BY c.checkpoint_id DESC LIMIT 1"""
_GET_LATEST = _SELECT_ONE.format(id="")
_GET_BY_ID = _SELECT_ONE.format(id=" AND c.checkpoint_id = %s")


def get_tuple_op(config: RunnableConfig) -> Op:
    """The selected checkpoint's row (latest of the thread/ns when no id) in a list, and
    the blob rows its append deltas read (`chains_op`)."""
    conf = config["configurable"]
    params: list[Any] = [conf["thread_id"], conf.get("checkpoint_ns", "")]
    if checkpoint_id := get_checkpoint_id(config):
        params.append(checkpoint_id)
        rows = yield Query(_GET_BY_ID, params, "all")
    else:
        rows = yield Query(_GET_LATEST, params, "all")
    return (yield from chains_op(rows))


def list_op(
    config: RunnableConfig | None,
    filter: dict[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Op:
    """Rows of the matching checkpoints, newest first."""
    from psycopg.types.json import Jsonb

    where: list[str] = []
    params: list[Any] = []
    conf = (config or {}).get("configurable", {})
    if (thread_id := conf.get("thread_id")) is not None:
        where.append("c.thread_id = %s")
        params.append(thread_id)
    if (ns := conf.get("checkpoint_ns")) is not None:
        where.append("c.checkpoint_ns = %s")
        params.append(ns)
    if checkpoint_id := conf.get("checkpoint_id"):
        where.append("c.checkpoint_id = %s")
        params.append(checkpoint_id)
    if filter:
        if not isinstance(filter, dict):
            raise ValueError(f"filter must be a dict of metadata keys to values, got {filter!r}")
        for key in filter:
            codec.validate_filter_key(key)
        try:
            json.dumps(filter)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata filter values must be JSON-serializable: {exc}") from exc
        where.append("c.metadata @> %s")  # keys and values are bound data, matched literally
        params.append(Jsonb(filter))
    if before is not None and (before_id := get_checkpoint_id(before)):
        where.append("c.checkpoint_id < %s")
        params.append(before_id)
    tail = ""
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
        tail = "LIMIT %s"
        params.append(limit)
    sql = _SELECT.format(where="WHERE " + " AND ".join(where) if where else "", limit=tail)
    return (yield Query(sql, params, "all"))


def list_page_op(
    serde: SerializerProtocol,
    config: RunnableConfig | None,
    filter: dict[str, Any] | None,
    before: RunnableConfig | None,
    limit: int | None,
) -> Op:
    """`list` as one page: (the tuples, decoded lazily after the connection is released, None)."""
    rows, chains = yield from chains_op((yield from list_op(config, filter, before, limit)))
    return rows_to_tuples(serde, rows, chains), None


# --- deletion, copy, prune ---------------------------------------------------------------

DELETE_THREADS_SQL = f"""
WITH c AS (DELETE FROM {CHECKPOINTS} WHERE thread_id = ANY(%(t)s)),
     b AS (DELETE FROM {BLOBS} WHERE thread_id = ANY(%(t)s)),
     w AS (DELETE FROM {WRITES} WHERE thread_id = ANY(%(t)s))
DELETE FROM {HEADS} WHERE thread_id = ANY(%(t)s)"""


def delete_threads_op(thread_ids: Sequence[str]) -> Op:
    """Delete every row of the given threads."""
    if thread_ids:
        yield Query(DELETE_THREADS_SQL, {"t": list(thread_ids)})


# CTEs all see the snapshot from before the statement, so "still referenced" excludes the
# deleted runs' checkpoints explicitly. (The head, max(checkpoint_id), follows by itself.)
_NOT_A_RUN = "NOT coalesce(c2.run_id = ANY(%(runs)s::text[]), false)"


# (a blob row that a live chain reads is kept)
_NOT_LIVE = """NOT EXISTS (SELECT 1 FROM live l WHERE l.thread_id = b.thread_id
            AND l.checkpoint_ns = b.checkpoint_ns AND l.channel = b.channel
            AND l.version = b.version)"""
# the deltas the surviving checkpoints of the runs' namespaces name
_RUNS_LIVE = f"""FROM (
        SELECT DISTINCT thread_id, checkpoint_ns FROM {CHECKPOINTS}
        WHERE run_id = ANY(%(runs)s::text[]) AND run_id IS NOT NULL
    ) a JOIN {BLOBS} b ON b.thread_id = a.thread_id AND b.checkpoint_ns = a.checkpoint_ns
    WHERE b.type = '{DELTA_TYPE}' AND EXISTS (
        SELECT 1 FROM {CHECKPOINTS} c2, unnest(c2.channels, c2.versions) AS cv2(ch, ver)
        WHERE c2.thread_id = b.thread_id AND c2.checkpoint_ns = b.checkpoint_ns
            AND cv2.ch = b.channel AND cv2.ver = b.version AND {_NOT_A_RUN})"""
DELETE_FOR_RUNS_SQL = f"""
WITH RECURSIVE {_live_chains(_RUNS_LIVE)}, dc AS (
    DELETE FROM {CHECKPOINTS}
    WHERE run_id = ANY(%(runs)s::text[]) AND run_id IS NOT NULL  -- the index's predicate
    RETURNING thread_id, checkpoint_ns, checkpoint_id, channels, versions
), dw AS (
    DELETE FROM {WRITES} w USING dc
    WHERE w.thread_id = dc.thread_id AND w.checkpoint_ns = dc.checkpoint_ns
        AND w.checkpoint_id = dc.checkpoint_id
), db AS (
    DELETE FROM {BLOBS} b USING (
        SELECT DISTINCT dc.thread_id, dc.checkpoint_ns, cv.channel, cv.version
        FROM dc, unnest(dc.channels, dc.versions) AS cv(channel, version)
    ) x
    WHERE b.thread_id = x.thread_id AND b.checkpoint_ns = x.checkpoint_ns
        AND b.channel = x.channel AND b.version = x.version
        AND NOT EXISTS (
            SELECT 1 FROM {CHECKPOINTS} c2, unnest(c2.channels, c2.versions) AS cv2(ch, ver)
            WHERE c2.thread_id = b.thread_id AND c2.checkpoint_ns = b.checkpoint_ns
                AND cv2.ch = b.channel AND cv2.ver = b.version AND {_NOT_A_RUN})
        AND {_NOT_LIVE}
)
SELECT 1"""


def delete_for_runs_op(run_ids: Sequence[str]) -> Op:
    """Delete the checkpoints whose metadata run_id is listed, their writes and lone blobs."""
    runs = [str(r) for r in run_ids]
    if runs:
        yield Query(DELETE_FOR_RUNS_SQL, {"runs": runs})


COPY_THREAD_SQL = f"""
WITH c AS (
    INSERT INTO {CHECKPOINTS} ({CHECKPOINT_COLUMNS})
    SELECT %(dst)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           channels, versions, inlined, inline_type, inline, metadata, run_id
    FROM {CHECKPOINTS} WHERE thread_id = %(src)s
    ON CONFLICT DO NOTHING
), b AS (
    INSERT INTO {BLOBS} (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(dst)s, checkpoint_ns, channel, version, type, blob
    FROM {BLOBS} WHERE thread_id = %(src)s
    ON CONFLICT DO NOTHING
), w AS (
    INSERT INTO {WRITES} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path,
                          channel, type, blob)
    SELECT %(dst)s, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, blob
    FROM {WRITES} WHERE thread_id = %(src)s
    ON CONFLICT DO NOTHING
)
SELECT 1"""


def copy_thread_op(source_thread_id: str, target_thread_id: str) -> Op:
    """Copy every row of one thread to another (existing target rows are kept)."""
    yield Query(COPY_THREAD_SQL, {"src": source_thread_id, "dst": target_thread_id})


# Keep the latest checkpoint of each (thread, ns), its writes (e.g. a pending interrupt
# awaiting resume) and the blobs it reads; delete the rest. One statement, which first finds
# the threads that use a DeltaChannel (their checkpoints count its updates since the last
# snapshot: the latest value is rebuilt from older checkpoints, so LangGraph refuses to prune
# them): if there are any, nothing is deleted and they are returned.
# (the deltas the kept checkpoints name)
_KEPT_LIVE = f"""FROM keep k
    JOIN {CHECKPOINTS} c ON c.thread_id = k.thread_id AND c.checkpoint_ns = k.checkpoint_ns
        AND c.checkpoint_id = k.checkpoint_id
    CROSS JOIN LATERAL unnest(c.channels, c.versions) AS cv(channel, version)
    JOIN {BLOBS} b ON b.thread_id = k.thread_id AND b.checkpoint_ns = k.checkpoint_ns
        AND b.channel = cv.channel AND b.version = cv.version
    WHERE b.type = '{DELTA_TYPE}'"""
PRUNE_KEEP_LATEST_SQL = f"""
WITH RECURSIVE delta AS (
    SELECT DISTINCT thread_id FROM {CHECKPOINTS}
    WHERE thread_id = ANY(%(t)s) AND metadata ? 'counters_since_delta_snapshot'
), keep AS (
    SELECT thread_id, checkpoint_ns, max(checkpoint_id) AS checkpoint_id
    FROM {CHECKPOINTS} WHERE thread_id = ANY(%(t)s) GROUP BY thread_id, checkpoint_ns
), {_live_chains(_KEPT_LIVE)}, dc AS (
    DELETE FROM {CHECKPOINTS} c WHERE c.thread_id = ANY(%(t)s)
        AND NOT EXISTS (SELECT 1 FROM delta) AND NOT EXISTS (
        SELECT 1 FROM keep k WHERE k.thread_id = c.thread_id
            AND k.checkpoint_ns = c.checkpoint_ns AND k.checkpoint_id = c.checkpoint_id)
), dw AS (
    DELETE FROM {WRITES} w WHERE w.thread_id = ANY(%(t)s)
        AND NOT EXISTS (SELECT 1 FROM delta) AND NOT EXISTS (
        SELECT 1 FROM keep k WHERE k.thread_id = w.thread_id
            AND k.checkpoint_ns = w.checkpoint_ns AND k.checkpoint_id = w.checkpoint_id)
), db AS (
    DELETE FROM {BLOBS} b WHERE b.thread_id = ANY(%(t)s)
        AND NOT EXISTS (SELECT 1 FROM delta) AND NOT EXISTS (
        SELECT 1 FROM keep k
        JOIN {CHECKPOINTS} c ON c.thread_id = k.thread_id AND c.checkpoint_ns = k.checkpoint_ns
            AND c.checkpoint_id = k.checkpoint_id
        CROSS JOIN LATERAL unnest(c.channels, c.versions) AS cv(channel, version)
        WHERE k.thread_id = b.thread_id AND k.checkpoint_ns = b.checkpoint_ns
            AND cv.channel = b.channel AND cv.version = b.version)
        AND {_NOT_LIVE}
)
SELECT thread_id FROM delta"""


def prune_op(thread_ids: Sequence[str], strategy: str) -> Op:
    """ "keep_latest": latest checkpoint per namespace (+ its writes and blobs); "delete": all."""
    if strategy not in PRUNE_STRATEGIES:
        raise ValueError(f"Unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
    threads = list(thread_ids)
    if not threads:
        return
    if strategy == "delete":
        yield from delete_threads_op(threads)
    else:
        rows = yield Query(PRUNE_KEEP_LATEST_SQL, {"t": threads}, "all")
        if rows:  # threads using a DeltaChannel: refused, nothing was pruned
            names = ", ".join(sorted(r[0] for r in rows))
            raise NotImplementedError(
                f"keep_latest can't prune threads that use a DeltaChannel: {names}"
            )


# --- setup -------------------------------------------------------------------------------


def setup_op() -> Op:
    """Create the tables: apply the migrations not yet recorded (serialised by a lock)."""
    yield Query("SELECT pg_advisory_xact_lock(%s)", [SETUP_LOCK_KEY], "one", transaction=True)
    yield Query(CREATE_MIGRATIONS_TABLE, None, transaction=True)
    row = yield Query(f"SELECT max(v) FROM {MIGRATIONS_TABLE}", None, "one", transaction=True)
    for version, sql in pending_migrations(row[0] if row else None):
        yield Query(sql, None, transaction=True)
        yield Query(f"INSERT INTO {MIGRATIONS_TABLE} (v) VALUES (%s)", [version], transaction=True)
