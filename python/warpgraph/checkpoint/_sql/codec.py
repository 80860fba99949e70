"""Row codec shared by the SQL savers (SQLite, Postgres).

A checkpoint is stored as three kinds of rows:

* one blob row per (thread, ns, channel, version), written only for `new_versions`
  (a channel without a value gets no row: a missing blob means "empty");
* one checkpoint row holding a compact *record*: id, ts, v, updated_channels, any extra
  keys, and `channel_versions` / `versions_seen` encoded as a **skip delta**;
* the task writes.

Skip deltas (the scheme Subversion uses for its file history): a checkpoint at depth
`d` (parent depth + 1; a thread's first checkpoint has depth 0) stores its versions as a
diff against the ancestor at depth `d - lowbit(d)` (found on the parent's base chain).
Reading a checkpoint follows at most `popcount(d) + 1` base links; the average diff holds
O(changes per step x log(depth)) entries, independent of the number of channels/nodes.
When a diff would be at least half the full size, the full versions are stored instead
(`base_id` NULL), which also starts a new chain.

Optionally (`encode_checkpoint(..., blobs=...)`, used by the SQLite saver) small serialized
values (<= INLINE_MAX bytes) are also carried in the record, delta-encoded the same way,
so reads need no blob lookup for them. A checkpoint inherits its parent's inline copies
while their versions are unchanged, so the SQLite saver writes no blob row for an inlined
value. A checkpoint naming a version that is neither its parent's nor new (a copy saved
under another parent, a fork with no new versions) carries that value too: the encoder
names such channels (`unsourced`) and the saver finds their inline copies in the thread's
other records (`SqliteCore.encode_put`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from warpgraph import _core
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint._sql import config_of  # noqa: F401 - the savers' `codec.config_of`
from warpgraph.checkpoint.base import (
    EXCLUDED_METADATA_KEYS,
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_metadata,
)
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

Typed = tuple[str, bytes]

# --- versions -------------------------------------------------------------------------

CORE_KEYS = frozenset(
    ("v", "id", "ts", "channel_values", "channel_versions", "versions_seen", "updated_channels")
)


_DECODED: dict[tuple, str] = {}  # memo: the same versions recur in every checkpoint
_MEMO_LIMIT = 65_536


def decode_version(value: Any) -> Any:
    """A stored version: `[n, r]` (a saver version `f"{n:032}.{r:016}"` the encoder,
    `_core.compact_version`, packed only when it formats back byte-identically) becomes
    that string again; anything else is kept as is."""
    if type(value) is list:
        key = (value[0], value[1])
        hit = _DECODED.get(key)
        if hit is None:
            if len(_DECODED) >= _MEMO_LIMIT:
                _DECODED.clear()
            hit = _DECODED[key] = f"{value[0]:032}.{value[1]:016}"
        return hit
    return value


def version_key(version: Any) -> str:
    """The text key of a blob row (`str(version)`, like the reference Postgres saver)."""
    return str(version)


# --- skip deltas ----------------------------------------------------------------------


def skip_base_depth(depth: int) -> int:
    """Depth of the ancestor a checkpoint at `depth` diffs against."""
    return depth - (depth & -depth)


@dataclass(slots=True)
class VersionsState:
    """Decoded versions of one stored checkpoint (treated as immutable once built)."""

    checkpoint_id: str
    depth: int
    base_id: str | None
    channel_versions: dict[str, Any]
    versions_seen: dict[str, dict[str, Any]]
    # small serialized values kept in the record, {channel: (type, bytes)}; each one is
    # the value of channel_versions[channel] (copies of blob rows, read without a lookup)
    inline: dict[str, tuple[str, bytes]] = field(default_factory=dict)


def apply_delta(
    base_cv: Mapping[str, Any], base_vs: Mapping[str, Mapping[str, Any]], delta: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Fresh (cv, vs) = base + the record's delta (record keys c, cd, s, sk, sd)."""
    cv = dict(base_cv)
    for k in delta.get("cd", ()):
        cv.pop(k, None)
    for k, v in delta.get("c", {}).items():
        cv[k] = decode_version(v)
    vs = dict(base_vs)  # inner dicts are shared until modified below
    for k in delta.get("sd", ()):
        vs.pop(k, None)
    # nodes in the record's order (the checkpoint's): a node new to the base is appended
    # where the checkpoint has it, not in a set's hash order
    sets, deletes = delta.get("s", {}), delta.get("sk", {})
    for node in [*sets, *(n for n in deletes if n not in sets)]:
        inner = dict(vs.get(node, {}))
        for k in deletes.get(node, ()):
            inner.pop(k, None)
        for k, v in sets.get(node, {}).items():
            inner[k] = decode_version(v)
        vs[node] = inner
    return cv, vs


# --- checkpoint records ---------------------------------------------------------------


@dataclass(slots=True)
class EncodedCheckpoint:
    """What a saver inserts for one checkpoint (besides blobs)."""

    depth: int
    base_id: str | None
    record: Typed
    state: VersionsState
    # (with the put's new_versions) the channels whose version is neither the parent's
    # nor new: their values were stored by an earlier put (see `SqliteCore.encode_put`)
    unsourced: list = field(default_factory=list)


INLINE_MAX = 96  # serialized values up to this size are also kept in the record


def encode_checkpoint(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    parent_state: VersionsState | None,
    find_base: Any,
    blobs: Sequence[tuple[str, str, str, bytes]] | None = None,
    new_versions: ChannelVersions | None = None,
) -> EncodedCheckpoint:
    """Encode `checkpoint` against `parent_state` (None: store full, depth 0).

    `find_base(parent_state, target_depth) -> VersionsState` returns the first state on the
    parent's base chain whose depth is <= target_depth (or the chain's full root).
    `blobs` (the `blob_rows` of this put), when given, lets small values ride in the
    record as well: they are inherited from the parent while their version is unchanged.
    """
    base = None
    if parent_state is not None:
        base = find_base(parent_state, skip_base_depth(parent_state.depth + 1))
    return encode_against(serde, checkpoint, parent_state, base, blobs, new_versions)


def encode_against(
    serde: SerializerProtocol,
    checkpoint: Checkpoint,
    parent_state: VersionsState | None,
    base: VersionsState | None,
    blobs: Sequence[tuple[str, str, str, bytes]] | None = None,
    new_versions: ChannelVersions | None = None,
) -> EncodedCheckpoint:
    """`encode_checkpoint` with the parent's base state already found (see there).
    `new_versions` (the put's; a dict), when given, lists in `unsourced` the channels whose
    version is neither the parent's nor new."""
    depth = 0 if parent_state is None else parent_state.depth + 1
    # natively, in one crossing: the versions (the parent's unchanged versions_seen dicts
    # shared), the inline values, and the record: a delta against `base` unless that is at
    # least half the full size (then the full versions, which also start a new chain);
    # with the default serializer, the record comes back as its msgpack bytes (a bytearray,
    # which the sqlite3 module binds without its adapter protocol)
    cv, vs, inline, diffed, record, unsourced = _core.encode_record(
        checkpoint,
        None if parent_state is None else _parts(parent_state),
        None if base is None else _parts(base),
        blobs,
        INLINE_MAX,
        CORE_KEYS,
        native_serde(serde),
        new_versions if type(new_versions) is dict or new_versions is None else dict(new_versions),
    )
    base_id = base.checkpoint_id if diffed else None  # type: ignore[union-attr]
    state = VersionsState(checkpoint["id"], depth, base_id, cv, vs, inline)
    typed = ("msgpack", record) if type(record) is bytearray else _dump(serde, "checkpoint", record)
    return EncodedCheckpoint(depth, base_id, typed, state, unsourced)


def names_inline(record: dict[str, Any], channel: str, version: Any) -> bool:
    """Whether a stored record sets `channel` to `version` itself (in its delta or its full
    versions): a candidate for holding that version's value inline (its state tells)."""
    c = record.get("c")
    return type(c) is dict and channel in c and decode_version(c[channel]) == version


def _parts(state: VersionsState) -> tuple[dict, dict, dict]:
    return state.channel_versions, state.versions_seen, state.inline


def _put_full(record: dict[str, Any], state: VersionsState) -> None:
    record["c"], record["s"] = _core.full_versions(state.channel_versions, state.versions_seen)
    if state.inline:
        record["i"] = {k: list(v) for k, v in state.inline.items()}


def full_record(serde: SerializerProtocol, record: dict[str, Any], state: VersionsState) -> Typed:
    """Re-encode a decoded record with its full versions (used before deleting its base)."""
    out = {k: v for k, v in record.items() if k not in ("c", "cd", "s", "sk", "sd", "i", "ix")}
    _put_full(out, state)
    return _dump(serde, "checkpoint", out)


def state_from_record(
    record: dict[str, Any], depth: int, base: VersionsState | None, base_id: str | None
) -> VersionsState:
    """The full versions of a stored record given its base's state (None for full rows)."""
    if base_id is not None and base is None:
        raise LookupError(f"checkpoint {record.get('id')!r}: base checkpoint {base_id!r} missing")
    empty: dict[str, Any] = {}
    cv, vs = apply_delta(
        base.channel_versions if base else empty, base.versions_seen if base else empty, record
    )
    inline = dict(base.inline) if base else {}
    for k in record.get("ix", ()):
        inline.pop(k, None)
    for k, (typ, data) in record.get("i", {}).items():
        inline[k] = (typ, data)
    return VersionsState(record["id"], depth, base_id, cv, vs, inline)


def checkpoint_from_record(
    record: dict[str, Any], state: VersionsState, values: dict[str, Any]
) -> Checkpoint:
    """A fresh Checkpoint dict (caller-owned copies of the versions), its keys in the order
    of the checkpoints the loop creates (LangGraph's savers give them back as they were)."""
    out: dict[str, Any] = {
        "v": record["v"],
        "ts": record["ts"],
        "id": record["id"],
        "channel_values": values,
        "channel_versions": dict(state.channel_versions),
        "versions_seen": {k: dict(v) for k, v in state.versions_seen.items()},
    }
    if "u" in record:
        out["updated_channels"] = record["u"]
    if "x" in record:
        out.update(record["x"])
    return out  # type: ignore[return-value]


# --- blobs and writes -----------------------------------------------------------------


def _dump(serde: SerializerProtocol, what: str, value: Any) -> Typed:
    try:
        return serde.dumps_typed(value)
    except TypeError as exc:
        raise TypeError(
            f"Cannot serialize {what}: value of type {type(value).__name__} ({exc})"
        ) from exc


def native_serde(serde: SerializerProtocol) -> bool:
    """Whether `serde` is the default serializer, whose `dumps_typed` the native row
    builders reproduce for exact builtins (other values still go through it; every value
    does with WARPGRAPH_FAST_PATHS=0)."""
    return FAST_PATHS and type(serde) is JsonPlusSerializer


def blob_rows(
    serde: SerializerProtocol,
    values: Mapping[str, Any],
    new_versions: ChannelVersions,
    lists: tuple[Any, str, str] | None = None,
) -> list[tuple[str, str, str, bytes]]:
    """(channel, version_key, type, bytes) for each new version that has a value.
    `lists`: `(encode, thread, ns)`, `encode(thread, ns, channel, version, value)` giving
    the typed form of each exact list value (append deltas)."""
    try:
        return _core.blob_rows(values, new_versions, serde.dumps_typed, native_serde(serde), lists)
    except TypeError:  # (also: not plain dicts) the loop below names a failing channel
        pass
    rows = []
    for channel, version in new_versions.items():
        if channel in values:
            value = values[channel]
            typed = None
            if lists is not None and type(value) is list:
                try:
                    typed = lists[0](lists[1], lists[2], channel, version, value)
                except TypeError:
                    pass  # (`_dump` names the channel)
            typ, data = typed or _dump(serde, f"channel {channel!r}", value)
            rows.append((channel, version_key(version), typ, data))
    return rows


def write_rows_of(
    serde: SerializerProtocol,
    thread_id: str,
    ns: str,
    checkpoint_id: str,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
) -> tuple[list[tuple], list[tuple]]:
    """The write rows of a task as (regular, special) lists of full table rows
    (thread_id, ns, checkpoint_id, *row) for the rows of `write_rows`; special (replacing
    a task's earlier row) only when every write is special (idx < 0): in a mixed list all
    rows are regular, inserted only if absent, as LangGraph's savers have it.
    Values the default serializer's native path writes come as `bytearray` (the SQLite
    saver's rows: the sqlite3 module binds those without its adapter protocol)."""
    try:
        return _core.write_rows(  # type: ignore[no-any-return]
            thread_id,
            ns,
            checkpoint_id,
            writes,
            task_id,
            task_path,
            WRITES_IDX_MAP,
            serde.dumps_typed,
            native_serde(serde),
        )
    except TypeError:  # (also: malformed writes) `write_rows` gives the precise error
        pass
    rows = write_rows(serde, writes, task_id, task_path)
    head = (thread_id, ns, checkpoint_id)
    regular = [(*head, *r) for r in rows if r[1] >= 0]
    special = [(*head, *r) for r in rows if r[1] < 0]
    return ([], special) if not regular else ([*regular, *special], [])


def write_rows(
    serde: SerializerProtocol, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
) -> list[tuple[str, int, str, str, bytes, str]]:
    """(task_id, idx, channel, type, bytes, task_path) rows.

    idx is the write's position, or its WRITES_IDX_MAP value (negative) for special
    channels. Savers insert rows only if absent (idempotent retries), except that a call
    whose writes are all special replaces existing rows (the latest wins), like
    LangGraph's savers (`write_rows_of`).
    """
    rows = []
    for pos, (channel, value) in enumerate(writes):
        typ, data = _dump(serde, f"write to channel {channel!r}", value)
        rows.append((task_id, WRITES_IDX_MAP.get(channel, pos), channel, typ, data, task_path))
    return rows


# --- metadata and filters -------------------------------------------------------------


_META_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dump_metadata(config: RunnableConfig, metadata: CheckpointMetadata) -> tuple[str, str | None]:
    """(JSON text of `get_checkpoint_metadata(config, metadata)`, its run_id as text)."""
    text, run_id = _core.metadata_json(config, metadata, EXCLUDED_METADATA_KEYS)
    if text is not None:  # else a value the native writer leaves to json (or to the error)
        return text, run_id
    merged = get_checkpoint_metadata(config, metadata)
    rid = merged.get("run_id")
    try:
        return _META_JSON(merged), None if rid is None else str(rid)
    except (TypeError, ValueError) as exc:
        for key, value in merged.items():
            try:
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError):
                raise TypeError(
                    f"Checkpoint metadata key {key!r} has a value of type "
                    f"{type(value).__name__} that cannot be stored as JSON ({exc})"
                ) from exc
        raise


def load_metadata(text: str | bytes | None) -> CheckpointMetadata:
    return json.loads(text) if text else {}  # type: ignore[return-value]


_FILTER_KEY = re.compile(r"[A-Za-z0-9_.\-]+")


def validate_filter_key(key: Any) -> str:
    """A metadata filter key, or ValueError.

    Accepted keys are those the reference accepts (letters, digits, `_`, `.`, `-`); the
    savers additionally match them *literally* as one top-level key (a dot is not a path
    separator), passing the JSON path as a bound parameter.
    """
    if not isinstance(key, str) or not _FILTER_KEY.fullmatch(key):
        raise ValueError(
            f"Invalid filter key: {key!r}. Filter keys must contain only alphanumeric "
            "characters, underscores, dots, and hyphens."
        )
    return key


def json_path(key: str) -> str:
    """SQLite JSON path selecting top-level `key` literally (`key` already validated)."""
    return f'$."{validate_filter_key(key)}"'


def filter_param(value: Any) -> tuple[bool, Any]:
    """(is_null, parameter) comparing a metadata value like the reference SQLite saver."""
    if value is None:
        return True, None
    if isinstance(value, bool):
        return False, int(value)
    if isinstance(value, (str, int, float)):
        return False, value
    if isinstance(value, (dict, list)):
        return False, json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return False, str(value)
