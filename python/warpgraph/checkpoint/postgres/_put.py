"""The write side of the Postgres savers: put, put_writes and put_batch operations.

Each is ONE statement (see `_sql` for how operations run): a put writes its new blobs, the
checkpoint row and the thread/ns head row; put_writes writes all of a task's writes.
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
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    SerializerProtocol,
)
from warpgraph.checkpoint.postgres._schema import (
    BLOBS,
    CHECKPOINT_COLUMNS,
    CHECKPOINTS,
    CONFLICT_SQLSTATE,
    FENCE_FUNCTION,
    HEADS,
    WRITES,
)
from warpgraph.checkpoint.postgres._sql import Op, Query, config_of, finish_batch_item, start

# Blob rows: a VALUES list for a few rows (cheaper than binding arrays), unnest of arrays
# for many. The statement text depends on (row count, fenced): see `put_sql`.
_VALUES_MAX = 16
_UNNEST = (
    "unnest(%(b_ch)s::text[], %(b_ver)s::text[], %(b_ty)s::text[], %(b_blob)s::bytea[])"
    " AS u(channel, version, type, blob)"
)


def text_array(items: Any) -> str:
    """A PostgreSQL text[] literal (bound as one text parameter: cheaper than a list)."""
    items = list(items)
    if not items:
        return "{}"
    raw = "".join(items)
    if '"' in raw or "\\" in raw:
        items = [x.replace("\\", "\\\\").replace('"', '\\"') for x in items]
    return '{"' + '","'.join(items) + '"}'


def _blob_source(n: int) -> str:
    if n > _VALUES_MAX:
        return _UNNEST
    rows = ", ".join(
        f"(%(b{i}c)s::text, %(b{i}v)s::text, %(b{i}t)s::text, %(b{i}b)s::bytea)" for i in range(n)
    )
    return f"(VALUES {rows}) AS u(channel, version, type, blob)"


def _blob_params(params: dict[str, Any], blobs: list[tuple[str, str, str, bytes]]) -> None:
    if len(blobs) > _VALUES_MAX:
        params["b_ch"] = [b[0] for b in blobs]
        params["b_ver"] = [b[1] for b in blobs]
        params["b_ty"] = [b[2] for b in blobs]
        params["b_blob"] = [b[3] for b in blobs]
        return
    for i, (channel, version, typ, data) in enumerate(blobs):
        params[f"b{i}c"] = channel
        params[f"b{i}v"] = version
        params[f"b{i}t"] = typ
        params[f"b{i}b"] = data


def _insert_blobs(n: int, guard: str) -> str:
    return f"""
    INSERT INTO {BLOBS} (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(t)s, %(ns)s, u.channel, u.version, u.type, u.blob FROM {_blob_source(n)}
    {guard}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING"""


_CHECKPOINT_VALUES = (
    "%(t)s, %(ns)s, %(id)s, %(parent)s, %(ty)s, %(cp)s, %(chs)s::text[], %(vers)s::text[], "
    "%(inl_names)s::text[], %(inl_ty)s, %(inl)s, %(meta)s::jsonb, %(run)s"
)
_UPSERT_CHECKPOINT = f"""
    INSERT INTO {CHECKPOINTS} ({CHECKPOINT_COLUMNS}) SELECT {_CHECKPOINT_VALUES} {{guard}}
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET
        parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type,
        checkpoint = EXCLUDED.checkpoint, channels = EXCLUDED.channels,
        versions = EXCLUDED.versions, inlined = EXCLUDED.inlined,
        inline_type = EXCLUDED.inline_type, inline = EXCLUDED.inline,
        metadata = EXCLUDED.metadata, run_id = EXCLUDED.run_id
    RETURNING 1"""

# Plain put: blobs + head (kept at the latest id) + checkpoint, one statement.
_HEAD_UPSERT = f"""
    INSERT INTO {HEADS} (thread_id, checkpoint_ns, checkpoint_id) VALUES (%(t)s, %(ns)s, %(id)s)
    ON CONFLICT (thread_id, checkpoint_ns) DO UPDATE SET checkpoint_id = EXCLUDED.checkpoint_id
    WHERE {HEADS}.checkpoint_id IS NULL OR {HEADS}.checkpoint_id < EXCLUDED.checkpoint_id"""

# Fenced put: moves the head from the expected id to the new one and writes only if it
# moved. The UPDATE re-checks its condition on the latest row version after waiting for a
# concurrent writer, and a concurrent first INSERT conflicts, so two racing puts that
# expect the same head cannot both succeed. If nothing was stored, FENCE_FUNCTION raises
# (SQLSTATE CONFLICT_SQLSTATE, the head seen by the statement in the detail), which also
# rolls back everything else in the statement (or pipelined batch).
_OK = "WHERE EXISTS (SELECT 1 FROM moved) OR EXISTS (SELECT 1 FROM created)"
_MOVED = f"""
    UPDATE {HEADS} SET checkpoint_id = %(id)s
    WHERE thread_id = %(t)s AND checkpoint_ns = %(ns)s
        AND checkpoint_id IS NOT DISTINCT FROM %(expected)s::text
    RETURNING 1"""
_CREATED = f"""
    INSERT INTO {HEADS} (thread_id, checkpoint_ns, checkpoint_id)
    SELECT %(t)s, %(ns)s, %(id)s WHERE %(expected)s::text IS NULL
    ON CONFLICT (thread_id, checkpoint_ns) DO NOTHING
    RETURNING 1"""
_FENCE_CHECK = f"""{FENCE_FUNCTION}(
    EXISTS (SELECT 1 FROM stored), %(t)s, %(ns)s, %(expected)s::text,
    (SELECT checkpoint_id FROM {HEADS} WHERE thread_id = %(t)s AND checkpoint_ns = %(ns)s))"""


class Parts(NamedTuple):
    """A statement as CTEs + a final part, so several can be merged into one statement."""

    ctes: tuple[tuple[str, str], ...]  # (name, data-modifying statement)
    final: str  # a data-modifying statement, or a SELECT expression if `check`
    check: bool = False


# CTE names used in Parts (renamed per operation when statements are merged)
_CTE_NAME = re.compile(r"\b(blobs|head|moved|created|stored)\b")
_PARAM = re.compile(r"%\((\w+)\)s")


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
    if not fenced:
        ctes = ((("blobs", _insert_blobs(n, "")),) if n else ()) + (("head", _HEAD_UPSERT),)
        return Parts(ctes, _UPSERT_CHECKPOINT.format(guard=""))
    ctes = (("moved", _MOVED), ("created", _CREATED))
    if n:
        ctes += (("blobs", _insert_blobs(n, _OK)),)
    ctes += (("stored", _UPSERT_CHECKPOINT.format(guard=_OK)),)
    return Parts(ctes, _FENCE_CHECK, check=True)


@functools.lru_cache(maxsize=128)
def put_sql(n_blobs: int, fenced: bool) -> str:
    """The put statement's SQL (see `put_parts`)."""
    return render(put_parts(n_blobs, fenced))


def merge(queries: Sequence[Query]) -> tuple[str, dict[str, Any]]:
    """One statement doing all `queries` (each built from Parts): CTEs and parameters are
    renamed per query (prefix o<i>_), fence checks are the final SELECT list. The caller
    makes sure no two queries write the same row (see `mergeable`)."""
    params: dict[str, Any] = {}
    for i, query in enumerate(queries):
        prefix = f"o{i}_"
        params.update({prefix + k: v for k, v in query.params.items()})
    return _merged_sql(tuple(q.parts for q in queries)), params


@functools.lru_cache(maxsize=128)
def _merged_sql(all_parts: tuple[Parts, ...]) -> str:
    ctes: list[tuple[str, str]] = []
    checks: list[str] = []
    for i, parts in enumerate(all_parts):
        prefix = f"o{i}_"

        def rename(text: str, prefix: str = prefix) -> str:
            text = _PARAM.sub(lambda m: f"%({prefix}{m.group(1)})s", text)
            return _CTE_NAME.sub(lambda m: prefix + m.group(1), text)

        ctes.extend((prefix + name, rename(body)) for name, body in parts.ctes)
        if parts.check:
            checks.append(rename(parts.final))
        else:
            ctes.append((prefix + "final", rename(parts.final)))
    return render(Parts(tuple(ctes), ", ".join(checks) or "1", check=True))


def merged_query(
    ops: Sequence[PutOp | WritesOp], started: Sequence[tuple[Query | None, Any]]
) -> Query | None:
    """One Query doing all the batch's statements, or None if they cannot be merged."""
    queries = [q for q, _ in started if q is not None]
    if not queries or any(q.parts is None for q in queries) or not mergeable(ops):
        return None
    sql, params = merge(queries)
    return Query(sql, params, "one")


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


def inline_values(checkpoint: Checkpoint) -> dict[str, Any]:
    """The small scalar values (None, bool, int64, float, str <= 64 chars) of the versioned
    channels, up to ~512 characters in all: stored in the checkpoint row for fast reads."""
    values = checkpoint["channel_values"]
    out: dict[str, Any] = {}
    budget = _INLINE_MAX_TOTAL
    for ch in checkpoint["channel_versions"]:
        if ch not in values:
            continue
        v = values[ch]
        t = type(v)
        if t is str:
            cost = len(v) + len(ch)
            if len(v) > _INLINE_MAX_STR:
                continue
        elif v is None or t is bool or t is float or (t is int and -(2**63) <= v < 2**64):
            cost = 9 + len(ch)
        else:
            continue
        if cost > budget:
            break
        budget -= cost
        out[ch] = v
    return out


def put_op(
    serde: SerializerProtocol,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    expected_head: Any = NO_EXPECTATION,
) -> Op:
    """Store a checkpoint and its new blobs; return the config selecting it.

    With an expected head (argument or `configurable[CONFIG_KEY_EXPECTED_HEAD]`), raise
    CheckpointConflictError unless the thread/ns head is still that id (None: no head).
    """
    conf = config["configurable"]
    thread_id = conf["thread_id"]
    ns = conf.get("checkpoint_ns", "")
    expected = expected_head_of(config, expected_head)
    if expected is not NO_EXPECTATION and expected is not None and not isinstance(expected, str):
        raise ValueError(f"expected head must be a checkpoint id (str) or None, got {expected!r}")
    blobs = codec.blob_rows(serde, checkpoint["channel_values"], new_versions)
    inline = inline_values(checkpoint)
    inline_typed = serde.dumps_typed(inline) if inline else None
    enc = codec.encode_checkpoint(serde, checkpoint, None, None)
    meta, run_id = codec.dump_metadata(config, metadata)
    versions = checkpoint["channel_versions"]
    params = {
        "t": thread_id,
        "ns": ns,
        "id": checkpoint["id"],
        "parent": conf.get("checkpoint_id"),
        "ty": enc.record[0],
        "cp": enc.record[1],
        "chs": text_array(versions),
        "vers": text_array([codec.version_key(v) for v in versions.values()]),
        "inl_names": text_array(inline),
        "inl_ty": inline_typed[0] if inline else None,
        "inl": inline_typed[1] if inline else None,
        "meta": meta,
        "run": run_id,
    }
    _blob_params(params, blobs)
    fenced = expected is not NO_EXPECTATION
    if fenced:
        params["expected"] = expected
    parts = put_parts(len(blobs), fenced)  # a conflict raises: see conflict_from
    yield Query(put_sql(len(blobs), fenced), params, "one", parts=parts)
    return config_of(thread_id, ns, checkpoint["id"])


_WRITES_UNNEST = (
    "unnest(%(idx)s::int[], %(ch)s::text[], %(ty)s::text[], %(bl)s::bytea[])"
    " AS u(idx, channel, type, blob)"
)


@functools.lru_cache(maxsize=64)
def put_writes_parts(n_rows: int) -> Parts:
    """The put_writes statement for `n_rows` rows: VALUES for a few, unnest for many.
    Rows with idx >= 0 are inserted only if absent; special ones (idx < 0) replace."""
    if n_rows > _VALUES_MAX:
        source = _WRITES_UNNEST
    else:
        rows = ", ".join(
            f"(%(w{i}i)s::int, %(w{i}c)s::text, %(w{i}t)s::text, %(w{i}b)s::bytea)"
            for i in range(n_rows)
        )
        source = f"(VALUES {rows}) AS u(idx, channel, type, blob)"
    return Parts(
        (),
        f"""
INSERT INTO {WRITES} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type,
                      blob, task_path)
SELECT %(t)s, %(ns)s, %(id)s, %(task)s, u.idx, u.channel, u.type, u.blob, %(path)s
FROM {source}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob,
    task_path = EXCLUDED.task_path
WHERE EXCLUDED.idx < 0""",
    )


def put_writes_op(
    serde: SerializerProtocol,
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> Op:
    """Store a task's writes: idempotent per (task_id, idx >= 0); special writes replace."""
    conf = config["configurable"]
    rows = codec.write_rows(serde, writes, task_id, task_path)
    if not rows:
        return None
    # one row per idx, the last wins (an upsert may touch a row only once per statement)
    rows = list({r[1]: r for r in rows}.values())
    params = {
        "t": conf["thread_id"],
        "ns": conf.get("checkpoint_ns", ""),
        "id": conf["checkpoint_id"],
        "task": task_id,
        "path": task_path,
    }
    if len(rows) > _VALUES_MAX:
        params.update(
            idx=[r[1] for r in rows],
            ch=[r[2] for r in rows],
            ty=[r[3] for r in rows],
            bl=[r[4] for r in rows],
        )
    else:
        for i, row in enumerate(rows):
            params[f"w{i}i"], params[f"w{i}c"], params[f"w{i}t"], params[f"w{i}b"] = row[1:5]
    parts = put_writes_parts(min(len(rows), _VALUES_MAX + 1))
    yield Query(parts.final, params, parts=parts)
    return None


def batch_all_op(serde: SerializerProtocol, ops: Sequence[PutOp | WritesOp]) -> Op:
    """put_batch, all or nothing, in one round trip: one merged statement, or, when two ops
    write the same row (two puts on one thread/ns), a pipeline in one implicit transaction
    (a Query with fetch="pipeline" whose params are the queries)."""
    gens = [batch_op(serde, op) for op in ops]
    started = [start(gen) for gen in gens]  # encoding: before any connection is taken
    if all(query is None for query, _ in started):
        return [value for _, value in started]
    merged = merged_query(ops, started)
    if merged is not None:  # the usual case: ONE statement
        row = yield merged
        rows: Sequence[Any] = [row] * len(gens)
    else:
        rows = yield Query("", [query for query, _ in started], "pipeline")
    return [finish_batch_item(g, item, row) for g, item, row in zip(gens, started, rows)]


def batch_op(serde: SerializerProtocol, op: PutOp | WritesOp) -> Op:
    """The operation of one `put_batch` item."""
    if isinstance(op, PutOp):
        return put_op(
            serde, op.config, op.checkpoint, op.metadata, op.new_versions, op.expected_head
        )
    if isinstance(op, WritesOp):
        return put_writes_op(serde, op.config, op.writes, op.task_id, op.task_path)
    raise TypeError(f"put_batch takes PutOp or WritesOp items, not {type(op).__name__}")
