"""`SqliteCore`'s side of the native group-commit writer (`_native.py`): operations encoded
on the submitting thread, and the version states of checkpoints queued but not committed.

The native writer commits rows without the GIL, so everything Python does for an
operation happens when it is submitted: serializing it (`prepare`) and, for a put,
encoding its record against its parent's version state (`encode_put`). That parent is
usually the run's previous checkpoint, still queued: its state waits in `_pending`
(with the operation's seq) and moves to the cache once the writer's `committed` seq
passes it. A batch the writer cannot commit as is comes back through `native_fallback`,
which forgets the batch's pending states and runs it like the Python writer would
(`run_steps`); a put encoded against a queued checkpoint that then failed carries that
checkpoint's seq (`depends_on`) and is sent back the same way.

`native_items` makes the items of a submission: the usual operations (exact op types,
plain str ids, values and metadata the native put takes) in one crossing,
`_core.SqliteItems` (a parent or base state neither cached nor queued is read from the
database first); any other one by the general path, `native_item`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp, codec
from warpgraph.checkpoint._sql.codec import VersionsState

Key = tuple[str, str, str]


class PendingStatesMixin:
    """Needs `prepare`, `put_rows`, `read_parent_states`, `run_steps` and `_remember`."""

    _pending: dict[Key, tuple[int, VersionsState]]
    _txn_states: dict[Key, VersionsState] | None
    _items: Any  # a `_core.SqliteItems`, or None (another serializer)
    promoted: int = -1

    def native_items(
        self,
        conn: sqlite3.Connection,
        ops: Sequence[PutOp | WritesOp],
        seq: int,
        target: Any,
        want_result: bool,
        items: list[tuple],
    ) -> None:
        """Appends to `items` the `native_item`s of `ops` (seqs from `seq + 1`): the usual
        ones made by `_core.SqliteItems` in one crossing (a parent or base state it does
        not know is read from the database first), any other one by `native_item`."""
        fast = self._items if self._txn_states is None else None
        if type(ops) is not list:
            ops = list(ops)
        i, n, read = 0, len(ops), -1
        while i < n:
            if fast is not None:
                i, unknown = fast.extend(ops, i, seq, target, want_result, items)
                if i == n:
                    return
                if unknown and read != i:  # (into the cache; then that op again)
                    read = i
                    self.read_parent_states(conn, ops[i])  # type: ignore[attr-defined]
                    continue
            items.append(self.native_item(conn, ops[i], seq + i + 1, target, want_result))
            i += 1

    def native_item(
        self,
        conn: sqlite3.Connection,
        op: PutOp | WritesOp,
        seq: int,
        target: Any,
        want_result: bool,
    ) -> tuple:
        """`op` serialized and encoded by the general path (`prepare`, `put_rows`) as a
        `_core.SqliteWriter.push` item (`target`: a future or failure sink;
        `want_result`: a future, given the op's result). `_core.SqliteItems` makes the
        same of the usual ops in one crossing."""
        step = self.prepare(op)  # type: ignore[attr-defined]
        if len(step) == 3:
            regular, special, fence = step
            return ("writes", seq, regular, special, step, target, want_result, fence)
        row, rows, state = self.put_rows(conn, step)  # type: ignore[attr-defined]
        thread, ns, cid, parent_id = step[:4]
        expected = step[8]
        parent = self._pending.get((thread, ns, parent_id)) if parent_id else None
        key = (thread, ns, cid)
        self._pending.pop(key, None)  # (stored again: keep the dict in seq order)
        self._pending[key] = (seq, state)
        fenced = expected is not NO_EXPECTATION
        return (
            "put",
            seq,
            fenced,
            expected if fenced else None,
            row,
            rows,
            None if parent is None else parent[0],
            step,
            target,
            want_result,
            codec.config_of(thread, ns, cid) if want_result else None,
        )

    def promote(self, committed: int) -> None:
        """Move the pending states of operations up to seq `committed` to the cache
        (`promoted`: the last seq it was called with; callers skip it when unchanged)."""
        self.promoted = committed
        pending = self._pending
        while pending:
            key = next(iter(pending))
            seq, state = pending[key]
            if seq > committed:
                return
            del pending[key]
            self._remember(key, state)  # type: ignore[attr-defined]

    def forget_pending(self, keys: Sequence[Key]) -> None:
        for key in keys:
            self._pending.pop(key, None)

    def native_fallback(self, conn: sqlite3.Connection, steps: Sequence[Any]) -> list[Any]:
        """A batch the native writer rolled back, run like the Python writer runs one: per
        step its result or exception. Its pending states go first: each put is encoded
        again against what is stored (or committed before it in this transaction)."""
        self.forget_pending([s[:3] for s in steps if len(s) != 3])
        # (a put of the batch may fail alone: no later one may read it as a delta's base)
        steps = self.whole_values(steps)  # type: ignore[attr-defined]
        self.drop_tails()  # type: ignore[attr-defined]
        return self.run_steps(conn, steps, return_exceptions=True)  # type: ignore[attr-defined,no-any-return]
