"""The floor: the raw driver doing the minimum for the same bytes.

For a workload, the floor rewrites the payloads warpgraph stored for one run (checkpoint
records, metadata, blobs, writes; `SaverHandle.thread_payloads`) split into as many commits
as that run wrote checkpoints: one sqlite3 transaction (an `executemany` between BEGIN and
COMMIT) or one psycopg round trip (one INSERT of an unnested array) each. Reads are one
SELECT by key. Nothing is encoded or decoded: that is the saver's and engine's work.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any


def split(payloads: list[bytes], parts: int) -> list[list[bytes]]:
    """`payloads` in `parts` contiguous chunks of near-equal count (none empty if possible)."""
    parts = max(1, min(parts, len(payloads)) if payloads else 1)
    size, extra = divmod(len(payloads), parts)
    out, i = [], 0
    for p in range(parts):
        n = size + (1 if p < extra else 0)
        out.append(payloads[i : i + n])
        i += n
    return out


class SqliteFloor:
    def __init__(self, workdir: str) -> None:
        self.conn = sqlite3.connect(os.path.join(workdir, "floor.sqlite"), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS floor (run INTEGER, k INTEGER, v BLOB,"
            " PRIMARY KEY (run, k)) WITHOUT ROWID"
        )
        self.run = 0

    def write_txns(self, chunks: list[list[bytes]]) -> float:
        self.run += 1
        run, conn, k = self.run, self.conn, 0
        rows = []
        for chunk in chunks:
            rows.append([(run, k + j, v) for j, v in enumerate(chunk)])
            k += len(chunk)
        t0 = time.perf_counter()
        for batch in rows:
            conn.execute("BEGIN")
            conn.executemany("INSERT INTO floor VALUES (?, ?, ?)", batch)
            conn.execute("COMMIT")
        return time.perf_counter() - t0

    def read_ops(self, n: int, rows: int) -> float:
        run, conn = self.run, self.conn
        t0 = time.perf_counter()
        for _ in range(n):
            conn.execute(
                "SELECT v FROM floor WHERE run = ? ORDER BY k DESC LIMIT ?", (run, rows)
            ).fetchall()
        return time.perf_counter() - t0

    def close(self) -> None:
        self.conn.close()


class PgFloor:
    def __init__(self, dsn: str) -> None:
        import psycopg

        self.conn: Any = psycopg.connect(dsn, autocommit=True, prepare_threshold=0)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS floor (run INTEGER, k INTEGER, v BYTEA,"
            " PRIMARY KEY (run, k))"
        )
        self.run = 0

    def write_txns(self, chunks: list[list[bytes]]) -> float:
        self.run += 1
        run, k = self.run, 0
        params = []
        for chunk in chunks:
            params.append((run, k, chunk))
            k += len(chunk)
        sql = (
            "INSERT INTO floor SELECT %s, %s + ord - 1, v"
            " FROM unnest(%s::bytea[]) WITH ORDINALITY AS t(v, ord)"
        )
        with self.conn.cursor() as cur:
            t0 = time.perf_counter()
            for p in params:
                cur.execute(sql, p)
            return time.perf_counter() - t0

    def read_ops(self, n: int, rows: int) -> float:
        with self.conn.cursor() as cur:
            t0 = time.perf_counter()
            for _ in range(n):
                cur.execute(
                    "SELECT v FROM floor WHERE run = %s ORDER BY k DESC LIMIT %s", (self.run, rows)
                )
                cur.fetchall()
            return time.perf_counter() - t0

    def close(self) -> None:
        self.conn.close()


def floor_metrics(
    floor: SqliteFloor | PgFloor, workload: str, size: int, checkpoints: int, payloads: list
) -> dict[str, tuple[int, float]]:
    """The floor's {metric: (units, seconds)} for one run of `workload`, matching the
    metrics warpgraph reports for it."""
    from warpgraph._cli.bench import workloads as w

    if workload == "saver-ops":
        # the checkpoint/blob payloads for the puts, the writes' for put_writes
        puts = [p for p in payloads[: len(payloads) - 3 * size]]
        writes = payloads[len(payloads) - 3 * size :]
        out = {"put": (size, floor.write_txns(split(puts, size)))}
        out["put_writes"] = (size, floor.write_txns(split(writes, size)))
        out["get_tuple"] = (size, floor.read_ops(size, 4))
        out["list"] = (size, floor.read_ops(size, w.LIST_LIMIT))
        return out
    spec = w.WORKLOADS[workload]
    seconds = floor.write_txns(split(payloads, checkpoints))
    units = {
        "chain": size + 1,
        "loop": size + 1,
        "fanout": size + 3,
        "wide-state": size + 1,
        "agent": 2 * size + 2,
        "subgraph-fanout": size,
        "storage-growth": checkpoints,
    }
    if workload == "large-graph":
        # the two graphs' runs wrote the same number of checkpoints: half each
        half = split(payloads, 2)
        steps = 2 * w.LARGE_GRAPH_VISITS + 1
        return {
            w.LARGE: (steps, floor.write_txns(split(half[0], max(1, checkpoints // 2)))),
            w.SMALL: (steps, floor.write_txns(split(half[-1], max(1, checkpoints // 2)))),
        }
    return {spec.metrics[0]: (units[workload], seconds)}
