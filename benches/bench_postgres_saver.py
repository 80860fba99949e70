"""PostgresSaver ops side by side: warpgraph vs LangGraph's PostgresSaver vs the raw psycopg floor.

Run timed:   pytest benches/bench_postgres_saver.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_postgres_saver.py   (--benchmark-disable: each op once,
             results checked against the reference; no timed assertions)

The module starts its own PostgreSQL server (tests/checkpoint/pg_server.py) with PostgreSQL's
default durability settings (fsync and synchronous_commit on), like the baseline numbers
(WARPGRAPH_BENCH_PG_FAST=1 turns them off, to see CPU cost rather than the disk).
Data: a 10-key state (5 ints, 5 ~20-char strings); put bumps every channel ("put_all") or
one ("put_one"); put_writes stores 3 writes; get_tuple / list(limit=10) read a thread of
100 checkpoints with 9 pending writes on the head.

The floor does the minimum for the same data, serialized per call by the same serializer
(values, the checkpoint without its values, the metadata as JSON): one statement = one
round trip, plain multi-row INSERTs into tables with the same keys ("step": a super-step's
writes + checkpoint), on psycopg's cheapest path (PostgreSQL $n placeholders, prepared,
one reused RawCursor: no per-call query parsing). What the saver does beyond it, by design:
the checkpoint row is an upsert (a re-put of an id replaces it, as in LangGraph) and also
carries the (channel, version) arrays and the inlined small values its one-statement
reads need; metadata gets the config's entries merged in (LangGraph's rule). Plain puts
maintain no head row (the head is max(checkpoint_id); fenced puts check it under a lock).
"""

from __future__ import annotations

import functools
import itertools
import json
import operator
import os
import uuid
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")
from bench_sqlite_saver import _cfg, _state
from checkpoint._data import checkpoint_dict
from checkpoint.pg_server import INSTALL_HINT, PgServer, create_database, find_bindir
from langgraph.checkpoint.postgres import PostgresSaver as RefSaver
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.postgres import PostgresSaver, PutOp, WritesOp

SIDES = ["warpgraph", "langgraph", "floor"]
_ids = itertools.count()
# write ops: one op per round, their inputs built before the timed runs (see `_run_each`)
WRITE_ROUNDS = 200
WRITE_WARMUP = 10


def _run_each(benchmark: Any, inputs: list, fn: Any) -> int:
    """Time `fn(x)` for the inputs, one per round (warm-up rounds first); the test's own
    input building (checkpoint dicts, ids) stays out of the timing. Returns how many
    inputs were used (one when benchmarks are disabled)."""
    todo = iter(inputs)
    benchmark.pedantic(
        lambda: fn(next(todo)),
        rounds=len(inputs) - WRITE_WARMUP,
        iterations=1,
        warmup_rounds=WRITE_WARMUP,
    )
    return len(inputs) - operator.length_hint(todo)


def _run_puts(
    benchmark: Any, env: dict, side: str, thread: str, values: dict, inputs: list, fn: Any
) -> None:
    """`_run_each` over a chain of puts (`_chain`'s inputs), then (a saver's side) check
    that the thread's latest checkpoint is the last one put, holding `values`."""
    used = _run_each(benchmark, inputs, fn)
    if side != "floor":
        tup = env[side].get_tuple(_cfg(thread))
        assert tup.checkpoint["channel_values"] == values
        assert tup.checkpoint["id"] == inputs[used - 1][1]["id"]


def _chain(
    thread: str, values: dict[str, Any], all_changed: bool, n: int = WRITE_ROUNDS + WRITE_WARMUP
) -> list[tuple]:
    """Inputs of `n` chained puts: (parent id, checkpoint, new versions, metadata)."""
    out: list[tuple] = []
    parent = None
    for version in range(1, n + 1):
        first = parent is None
        cp = _checkpoint(values, version, all_changed or first)
        new = dict(cp["channel_versions"]) if all_changed or first else {"n0": version}
        out.append((parent, cp, new, {"source": "loop", "step": version}))
        parent = cp["id"]
    return out


FLOOR_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS floor_checkpoints (thread_id TEXT, checkpoint_ns TEXT,
    checkpoint_id TEXT, parent_id TEXT, checkpoint BYTEA, metadata JSONB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))""",
    """CREATE TABLE IF NOT EXISTS floor_blobs (thread_id TEXT, checkpoint_ns TEXT, channel TEXT,
    version TEXT, blob BYTEA, PRIMARY KEY (thread_id, checkpoint_ns, channel, version))""",
    """CREATE TABLE IF NOT EXISTS floor_writes (thread_id TEXT, checkpoint_ns TEXT,
    checkpoint_id TEXT, task_id TEXT, idx INT, channel TEXT, blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))""",
]


def _checkpoint(values: dict[str, Any], version: int, all_changed: bool) -> dict[str, Any]:
    """Versions: every channel at `version`, or only n0 (the rest stay at 1)."""
    versions = {k: version if all_changed or k == "n0" else 1 for k in values}
    return checkpoint_dict(
        values,
        versions,
        versions_seen={"node": {k: max(v - 1, 1) for k, v in versions.items()}},
        updated_channels=sorted(values) if all_changed else ["n0"],
    )


def _values(n: int, width: int, first: int = 1) -> str:
    """`n` rows of `width` placeholders, numbered from $first."""
    return ", ".join(
        "(" + ", ".join(f"${first + i * width + k}" for k in range(width)) + ")" for i in range(n)
    )


@functools.lru_cache(maxsize=64)
def _floor_put_sql(n_writes: int, n_blobs: int) -> str:
    ctes = []
    if n_writes:
        ctes.append(f"w AS (INSERT INTO floor_writes VALUES {_values(n_writes, 7)})")
    if n_blobs:
        blobs = _values(n_blobs, 5, 7 * n_writes + 1)
        ctes.append(f"b AS (INSERT INTO floor_blobs VALUES {blobs} ON CONFLICT DO NOTHING)")
    k = 7 * n_writes + 5 * n_blobs
    return ("WITH " + ", ".join(ctes) + " " if ctes else "") + (
        f"INSERT INTO floor_checkpoints VALUES (${k + 1}, '', ${k + 2}, ${k + 3}, ${k + 4},"
        f" ${k + 5}::jsonb)"
    )


# the newest `limit` checkpoints of a thread with their blobs (of one version) and writes
FLOOR_GET_SQL = (
    "SELECT c.checkpoint, c.metadata,"
    " (SELECT array_agg(b.blob) FROM floor_blobs b WHERE b.thread_id = c.thread_id"
    "   AND b.checkpoint_ns = c.checkpoint_ns AND b.version = %s),"
    " (SELECT array_agg(w.blob) FROM floor_writes w WHERE w.thread_id = c.thread_id"
    "   AND w.checkpoint_id = c.checkpoint_id)"
    " FROM floor_checkpoints c WHERE c.thread_id = %s AND c.checkpoint_ns = ''"
    " ORDER BY c.checkpoint_id DESC LIMIT %s"
)


class Floor:
    """Raw psycopg: the same bytes (values, checkpoint and metadata serialized per call),
    one statement (one round trip) per op, plain multi-row INSERTs into tables with the
    same keys; no fencing, no head row, no upserts. It uses psycopg's cheapest path, as
    the saver does: SQL with PostgreSQL's $n placeholders, built once per row count, run
    prepared on one reused RawCursor (psycopg parses no query text per call)."""

    def __init__(self, conn: psycopg.Connection, serde: Any) -> None:
        self.conn = conn
        self.serde = serde
        for sql in FLOOR_SCHEMA:
            conn.execute(sql)
        self.cur = psycopg.RawCursor(conn)

    def rows(self, thread: str, checkpoint: dict, new_versions: dict) -> tuple:
        values = checkpoint["channel_values"]
        blobs = [
            (thread, "", k, str(v), self.serde.dumps_typed(values[k])[1])
            for k, v in new_versions.items()
        ]
        envelope = self.serde.dumps_typed(
            {k: v for k, v in checkpoint.items() if k != "channel_values"}
        )[1]
        return blobs, envelope

    def put(
        self,
        thread: str,
        cid: str,
        parent: str | None,
        blobs: list,
        envelope: bytes,
        metadata: dict,
        writes: list | None = None,
    ) -> None:
        params = [x for w in writes for x in w] if writes else []
        params += [x for b in blobs for x in b]
        params += [thread, cid, parent, envelope, json.dumps(metadata)]
        self.cur.execute(_floor_put_sql(len(writes or ()), len(blobs)), params)

    def put_writes(self, thread: str, cid: str, rows: list) -> None:
        self.cur.execute(
            f"INSERT INTO floor_writes VALUES {_values(len(rows), 7)}",
            [x for t, i, ch, b in rows for x in (thread, "", cid, t, i, ch, b)],
        )

    def get(self, thread: str) -> list:
        with self.conn.cursor(binary=True) as cur:
            cur.execute(FLOOR_GET_SQL, ("100", thread, self.limit))
            return cur.fetchall()

    limit = 1


@pytest.fixture(scope="module")
def pg():
    external = os.environ.get("WARPGRAPH_TEST_PG_DSN")
    if external:
        yield external
        return
    if find_bindir() is None:
        msg = f"PostgreSQL server binaries not found (`{INSTALL_HINT}`)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)
    # WARPGRAPH_BENCH_PG_FAST=1: fsync/synchronous_commit off, to see CPU cost, not the disk
    with PgServer(fast=os.environ.get("WARPGRAPH_BENCH_PG_FAST") == "1") as server:
        yield server.dsn_for(create_database(server.dsn, "bench"))


@pytest.fixture(scope="module")
def env(pg):
    kw = {"autocommit": True, "prepare_threshold": 0}
    with (
        PostgresSaver.from_conn_string(pg) as ours,
        RefSaver.from_conn_string(pg) as ref,
        psycopg.connect(pg, **kw) as raw,
    ):
        ours.setup()
        ref.setup()
        floor = Floor(raw, ours.serde)
        # a thread of 100 checkpoints with 9 pending writes on the head, on every side
        thread = f"read-{uuid.uuid4().hex}"
        parent = None
        for i in range(100):
            cp = _checkpoint({**_state(0), "n0": i}, i + 1, i == 0)
            new = dict(cp["channel_versions"]) if i == 0 else {"n0": i + 1}
            meta = {"source": "loop", "step": i}
            for s in (ours, ref):
                s.put(_cfg(thread, parent), cp, meta, new)
            blobs, env_bytes = floor.rows(thread, cp, new)
            floor.put(thread, cp["id"], parent, blobs, env_bytes, meta)
            parent = cp["id"]
        writes = [(f"w{k}", k) for k in range(9)]
        for s in (ours, ref):
            s.put_writes(_cfg(thread, parent), writes, "task")
        floor.put_writes(
            thread,
            parent,
            [("task", i, ch, ours.serde.dumps_typed(v)[1]) for i, (ch, v) in enumerate(writes)],
        )
        yield {"warpgraph": ours, "langgraph": ref, "floor": floor, "thread": thread}


def _new_thread(side: str) -> str:
    return f"{side}-{next(_ids)}-{uuid.uuid4().hex[:8]}"


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("changed", ["all", "one"])
def test_put(benchmark, env, side: str, changed: str) -> None:
    benchmark.group = f"postgres put ({changed} channels changed)"
    benchmark.extra_info.update(side=side, op="put")
    thread = _new_thread(side)
    values = _state(1)
    inputs = _chain(thread, values, changed == "all")

    def one(item: tuple) -> None:
        parent, cp, new, meta = item
        if side == "floor":
            blobs, envelope = env["floor"].rows(thread, cp, new)
            env["floor"].put(thread, cp["id"], parent, blobs, envelope, meta)
        else:
            env[side].put(_cfg(thread, parent), cp, meta, new)

    _run_puts(benchmark, env, side, thread, values, inputs, one)


@pytest.mark.parametrize("side", SIDES)
def test_put_writes(benchmark, env, side: str) -> None:
    benchmark.group = "postgres put_writes (3 writes)"
    benchmark.extra_info.update(side=side, op="put_writes")
    thread = _new_thread(side)
    writes = [("a", 1), ("b", "text value"), ("c", [1, 2, 3])]
    serde = env["warpgraph"].serde

    # a task's writes on a checkpoint of its own (as in a run: a few writes per
    # checkpoint; thousands on one id would skew the table statistics the read
    # benchmarks' plans are made from)
    inputs = [(str(uuid.uuid4()), str(uuid6())) for _ in range(WRITE_ROUNDS + WRITE_WARMUP)]

    def one(item: tuple[str, str]) -> None:
        task, cid = item
        if side == "floor":
            rows = [(task, i, ch, serde.dumps_typed(v)[1]) for i, (ch, v) in enumerate(writes)]
            env["floor"].put_writes(thread, cid, rows)
        else:
            env[side].put_writes(_cfg(thread, cid), writes, task)

    assert _run_each(benchmark, inputs, one) >= 1


def _plain(tup: Any) -> tuple:
    cp = tup.checkpoint
    return (
        cp["id"],
        cp["channel_values"],
        cp["channel_versions"],
        cp["versions_seen"],
        {k: v for k, v in tup.metadata.items()},
        sorted(tup.pending_writes),
    )


def _read(benchmark: Any, env: Any, side: str, group: str, op: str, limit: int) -> Any:
    """Name the benchmark; on the floor side, time its read of `limit` rows and return
    them (None on the other sides)."""
    benchmark.group = group
    benchmark.extra_info.update(side=side, op=op)
    if side != "floor":
        return None
    env["floor"].limit = limit
    return benchmark(env["floor"].get, env["thread"])


@pytest.mark.parametrize("side", SIDES)
def test_get_tuple(benchmark, env, side: str) -> None:
    group = "postgres get_tuple (head of 100, 9 writes)"
    rows = _read(benchmark, env, side, group, "get_tuple", 1)
    if rows is not None:
        assert len(rows) == 1 and len(rows[0][3]) == 9
        return
    thread = env["thread"]
    tup = benchmark(env[side].get_tuple, _cfg(thread))
    assert _plain(tup) == _plain(env["langgraph"].get_tuple(_cfg(thread)))


@pytest.mark.parametrize("side", SIDES)
def test_list(benchmark, env, side: str) -> None:
    rows = _read(benchmark, env, side, "postgres list(limit=10)", "list", 10)
    if rows is not None:
        assert len(rows) == 10
        return
    thread = env["thread"]
    out = benchmark(lambda: list(env[side].list(_cfg(thread), limit=10)))
    ref = list(env["langgraph"].list(_cfg(thread), limit=10))
    assert [_plain(t) for t in out] == [_plain(t) for t in ref]


@pytest.mark.parametrize("side", SIDES)
def test_step(benchmark, env, side: str) -> None:
    """One super-step's persistence: 3 writes of the finished task + the next checkpoint
    (warpgraph: put_batch, one round trip; langgraph: put_writes then put)."""
    benchmark.group = "postgres step (put_writes + put one channel)"
    benchmark.extra_info.update(side=side, op="step")
    thread = _new_thread(side)
    values = _state(1)
    writes = [("n0", 1), ("s0", "text value"), ("s1", "other")]
    serde = env["warpgraph"].serde
    inputs = [(*item, str(uuid.uuid4())) for item in _chain(thread, values, False)]

    def one(item: tuple) -> None:
        parent, cp, new, meta, task = item
        if side == "floor":
            blobs, envelope = env["floor"].rows(thread, cp, new)
            rows = [
                (thread, "", parent or "", task, i, ch, serde.dumps_typed(v)[1])
                for i, (ch, v) in enumerate(writes)
            ]
            env["floor"].put(
                thread, cp["id"], parent, blobs, envelope, meta, rows if parent else None
            )
        elif side == "warpgraph":
            ops = [PutOp(_cfg(thread, parent), cp, meta, new)]
            if parent:
                ops.insert(0, WritesOp(_cfg(thread, parent), writes, task))
            env[side].put_batch(ops)
        else:
            if parent:
                env[side].put_writes(_cfg(thread, parent), writes, task)
            env[side].put(_cfg(thread, parent), cp, meta, new)

    _run_puts(benchmark, env, side, thread, values, inputs, one)


def _stored_bytes(conn: Any, tables: list[str], thread: str) -> int:
    total = 0
    for table in tables:
        row = conn.execute(
            f"SELECT coalesce(sum(pg_column_size(t.*)), 0) AS n FROM {table} t"
            " WHERE thread_id = %s",
            [thread],
        ).fetchone()
        total += row["n"] if isinstance(row, dict) else row[0]  # LangGraph's uses dict rows
    return total


def test_bytes_per_checkpoint_when_one_small_channel_changes(env) -> None:
    """A ~200 KB state (1000 message dicts) + a counter; after the first checkpoint only the
    counter changes. Bytes stored per further checkpoint (pg_column_size of the new rows,
    i.e. as stored, after TOAST compression): the target is <= 1 KB plus the changed values."""
    messages = [
        {"role": "user", "content": f"message {i} " + "lorem ipsum " * 14} for i in range(1000)
    ]
    sizes = {}
    for side, tables in (
        ("warpgraph", ["warpgraph_checkpoints", "warpgraph_checkpoint_blobs"]),
        ("langgraph", ["checkpoints", "checkpoint_blobs"]),
    ):
        saver, thread = env[side], _new_thread(side)
        cfg = _cfg(thread)
        for i in range(21):
            cp = {
                "v": 4,
                "id": str(uuid6()),
                "ts": "2026-01-01T00:00:00+00:00",
                "channel_values": {"messages": messages, "counter": i},
                "channel_versions": {"messages": 1, "counter": i + 1},
                "versions_seen": {"node": {"counter": i}},
                "updated_channels": ["counter"],
            }
            new = {"messages": 1, "counter": 1} if i == 0 else {"counter": i + 1}
            cfg = saver.put(cfg, cp, {"source": "loop", "step": i}, new)
            if i == 0:
                first = _stored_bytes(saver.conn, tables, thread)
        sizes[side] = (first, (_stored_bytes(saver.conn, tables, thread) - first) / 20)
        assert saver.get_tuple(cfg).checkpoint["channel_values"]["messages"] == messages
    print(f"\nbytes stored: first checkpoint / each further one: {sizes}")
    state_bytes = len(env["warpgraph"].serde.dumps_typed(messages)[1])
    assert state_bytes > 150_000
    assert sizes["warpgraph"][1] <= 1024 + 16  # + the changed int's blob
