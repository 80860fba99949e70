"""Deletes, copies and pruning for the SQLite savers (part of `SqliteCore`).

Deleting a checkpoint that other rows are diffed against first rewrites those rows as
full records (`detach`), and blobs no surviving checkpoint references are removed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from warpgraph.checkpoint._sql import codec
from warpgraph.checkpoint._sql.appends import DELTA_TYPE, chain_versions, live_closure

_REST = (
    "checkpoint_ns, checkpoint_id, parent_checkpoint_id, base_id, depth, type, checkpoint, metadata"
)
_DELTAS = (  # the append deltas of a (thread, ns) (`_sql/appends.py`)
    "SELECT channel, version, blob FROM wg_blobs WHERE thread_id = ? AND checkpoint_ns = ? "
    "AND type = ?"
)
_BLOB_KEY = "thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?"


class MaintenanceMixin:
    """Needs `serde`, `state_of`, `forget` and `transaction` from `SqliteCore`."""

    serde: Any
    state_of: Any
    forget: Any
    transaction: Any
    _rebuild: Any

    def rebase_dependents(
        self, conn: sqlite3.Connection, thread: str, ns: str, blobs: Sequence[tuple]
    ) -> None:
        """Before the blob rows `blobs` ((channel, version key, type, bytes)) are stored
        again: every append delta whose chain reads a version whose stored bytes change
        is stored whole (rebuilt from the bytes held now)."""
        changed: dict[str, set[str]] = {}
        for ch, vkey, typ, data in blobs:
            row = conn.execute(
                f"SELECT type, blob FROM wg_blobs WHERE {_BLOB_KEY}", (thread, ns, ch, vkey)
            ).fetchone()
            if row is not None and (row[0] != typ or bytes(row[1] or b"") != bytes(data or b"")):
                changed.setdefault(ch, set()).add(vkey)
        if not changed:
            return
        deltas: dict[tuple[str, str], bytes] = {
            (ch, v): bytes(b)
            for ch, v, b in conn.execute(_DELTAS, (thread, ns, DELTA_TYPE))
            if ch in changed
        }
        whole = []
        for (ch, v), payload in deltas.items():
            if v in changed[ch]:
                continue

            def fetch(x: Any, ch: str = ch) -> Any:
                got = deltas.get((ch, codec.version_key(x)))
                return None if got is None else (DELTA_TYPE, got)

            reads = {codec.version_key(x) for x in chain_versions(fetch, v)[1:]}
            if reads & changed[ch]:
                full = self._rebuild(conn, (thread, ns, ch, v), (DELTA_TYPE, payload))[0]
                whole.append((*full, thread, ns, ch, v))
        conn.executemany(f"UPDATE wg_blobs SET type = ?, blob = ? WHERE {_BLOB_KEY}", whole)
        self.forget()

    def detach(self, conn: sqlite3.Connection, thread: str, ns: str, doomed: set[str]) -> None:
        """Rewrite as full records the surviving checkpoints whose base is in `doomed`."""
        rows = conn.execute(
            "SELECT checkpoint_id, base_id, type, checkpoint FROM wg_checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND base_id IS NOT NULL",
            (thread, ns),
        ).fetchall()
        for cid, base_id, typ, blob in rows:
            if base_id in doomed and cid not in doomed:
                state = self.state_of(conn, thread, ns, cid)
                record = self.serde.loads_typed((typ, blob))
                new_typ, new_blob = codec.full_record(self.serde, record, state)  # type: ignore[arg-type]
                conn.execute(
                    "UPDATE wg_checkpoints SET base_id = NULL, type = ?, checkpoint = ? "
                    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    (new_typ, new_blob, thread, ns, cid),
                )

    def delete_thread(self, conn: sqlite3.Connection, thread_id: str) -> None:
        def run() -> None:
            for table in ("wg_checkpoints", "wg_blobs", "wg_writes"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (str(thread_id),))
            self.forget()

        self.transaction(conn, run)

    def copy_thread(self, conn: sqlite3.Connection, source: str, target: str) -> None:
        def run() -> None:
            conn.execute(
                f"INSERT OR REPLACE INTO wg_checkpoints (thread_id, run_id, {_REST}) "
                f"SELECT ?, run_id, {_REST} FROM wg_checkpoints WHERE thread_id = ?",
                (str(target), str(source)),
            )
            conn.execute(
                "INSERT OR REPLACE INTO wg_blobs SELECT ?, checkpoint_ns, channel, version, type, "
                "blob FROM wg_blobs WHERE thread_id = ?",
                (str(target), str(source)),
            )
            conn.execute(
                "INSERT OR REPLACE INTO wg_writes SELECT ?, checkpoint_ns, checkpoint_id, task_id, "
                "idx, channel, type, value, task_path FROM wg_writes WHERE thread_id = ?",
                (str(target), str(source)),
            )
            self.forget()

        self.transaction(conn, run)

    def delete_for_runs(self, conn: sqlite3.Connection, run_ids: Iterable[str]) -> None:
        wanted = sorted({str(r) for r in run_ids})
        if not wanted:
            return

        def run() -> None:
            rows = conn.execute(
                "SELECT thread_id, checkpoint_ns, checkpoint_id FROM wg_checkpoints "
                "WHERE run_id IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted),),
            ).fetchall()
            groups: dict[tuple[str, str], set[str]] = {}
            for thread, ns, cid in rows:
                groups.setdefault((thread, ns), set()).add(cid)
            for (thread, ns), doomed in groups.items():
                self._drop(conn, thread, ns, doomed)
            self.forget()

        self.transaction(conn, run)

    def prune(self, conn: sqlite3.Connection, thread_ids: Sequence[str], strategy: str) -> None:
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"Unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        if strategy == "delete":
            for tid in thread_ids:
                self.delete_thread(conn, tid)
            return

        def run() -> None:
            for tid in thread_ids:
                for thread, ns, _latest in conn.execute(
                    "SELECT thread_id, checkpoint_ns, max(checkpoint_id) FROM wg_checkpoints "
                    "WHERE thread_id = ? GROUP BY checkpoint_ns",
                    (str(tid),),
                ).fetchall():
                    doomed = {
                        r[0]
                        for r in conn.execute(
                            "SELECT checkpoint_id FROM wg_checkpoints WHERE thread_id = ? AND "
                            "checkpoint_ns = ? AND checkpoint_id < ?",
                            (thread, ns, _latest),
                        )
                    }
                    self._drop(conn, thread, ns, doomed)
            self.forget()

        self.transaction(conn, run)

    def _drop(self, conn: sqlite3.Connection, thread: str, ns: str, doomed: set[str]) -> None:
        """Delete checkpoints with their writes, then the blobs no survivor references."""
        if not doomed:
            return
        self.detach(conn, thread, ns, doomed)
        ids = json.dumps(sorted(doomed))
        for table in ("wg_writes", "wg_checkpoints"):
            conn.execute(
                f"DELETE FROM {table} WHERE thread_id = ? AND checkpoint_ns = ? AND "
                "checkpoint_id IN (SELECT value FROM json_each(?))",
                (thread, ns, ids),
            )
        self.forget()
        live: set[tuple[str, str]] = set()
        for (cid,) in conn.execute(
            "SELECT checkpoint_id FROM wg_checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
            (thread, ns),
        ).fetchall():
            state = self.state_of(conn, thread, ns, cid)
            if state is not None:
                live.update((ch, codec.version_key(v)) for ch, v in state.channel_versions.items())
        deltas = {(ch, v): bytes(b) for ch, v, b in conn.execute(_DELTAS, (thread, ns, DELTA_TYPE))}
        if deltas:  # (with the versions their append-delta chains read)
            live = live_closure(live, deltas, codec.version_key)
        dead = [
            (thread, ns, ch, v)
            for ch, v in conn.execute(
                "SELECT channel, version FROM wg_blobs WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread, ns),
            )
            if (ch, v) not in live
        ]
        conn.executemany(
            "DELETE FROM wg_blobs WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? "
            "AND version = ?",
            dead,
        )
