"""The write side of the Postgres savers: put, put_writes and put_batch operations.

Each is ONE statement (see `_sql` for how operations run): a put writes its new blobs and
the checkpoint row (a fenced put first checks the head under a per-namespace lock);
put_writes writes all of a task's writes. The statements are built once per shape (row
count, fenced) with $n placeholders; an operation only builds its parameter list.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from warpgraph.checkpoint._sql import (
    NO_EXPECTATION,
    CheckpointConflictError,
    PutOp,
    WritesOp,
    codec,
    expected_head_of,
)
from warpgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    SerializerProtocol,
)
from warpgraph.checkpoint.postgres._schema import (
    BLOBS,
    CHECKPOINTS,
    CONFLICT_SQLSTATE,
    FENCE_HEAD,
    WRITES,
)
from warpgraph.checkpoint.postgres._sql import Op, Query, Write, config_of

# Write statements use PostgreSQL's own placeholders ($n) with positional parameters and
# run on a psycopg RawCursor (`Query.raw`): psycopg parses no query text per call (it would
# for statements over 50 parameters, e.g. a put of 10 channels). Parameters of a put:
_T, _NS = "$1", "$2"
_PUT_FIXED = 10  # t, ns, id, parent, type, checkpoint, channels, versions, meta, run
_EXPECTED = "$11::text"  # fenced puts only; blob parameters follow the fixed ones

# Blob rows: a VALUES list for a few rows (cheaper than binding arrays), unnest of arrays
# for many. The statement text depends on (row count, fenced): see `put_parts`.
_VALUES_MAX = 16


def text_array(items: Any) -> str:
    """A PostgreSQL text[] literal (bound as one text parameter: cheaper than a list)."""
    body = '","'.join(items)  # `items`: a list or a dict (its keys)
    if "\\" in body or body.count('"') != 2 * len(items) - 2:  # quotes/backslashes: escape
        body = '","'.join(x.replace("\\", "\\\\").replace('"', '\\"') for x in items)
    return '{"' + body + '"}' if items else "{}"


def _rows_source(n: int, first: int, types: tuple[str, ...], names: str) -> str:
    """`n` rows of len(types) parameters from $first on: a VALUES list, or (n > _VALUES_MAX)
    unnest of one array parameter per column."""
    width = len(types)
    if n > _VALUES_MAX:
        arrays = ", ".join(f"${first + k}::{t}[]" for k, t in enumerate(types))
        return f"unnest({arrays}) AS u({names})"
    rows = ", ".join(
        "(" + ", ".join(f"${first + i * width + k}::{t}" for k, t in enumerate(types)) + ")"
        for i in range(n)
    )
    return f"(VALUES {rows}) AS u({names})"


def _insert_blobs(n: int, first: int, guard: str) -> str:
    if not guard and n <= _VALUES_MAX:  # a plain VALUES list: the fewest plan nodes
        rows = ", ".join(
            f"($1, $2, ${first + 4 * i}, ${first + 4 * i + 1}, ${first + 4 * i + 2},"
            f" ${first + 4 * i + 3}::bytea)"
            for i in range(n)
        )
        return f"""
    INSERT INTO {BLOBS} (thread_id, checkpoint_ns, channel, version, type, blob)
    VALUES {rows}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"""
    source = _rows_source(
        n, first, ("text", "text", "text", "bytea"), "channel, version, type, blob"
    )
    return f"""
    INSERT INTO {BLOBS} (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT {_T}, {_NS}, u.channel, u.version, u.type, u.blob FROM {source}
    {guard}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"""


# The checkpoint row: `checkpoint` is the checkpoint serialized with only its inlined
# values (see `inline_values`) as channel_values; channels / versions list the (channel,
# version key) pairs read from blobs, i.e. the channels not inlined. (Rows written before
# listed every channel, the inlined ones in `inlined`, their values in inline_type / inline.)
_CHECKPOINT_INSERT = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "channels, versions, metadata, run_id"
)
_CHECKPOINT_VALUES = "$1, $2, $3, $4, $5, $6::bytea, $7::text[], $8::text[], $9::jsonb, $10"
_UPSERT_CHECKPOINT = f"""
    INSERT INTO {CHECKPOINTS} ({_CHECKPOINT_INSERT}) {{source}}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type,
        checkpoint = EXCLUDED.checkpoint, channels = EXCLUDED.channels,
        versions = EXCLUDED.versions, inlined = ARRAY[]::text[], inline_type = NULL,
        inline = NULL,
        metadata = EXCLUDED.metadata, run_id = EXCLUDED.run_id"""

# A plain put is its blobs + the checkpoint row: the head of a namespace is its latest
# checkpoint id (max), so nothing else is maintained. A fenced put first calls FENCE_HEAD
# (see `_schema`: it takes the namespace's advisory lock, then checks the head with a fresh
# snapshot and raises CONFLICT_SQLSTATE, with the head that won, unless it is the expected
# one); the inserts read its one row, so they run only after the check passed, and a
# conflict rolls back the whole statement (or pipelined batch).
_FENCE = f"SELECT {FENCE_HEAD}($1, $2, {_EXPECTED}) AS ok"
_AFTER_FENCE = "CROSS JOIN fence"


class Parts(NamedTuple):
    """A statement as CTEs + a final part, so several can be merged into one statement."""

    ctes: tuple[tuple[str, str], ...]  # (name, data-modifying statement)
    final: str  # a data-modifying statement, or a SELECT expression if `check`
    check: bool = False


# CTE names used in Parts (renamed per operation when statements are merged)
_CTE_NAME = re.compile(r"\b(blobs|fence)\b")
_PARAM = re.compile(r"\$(\d+)")


def render(parts: Parts) -> str:
    """The SQL of one statement."""
    head = ""
    if parts.ctes:
        head = "WITH " + ", ".join(f"{n} AS ({body}\n)" for n, body in parts.ctes) + "\n"
    return head + (f"SELECT {parts.final}" if parts.check else parts.final)


@functools.lru_cache(maxsize=128)
def put_parts(n_blobs: int, fenced: bool) -> Parts:
    """The put statement for `n_blobs` blob rows (texts above n=_VALUES_MAX coincide)."""
    n = min(n_blobs, _VALUES_MAX + 1)
    first = _PUT_FIXED + 1 + fenced
    ctes: tuple[tuple[str, str], ...] = (("fence", _FENCE),) if fenced else ()
    if n:
        ctes += (("blobs", _insert_blobs(n, first, _AFTER_FENCE if fenced else "")),)
    if fenced:
        source = f"SELECT {_CHECKPOINT_VALUES} FROM fence"
    else:
        source = f"VALUES ({_CHECKPOINT_VALUES})"
    return Parts(ctes, _UPSERT_CHECKPOINT.format(source=source))


@functools.lru_cache(maxsize=128)
def put_sql(n_blobs: int, fenced: bool) -> str:
    """The put statement's SQL (see `put_parts`)."""
    return render(put_parts(n_blobs, fenced))


_SHAPES: dict[tuple[int, bool], tuple[str, Parts]] = {}


def _put_shape(n_blobs: int, fenced: bool) -> tuple[str, Parts]:
    """(SQL, Parts) of the put statement for `n_blobs` blob rows (a plain dict lookup)."""
    key = (min(n_blobs, _VALUES_MAX + 1), fenced)
    shape = _SHAPES.get(key)
    if shape is None:
        shape = _SHAPES[key] = (put_sql(*key), put_parts(*key))
    return shape


def merge(queries: Sequence[Query]) -> tuple[str, list[Any]]:
    """One statement doing all `queries` (each built from Parts): CTEs are renamed per query
    (prefix o<i>_), placeholders renumbered after the previous queries' parameters, and
    each final statement becomes a CTE too. The caller makes sure no two queries write the
    same row (see `mergeable`)."""
    params: list[Any] = []
    offsets = []
    for query in queries:
        offsets.append(len(params))
        params.extend(query.params)
    return _merged_sql(tuple(q.parts for q in queries), tuple(offsets)), params


@functools.lru_cache(maxsize=128)
def _merged_sql(all_parts: tuple[Parts, ...], offsets: tuple[int, ...]) -> str:
    ctes: list[tuple[str, str]] = []
    checks: list[str] = []
    for i, (parts, offset) in enumerate(zip(all_parts, offsets)):
        prefix = f"o{i}_"

        def rename(text: str, prefix: str = prefix, offset: int = offset) -> str:
            text = _PARAM.sub(lambda m: f"${int(m.group(1)) + offset}", text)
            return _CTE_NAME.sub(lambda m: prefix + m.group(1), text)

        ctes.extend((prefix + name, rename(body)) for name, body in parts.ctes)
        if parts.check:
            checks.append(rename(parts.final))
        else:
            ctes.append((prefix + "final", rename(parts.final)))
    return render(Parts(tuple(ctes), ", ".join(checks) or "1", check=True))


def merged_query(ops: Sequence[PutOp | WritesOp], writes: Sequence[Write]) -> Query | None:
    """One Query doing all the batch's statements, or None if they cannot be merged."""
    queries = [w.query for w in writes if w.query is not None]
    if not queries or any(q.parts is None for q in queries) or not mergeable(ops):
        return None
    sql, params = merge(queries)
    return Query(sql, params, raw=True)


def mergeable(ops: Sequence[PutOp | WritesOp]) -> bool:
    """Whether one statement may run `ops`: a row may be written only once per statement,
    so at most one put per (thread, ns) and no repeated (thread, ns, checkpoint, task)."""
    seen: set[tuple] = set()
    for op in ops:
        conf = op.config["configurable"]
        key: tuple = (conf["thread_id"], conf.get("checkpoint_ns", ""))
        if isinstance(op, WritesOp):
            key += (conf.get("checkpoint_id"), op.task_id)
        if key in seen:
            return False
        seen.add(key)
    return True


def conflict_from(exc: BaseException) -> CheckpointConflictError | None:
    """The CheckpointConflictError a fenced put's database error stands for, if it does."""
    if getattr(exc, "sqlstate", None) != CONFLICT_SQLSTATE:
        return None
    detail = json.loads(getattr(getattr(exc, "diag", None), "message_detail", None) or "{}")
    return CheckpointConflictError(
        detail.get("thread_id"),
        detail.get("checkpoint_ns"),
        detail.get("expected"),
        detail.get("actual"),
    )


_INLINE_MAX_STR = 64
_INLINE_MAX_TOTAL = 512


def inline_values(checkpoint: Checkpoint) -> tuple[dict[str, Any], list[str]]:
    """(inlined, spilled). Inlined: the small scalar values (None, bool, int64, float, str
    <= 64 chars) of the versioned channels, up to ~512 characters in all, stored in the
    checkpoint row only (no blob). Spilled: the small scalar channels beyond that budget.

    Whether a value is inlined depends on the other channels (the budget), so a value
    inlined by one checkpoint may be spilled by a later one that shares its version: a put
    writes the blobs of its spilled channels too, new version or not (an existing blob is
    left as is), so every checkpoint finds each value inline or in a blob."""
    values = checkpoint["channel_values"]
    out: dict[str, Any] = {}
    spilled: list[str] = []
    budget = _INLINE_MAX_TOTAL
    for ch in checkpoint["channel_versions"]:
        if ch not in values:
            continue
        v = values[ch]
        t = type(v)
        if t is str:
            if len(v) > _INLINE_MAX_STR:
                continue
            cost = len(v) + len(ch)
        elif v is None or t is bool or t is float or (t is int and -(2**63) <= v < 2**64):
            cost = 9 + len(ch)
        else:
            continue
        if cost > budget:
            budget = -1  # the budget is spent: the rest spills (keeps the inlined set a prefix)
            spilled.append(ch)
        else:
            budget -= cost
            out[ch] = v
    return out, spilled


def blob_rows(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
    inlined: dict[str, Any],
    spilled: list[str],
    lists: tuple[Any, str, str] | None = None,
) -> list[tuple[str, str, str, bytes]]:
    """(channel, version key, type, bytes) of the blobs a put writes: its new versions'
    values except the inlined ones, plus the spilled channels' (see `inline_values`).
    Same rows and errors as `codec.blob_rows` for what it covers; `lists` as there (the
    list values of new versions: append deltas)."""
    values = checkpoint["channel_values"]
    dumps = serde.dumps_typed
    version_key = codec.version_key
    try:
        if lists is None:
            rows = [
                (ch, version_key(ver), *dumps(values[ch]))
                for ch, ver in new_versions.items()
                if ch in values and ch not in inlined
            ]
        else:
            encode, thread, ns = lists
            rows = [
                (
                    ch,
                    version_key(ver),
                    *(
                        encode(thread, ns, ch, ver, values[ch])
                        if type(values[ch]) is list
                        else dumps(values[ch])
                    ),
                )
                for ch, ver in new_versions.items()
                if ch in values and ch not in inlined
            ]
        if spilled:
            versions = checkpoint["channel_versions"]
            rows += [
                (ch, version_key(versions[ch]), *dumps(values[ch]))
                for ch in spilled
                if ch not in new_versions
            ]
    except TypeError:  # let the codec raise its error naming the channel
        codec.blob_rows(serde, values, new_versions)
        raise
    return rows


def put_op(
    serde: SerializerProtocol,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    expected_head: Any = NO_EXPECTATION,
    lists: Any = None,
) -> Write:
    """Store a checkpoint and its new blobs; return the config selecting it.

    With an expected head (argument or `configurable[CONFIG_KEY_EXPECTED_HEAD]`), raise
    CheckpointConflictError unless the thread/ns head is still that id (None: no head).
    `lists`: `encode(thread, ns, channel, version, value)` of the list values (append
    deltas), or None.
    """
    conf = config["configurable"]
    thread_id = conf["thread_id"]
    ns = conf.get("checkpoint_ns", "")
    expected = expected_head_of(config, expected_head)
    fenced = expected is not NO_EXPECTATION
    if fenced and expected is not None and not isinstance(expected, str):
        raise ValueError(f"expected head must be a checkpoint id (str) or None, got {expected!r}")
    inline, spilled = inline_values(checkpoint)
    blobs = blob_rows(
        serde, checkpoint, new_versions, inline, spilled, lists and (lists, thread_id, ns)
    )
    envelope = checkpoint.copy()
    envelope["channel_values"] = inline
    try:
        ty, record = serde.dumps_typed(envelope)
    except TypeError as exc:
        raise TypeError(f"Cannot serialize checkpoint {checkpoint['id']!r} ({exc})") from exc
    meta, run_id = codec.dump_metadata(config, metadata)
    versions = checkpoint["channel_versions"]
    refs = [ch for ch in versions if ch not in inline] if inline else list(versions)
    checkpoint_id = checkpoint["id"]
    params = [
        thread_id,
        ns,
        checkpoint_id,
        conf.get("checkpoint_id"),
        ty,
        record,
        text_array(refs),
        text_array([str(versions[ch]) for ch in refs]),  # codec.version_key: str(version)
        meta,
        run_id,
    ]
    if fenced:
        params.append(expected)
    _add_rows(params, blobs)
    sql, parts = _put_shape(len(blobs), fenced)  # a conflict raises: see conflict_from
    return Write(Query(sql, params, raw=True, parts=parts), config_of(thread_id, ns, checkpoint_id))


def _add_rows(params: list[Any], rows: Sequence[tuple]) -> None:
    """Append the parameters of `rows` (see `_rows_source`): row by row, or column arrays."""
    if len(rows) > _VALUES_MAX:
        params.extend(list(col) for col in zip(*rows))
    else:
        for row in rows:
            params.extend(row)


_WRITES_FIXED = 5  # t, ns, id, task, path (then a fenced op's expected head)
# A fenced put_writes checks the head like a fenced put (FENCE_HEAD, under the namespace's
# lock) and inserts its rows only after the check passed (they read its one row).
_WRITES_FENCE = f"SELECT {FENCE_HEAD}($1, $2, $6::text) AS ok"


@functools.lru_cache(maxsize=64)
def put_writes_parts(n_rows: int, fenced: bool = False, replace: bool = True) -> Parts:
    """The put_writes statement for `n_rows` rows: a VALUES list for a few, unnest for many.
    Rows with idx >= 0 are inserted only if absent; special ones (idx < 0) replace when
    `replace` (a call whose writes are all special), else they are inserted only if absent
    too. `fenced`: the head is checked first (parameter 6: the expected head)."""
    first = _WRITES_FIXED + 1 + fenced
    if n_rows > _VALUES_MAX:
        source = _rows_source(
            n_rows, first, ("int", "text", "text", "bytea"), "idx, channel, type, blob"
        )
        rows = f"SELECT $1, $2, $3, $4, u.idx, u.channel, u.type, u.blob, $5 FROM {source}"
        if fenced:
            rows += f" {_AFTER_FENCE}"
    else:  # a plain VALUES list: the fewest plan nodes
        rows = "VALUES " + ", ".join(
            f"($1, $2, $3, $4, ${first + 4 * i}::int, ${first + 4 * i + 1},"
            f" ${first + 4 * i + 2}, ${first + 4 * i + 3}::bytea, $5)"
            for i in range(n_rows)
        )
        if fenced:
            rows = f"SELECT v.* FROM ({rows}) AS v {_AFTER_FENCE}"
    return Parts(
        (("fence", _WRITES_FENCE),) if fenced else (),
        f"""
INSERT INTO {WRITES} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
                      blob, task_path)
{rows}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob,
    task_path = EXCLUDED.task_path
WHERE {"EXCLUDED.idx < 0" if replace else "false"}""",
    )


def put_writes_op(
    serde: SerializerProtocol,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
    expected_head: Any = NO_EXPECTATION,
) -> Write:
    """Store a task's writes: idempotent per (task_id, idx); when all of them are special
    (WRITES_IDX_MAP), they replace existing rows instead, as LangGraph's savers have it.
    With an expected head, raise CheckpointConflictError unless the thread/ns head is
    still that id (None: no head)."""
    conf = config["configurable"]
    dumps = serde.dumps_typed
    special = WRITES_IDX_MAP.get
    try:  # one row per idx (an upsert may touch a row only once per statement): the last
        # one when they replace, else the first (the later ones would be ignored)
        replace = all(ch in WRITES_IDX_MAP for ch, _ in writes)
        if replace:
            by_idx = {
                (idx := special(ch, pos)): (idx, ch, *dumps(value))
                for pos, (ch, value) in enumerate(writes)
            }
        else:
            by_idx = {}
            for pos, (ch, value) in enumerate(writes):
                idx = special(ch, pos)
                if idx not in by_idx:
                    by_idx[idx] = (idx, ch, *dumps(value))
    except TypeError:  # let the codec raise its error naming the channel
        codec.write_rows(serde, writes, task_id, task_path)
        raise
    if not by_idx:
        return _NOTHING
    params = [conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"], task_id]
    params.append(task_path)
    fenced = expected_head is not NO_EXPECTATION
    if fenced:
        if expected_head is not None and not isinstance(expected_head, str):
            raise ValueError(
                f"expected head must be a checkpoint id (str) or None, got {expected_head!r}"
            )
        params.append(expected_head)
    _add_rows(params, list(by_idx.values()))
    n = min(len(by_idx), _VALUES_MAX + 1)
    parts = put_writes_parts(n, fenced, replace)
    sql = put_writes_sql(n, replace) if fenced else parts.final
    return Write(Query(sql, params, raw=True, parts=parts))


@functools.lru_cache(maxsize=64)
def put_writes_sql(n_rows: int, replace: bool = True) -> str:
    """The fenced put_writes statement's SQL (see `put_writes_parts`)."""
    return render(put_writes_parts(n_rows, True, replace))


_NOTHING = Write(None)


def batch_all_op(
    serde: SerializerProtocol, ops: Sequence[PutOp | WritesOp], lists: Any = None
) -> Op:
    """put_batch, all or nothing, in one round trip: one merged statement, or, when two ops
    write the same row (two puts on one thread/ns) or their fences cannot share one check,
    a pipeline in one implicit transaction (a Query with fetch="pipeline" whose params are
    the queries; each fenced op checks the head itself there, in order)."""
    checks = merged_fences(ops)
    # encoding: before any connection is taken
    writes = [batch_op(serde, op, checks is None or checks[i], lists) for i, op in enumerate(ops)]
    if all(w.query is None for w in writes):
        return [w.value for w in writes]
    merged = merged_query(ops, writes) if checks is not None else None
    if merged is not None:  # the usual case: ONE statement
        yield merged
    else:
        yield Query("", [w.query for w in writes], "pipeline", raw=True)
    return [w.value for w in writes]


def merged_fences(ops: Sequence[PutOp | WritesOp]) -> list[bool] | None:
    """Which ops' statements check their fence when the batch runs as ONE statement, or
    None when it cannot (the pipeline then runs each op's own statement in order).

    In one statement the order of the data-modifying parts is unspecified, so a check must
    not depend on another part's insert; there is at most one put per (thread, ns)
    (`mergeable`). Per (thread, ns): a fenced put checks its head, and the fenced writes
    before it must expect that same head, those after it the put's id (what the head is
    then); without a put, the first fenced writes op checks and the others must expect
    the same head. Anything else: None."""
    if not all(isinstance(op, (PutOp, WritesOp)) for op in ops):
        return None  # (batch_op names the error)
    checks = [False] * len(ops)
    state: dict[tuple, Any] = {}  # (thread, ns) -> the head the ops so far imply, or a put
    for i, op in enumerate(ops):
        if type(op) is WritesOp and not op.writes:
            continue  # stores nothing (no statement): nothing to fence
        conf = op.config["configurable"]
        key = (conf["thread_id"], conf.get("checkpoint_ns", ""))
        expected = op.expected_head
        if isinstance(op, PutOp):
            if expected is NO_EXPECTATION:
                expected = expected_head_of(op.config)
            implied = state.get(key, _NONE_YET)
            if expected is NO_EXPECTATION:
                if implied is not _NONE_YET:  # fenced writes, then an unfenced put
                    return None
                state[key] = _UNFENCED
                continue
            if implied is _UNFENCED or (implied is not _NONE_YET and implied != expected):
                return None
            checks[i] = True
            state[key] = op.checkpoint["id"]  # the head for the ops after it
            for j in range(i):  # the writes before it ride on its check
                if checks[j] and type(ops[j]) is WritesOp and _key_of(ops[j]) == key:
                    checks[j] = False
        elif expected is not NO_EXPECTATION:
            implied = state.get(key, _NONE_YET)
            if implied is _NONE_YET:
                checks[i] = True
                state[key] = expected
            elif implied is _UNFENCED or implied != expected:
                return None
    return checks if mergeable(ops) else None


_NONE_YET: Any = object()
_UNFENCED: Any = object()


def _key_of(op: PutOp | WritesOp) -> tuple:
    conf = op.config["configurable"]
    return conf["thread_id"], conf.get("checkpoint_ns", "")


def batch_op(
    serde: SerializerProtocol, op: PutOp | WritesOp, check: bool = True, lists: Any = None
) -> Write:
    """The operation of one `put_batch` item (`check=False`: a writes op's fence is checked
    by another statement of its batch, see `merged_fences`; `lists`: see `put_op`)."""
    if isinstance(op, PutOp):
        return put_op(
            serde,
            op.config,
            op.checkpoint,
            op.metadata,
            op.new_versions,
            op.expected_head,
            lists,
        )
    if isinstance(op, WritesOp):
        expected = op.expected_head if check else NO_EXPECTATION
        return put_writes_op(serde, op.config, op.writes, op.task_id, op.task_path, expected)
    raise TypeError(f"put_batch takes PutOp or WritesOp items, not {type(op).__name__}")
