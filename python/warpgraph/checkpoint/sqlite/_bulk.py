"""Committing many prepared operations at once (the group-commit writer's batches).

`run_bulk` runs the steps `SqliteCore.prepare` built, in order, inside the caller's
transaction, with the fewest statements: one head lookup per (thread, ns) of the batch
(for its fenced puts and writes; later heads are known: each insert makes the head
max(head, id)), then one INSERT per
table for all rows. Same results as running the steps one by one; anything unusual (a
checkpoint id stored already, any error) raises, and the caller reruns the steps one by
one in savepoints.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from warpgraph.checkpoint._sql import NO_EXPECTATION, CheckpointConflictError, codec

_HEAD = "SELECT max(checkpoint_id) FROM wg_checkpoints WHERE thread_id = ? AND checkpoint_ns = ?"
_CP_COLS = (
    "wg_checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, base_id, "
    "depth, run_id, type, checkpoint, metadata)"
)
# the nullable text columns take 0 for NULL (`checkpoint_row`): the sqlite3 module binds
# None (and bytes) only after its adapter protocol, which formats and clears an
# AttributeError per parameter; an int 0 is bound directly and never equals a text id
_INSERT_CP = (
    f"INSERT INTO {_CP_COLS} VALUES (?, ?, ?, nullif(?, 0), nullif(?, 0), ?, nullif(?, 0), ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)
_INSERT_BLOBS = (
    "INSERT OR REPLACE INTO wg_blobs (thread_id, checkpoint_ns, channel, version, type, blob) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_WRITE_COLS = (
    "INTO wg_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, "
    "value, task_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_WRITES = f"INSERT OR IGNORE {_WRITE_COLS}"
_REPLACE_WRITES = f"INSERT OR REPLACE {_WRITE_COLS}"


def checkpoint_row(
    thread: str,
    ns: str,
    cid: str,
    parent_id: str | None,
    enc: codec.EncodedCheckpoint,
    run_id: str | None,
    metadata: str,
) -> tuple:
    """The `_INSERT_CP` parameters of a checkpoint (None as 0: see there)."""
    base_id = enc.base_id
    return (
        thread,
        ns,
        cid,
        0 if parent_id is None else parent_id,
        0 if base_id is None else base_id,
        enc.depth,
        0 if run_id is None else run_id,
        *enc.record,
        metadata,
    )


def blob_rows_to_store(thread: str, ns: str, blobs: list, enc: codec.EncodedCheckpoint) -> list:
    """Blob rows of a put, except values carried in its record: every checkpoint that
    references such a version inherits the inline copy (`codec.encode_checkpoint`) or is
    re-encoded in full with it (`detach`), so no read needs their blob rows."""
    inline = enc.state.inline
    return [(thread, ns, *b) for b in blobs if b[0] not in inline]


class StoredAlready(Exception):
    """A checkpoint id of the batch exists already (the step-by-step path re-bases it)."""


_UNKNOWN = object()


def run_bulk(core: Any, conn: sqlite3.Connection, steps: Sequence[Any]) -> list[Any]:
    """Results of `steps` (`SqliteCore.prepare` tuples; exceptions pass through), run in bulk."""
    out: list[Any] = []
    cur = core.cursor(conn)
    heads: dict[tuple[str, str], Any] = {}
    checkpoints: list[tuple] = []
    blobs: list[tuple] = []
    regular: list[tuple] = []
    special: list[tuple] = []
    for step in steps:
        if isinstance(step, BaseException):
            out.append(step)
            continue
        if len(step) == 3:  # a writes op's (regular, special, fence)
            fence = step[2]
            if fence is not None and (step[0] or step[1]):
                thread, ns, expected = fence
                key = (thread, ns)
                head = heads.get(key, _UNKNOWN)
                if head is _UNKNOWN:
                    head = heads[key] = cur.execute(_HEAD, key).fetchone()[0]
                if head != expected:
                    raise CheckpointConflictError(thread, ns, expected, head)
            regular += step[0]
            special += step[1]
            out.append(None)
            continue
        thread, ns, cid, _, _, _, _, _, expected, _ = step
        key = (thread, ns)
        head = heads.get(key, _UNKNOWN)
        if head is _UNKNOWN:  # nothing of this batch is inserted for `key` yet
            head = cur.execute(_HEAD, key).fetchone()[0]
        if expected is not NO_EXPECTATION and head != expected:
            raise CheckpointConflictError(thread, ns, expected, head)
        row, rows, state = core.put_rows(conn, step)
        checkpoints.append(row)
        blobs += rows
        core._remember((thread, ns, cid), state)
        heads[key] = cid if head is None or cid > head else head
        out.append(codec.config_of(thread, ns, cid))
    if checkpoints and cur.executemany(_INSERT_CP, checkpoints).rowcount != len(checkpoints):
        raise StoredAlready
    if blobs:
        cur.executemany(_INSERT_BLOBS, blobs)
    if regular:
        cur.executemany(_INSERT_WRITES, regular)
    if special:
        cur.executemany(_REPLACE_WRITES, special)
    return out
