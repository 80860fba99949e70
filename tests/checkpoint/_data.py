"""Checkpoint inputs and storage sizes shared by the savers' tests and benches (the benches
import it as `checkpoint._data`: `tests/` is on their path)."""

from __future__ import annotations

import sqlite3
from typing import Any

from warpgraph.checkpoint.base import uuid6

__all__ = ("checkpoint_dict", "stored_bytes")

TS = "2026-01-01T00:00:00+00:00"


def checkpoint_dict(values: dict[str, Any], versions: dict[str, Any], **extra: Any) -> dict:
    """A v4 checkpoint of `values` at `versions`, a new uuid6 id and a fixed timestamp;
    `extra` sets `versions_seen` (default {}), `updated_channels` (default None) and any
    other key."""
    return {
        "v": 4,
        "id": str(uuid6()),
        "ts": TS,
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": extra.pop("versions_seen", {}),
        "updated_channels": extra.pop("updated_channels", None),
        **extra,
    }


def stored_bytes(conn: sqlite3.Connection, table_cols: dict[str, list[str]]) -> int:
    """The bytes a SQLite database holds in these tables' columns ({table: [column]})."""
    total = 0
    for table, cols in table_cols.items():
        expr = " + ".join(f"coalesce(length({c}), 0)" for c in cols)
        total += conn.execute(f"SELECT coalesce(sum({expr}), 0) FROM {table}").fetchone()[0]
    return total
