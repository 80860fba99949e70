"""SqliteSaver ops side by side: warpgraph vs LangGraph's SqliteSaver vs the raw sqlite3 floor.

Run timed:   pytest benches/bench_sqlite_saver.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_sqlite_saver.py   (--benchmark-disable: each op once,
             results checked against the reference; no timed assertions)

Every side gets a file database in a temp dir with the same settings (WAL,
synchronous=NORMAL, busy timeout). Data: a 10-key state (5 ints, 5 ~20-char strings); put
bumps every channel ("put_all") or one ("put_one"); put_writes stores 3 writes; "step" is a
super-step: 3 writes + the next checkpoint (one transaction where the side allows it);
get_tuple / list(limit=10) read a thread of 100 checkpoints with 9 pending writes on the
head; "puts50" stores 50 checkpoints with 50 puts (a transaction each) and "group_commit"
the same 50 through warpgraph's group-commit writer (`shared_writer()`, the one graph runs
use with durability="async"; floor: one transaction; LangGraph: no batching, 50 puts
again); both with synchronous=FULL (every commit is durable). The floor does the minimum for the
same bytes: serialize with the same serializer, plain INSERTs, one transaction per op.
`test_bytes_per_checkpoint` reports stored bytes per checkpoint for a ~200 KB state where
one small channel changes.

Timing of the single-op writes (put_all, put_one, put_writes, step): each benchmark round
is a block of `OPS_PER_ROUND` consecutive ops (the reported time is per op), so the WAL
checkpoints SQLite runs every ~1000 pages written fall inside the rounds; with one op per
round the median would leave them out, in proportion to how many pages a side writes (see
benches/bench_graph_savers.py). Reads and the 50-checkpoint ops keep one call per round.
The inputs of the write ops (checkpoints, configs, writes) are built before the timed runs:
building one of the test's checkpoints costs about as much as the floor's whole put, and
counting it on both sides would pull every ratio towards 1.
"""

from __future__ import annotations

import itertools
import operator
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver as RefSaver
from warpgraph.checkpoint._sql import PutOp, WritesOp
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.sqlite import SqliteSaver

# the checkpoint inputs shared with the savers' tests (tests/checkpoint/_data.py): pytest
# has tests/ on the path (conftest.py), the A/B scripts importing this module need it too
sys.path.append(str(Path(__file__).resolve().parents[1] / "tests"))
from checkpoint._data import checkpoint_dict, stored_bytes

SIDES = ["warpgraph", "langgraph", "floor"]
OPS_PER_ROUND = 50  # see the module doc (Timing)
SINGLE_ROUNDS = 20
BATCH_ROUNDS = 15
_ids = itertools.count()
SERDE = JsonPlusSerializer()

FLOOR_SCHEMA = [
    (
        "CREATE TABLE IF NOT EXISTS floor_checkpoints (thread_id TEXT, checkpoint_ns TEXT, "
        "checkpoint_id TEXT, parent_id TEXT, type TEXT, checkpoint BLOB, metadata TEXT, "
        "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS floor_blobs (thread_id TEXT, checkpoint_ns TEXT, channel TEXT, "
        "version TEXT, type TEXT, blob BLOB, PRIMARY KEY (thread_id, checkpoint_ns, channel, version))"
    ),
    (
        "CREATE TABLE IF NOT EXISTS floor_writes (thread_id TEXT, checkpoint_ns TEXT, "
        "checkpoint_id TEXT, task_id TEXT, idx INT, channel TEXT, type TEXT, blob BLOB, "
        "PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))"
    ),
]


def _connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def _state(i: int) -> dict[str, Any]:
    values: dict[str, Any] = {f"n{k}": i + k for k in range(5)}
    values.update({f"s{k}": f"value-{i:06d}-{k}-abcdefgh" for k in range(5)})
    return values


def _version(n: int) -> str:
    return f"{n:032}.{0.123456789:016}"


def _checkpoint(values: dict[str, Any], n: int, all_changed: bool, base: int = 1) -> dict[str, Any]:
    """Versions: every channel at n, or only n0 at n and the rest at `base`."""
    versions = {k: _version(n if all_changed or k == "n0" else base) for k in values}
    return checkpoint_dict(
        values,
        versions,
        versions_seen={"node": dict(versions)},
        updated_channels=sorted(values) if all_changed else ["n0"],
    )


def _cfg(thread: str, checkpoint_id: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


class Floor:
    """Raw sqlite3: serialize with the same serializer, plain INSERTs, one transaction."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        for stmt in FLOOR_SCHEMA:
            conn.execute(stmt)

    def _put_rows(self, config: dict, checkpoint: dict, metadata: dict, new_versions: dict):
        conf = config["configurable"]
        thread, ns = conf["thread_id"], conf["checkpoint_ns"]
        values = checkpoint["channel_values"]
        blobs = [
            (thread, ns, k, str(v), *SERDE.dumps_typed(values[k]))
            for k, v in new_versions.items()
            if k in values
        ]
        envelope = SERDE.dumps_typed({k: v for k, v in checkpoint.items() if k != "channel_values"})
        meta = SERDE.dumps_typed(metadata)[1]
        row = (thread, ns, checkpoint["id"], conf.get("checkpoint_id"), *envelope, meta)
        return blobs, row

    def _insert(self, blobs: list, row: tuple, writes: list) -> None:
        c = self.conn
        if blobs:
            c.executemany("INSERT OR REPLACE INTO floor_blobs VALUES (?, ?, ?, ?, ?, ?)", blobs)
        if row:
            c.execute("INSERT OR REPLACE INTO floor_checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        if writes:
            c.executemany(
                "INSERT OR IGNORE INTO floor_writes VALUES (?, ?, ?, ?, ?, ?, ?, ?)", writes
            )

    def _writes(self, config: dict, writes: list, task_id: str) -> list:
        conf = config["configurable"]
        return [
            (
                conf["thread_id"],
                conf["checkpoint_ns"],
                conf["checkpoint_id"],
                task_id,
                i,
                ch,
                *SERDE.dumps_typed(v),
            )
            for i, (ch, v) in enumerate(writes)
        ]

    def put(self, config, checkpoint, metadata, new_versions) -> dict:
        blobs, row = self._put_rows(config, checkpoint, metadata, new_versions)
        self.conn.execute("BEGIN")
        self._insert(blobs, row, [])
        self.conn.execute("COMMIT")
        return _cfg(config["configurable"]["thread_id"], checkpoint["id"])

    def put_writes(self, config, writes, task_id, task_path="") -> None:
        rows = self._writes(config, writes, task_id)
        self.conn.execute("BEGIN")
        self._insert([], (), rows)
        self.conn.execute("COMMIT")

    def step(self, config, writes, task_id, checkpoint, metadata, new_versions) -> dict:
        rows = self._writes(config, writes, task_id)
        blobs, row = self._put_rows(config, checkpoint, metadata, new_versions)
        self.conn.execute("BEGIN")
        self._insert(blobs, row, rows)
        self.conn.execute("COMMIT")
        return _cfg(config["configurable"]["thread_id"], checkpoint["id"])

    def many(self, items: list) -> None:
        prepared = [self._put_rows(*item) for item in items]
        self.conn.execute("BEGIN")
        for blobs, row in prepared:
            self._insert(blobs, row, [])
        self.conn.execute("COMMIT")

    def get_tuple(self, config) -> Any:
        conf = config["configurable"]
        row = self.conn.execute(
            "SELECT checkpoint_id, type, checkpoint, metadata FROM floor_checkpoints WHERE "
            "thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1",
            (conf["thread_id"],),
        ).fetchone()
        cp = SERDE.loads_typed((row[1], row[2]))
        vals = {}
        for ch, ver in cp["channel_versions"].items():
            b = self.conn.execute(
                "SELECT type, blob FROM floor_blobs WHERE thread_id = ? AND checkpoint_ns = '' "
                "AND channel = ? AND version = ?",
                (conf["thread_id"], ch, str(ver)),
            ).fetchone()
            if b:
                vals[ch] = SERDE.loads_typed(b)
        writes = [
            (t, ch, SERDE.loads_typed((ty, b)))
            for t, ch, ty, b in self.conn.execute(
                "SELECT task_id, channel, type, blob FROM floor_writes WHERE thread_id = ? AND "
                "checkpoint_ns = '' AND checkpoint_id = ?",
                (conf["thread_id"], row[0]),
            )
        ]
        return {**cp, "channel_values": vals}, writes


class Side:
    """One side of the comparison with the same operations."""

    def __init__(self, name: str, tmp_path) -> None:
        self.name = name
        conn = _connect(str(tmp_path / f"{name}-{next(_ids)}.db"))
        if name == "warpgraph":
            self.saver: Any = SqliteSaver(conn)
            self.saver.setup()
        elif name == "langgraph":
            self.saver = RefSaver(conn)
            self.saver.setup()
        else:
            self.saver = Floor(conn)
        self.conn = conn
        self.n = 1
        self.base = 1  # version (and state index) of the channels not bumped since

    def values(self) -> dict[str, Any]:
        """What the latest checkpoint holds: _state(base) with n0 from step n."""
        return {**_state(self.base), "n0": self.n}

    def next_checkpoint(self, all_changed: bool) -> tuple[dict, dict]:
        self.n += 1
        if all_changed:
            self.base = self.n
        cp = _checkpoint(self.values(), self.n, all_changed, self.base)
        new = cp["channel_versions"] if all_changed else {"n0": cp["channel_versions"]["n0"]}
        return cp, new

    def put_items(
        self, thread: str, config: dict | None, all_changed: bool, n: int
    ) -> list[tuple[dict, dict, dict, dict]]:
        """`n` chained puts `(config, checkpoint, metadata, new_versions)`, each the parent
        of the next; built before the timed runs, which then time only the saver."""
        items = []
        for _ in range(n):
            cp, new = self.next_checkpoint(all_changed)
            items.append((config or _cfg(thread), cp, {"source": "loop", "step": self.n}, new))
            config = _cfg(thread, cp["id"])
        return items

    def put(self, thread: str, config: dict | None, all_changed: bool) -> dict:
        (item,) = self.put_items(thread, config, all_changed, 1)
        return self.saver.put(*item)

    def step_items(self, thread: str, config: dict, n: int) -> list[tuple]:
        """`n` chained super-steps `(config, writes, task_id, checkpoint, metadata,
        new_versions)`: the task's 3 writes on `config`'s checkpoint, then the next one."""
        return [
            (cfg, [("n0", md["step"]), ("s0", "x" * 20), ("s1", "y")], f"task-{md['step']}", *rest)
            for cfg, *rest in self.put_items(thread, config, False, n)
            for md in [rest[1]]
        ]

    def step(self, config, writes, task, cp, md, new) -> Any:
        if self.name == "warpgraph":
            return self.saver.put_batch(
                [WritesOp(config, writes, task), PutOp(config, cp, md, new)]
            )[1]
        if self.name == "floor":
            return self.saver.step(config, writes, task, cp, md, new)
        self.saver.put_writes(config, writes, task)
        return self.saver.put(config, cp, md, new)

    def fill(self, thread: str) -> dict:
        config = None
        for _ in range(100):
            config = self.put(thread, config, True)
        self.saver.put_writes(config, [(f"n{k}", k) for k in range(9)], "task")
        return config


OPS = ["put_all", "put_one", "put_writes", "step", "get_tuple", "list10", "puts50", "group_commit"]


@pytest.mark.parametrize(
    ("op", "side"),
    # (the floor has no list)
    [(op, side) for op in OPS for side in SIDES if not (op == "list10" and side == "floor")],
)
def test_bench_sqlite(benchmark, tmp_path, op, side) -> None:
    s = Side(side, tmp_path)
    benchmark.group = f"sqlite-{op}"
    benchmark.extra_info.update(side=side, op=op)
    thread = f"th-{next(_ids)}"
    head = s.fill(thread) if op != "put_all" else None
    state: dict[str, Any] = {}

    # every op's input is built before the timed runs (building a checkpoint costs about
    # as much as the floor's put); a run takes the next one
    single = op in ("put_all", "put_one", "put_writes", "step")
    # (warm-up and timed rounds; pytest-benchmark then calls once more for the result)
    calls = (1 + SINGLE_ROUNDS) * OPS_PER_ROUND + 1 if single else 2 + BATCH_ROUNDS
    if op in ("put_all", "put_one"):
        inputs = s.put_items(thread, head, op == "put_all", calls)
        todo = iter(inputs)

        def run():
            s.saver.put(*next(todo))
    elif op == "put_writes":
        writes = [("n0", 1), ("s0", "x" * 20), ("s1", "y")]
        inputs = [(head, writes, f"task-{next(_ids)}") for _ in range(calls)]
        todo = iter(inputs)

        def run():
            s.saver.put_writes(*next(todo))
    elif op == "step":
        inputs = s.step_items(thread, head, calls)
        todo = iter(inputs)

        def run():
            s.step(*next(todo))
    elif op == "get_tuple":

        def run():
            return s.saver.get_tuple(_cfg(thread))
    elif op == "list10":

        def run():
            return list(s.saver.list(_cfg(thread), limit=10))
    else:  # 50 chained checkpoints per run
        inputs = []
        config = head
        for _ in range(calls):
            inputs.append(s.put_items(thread, config, False, 50))
            config = _cfg(thread, inputs[-1][-1][1]["id"])
        todo = iter(inputs)

        def run():
            items = next(todo)
            if op == "puts50":  # 50 durable puts, one transaction each
                for item in items:
                    s.saver.put(*item)
            elif side == "warpgraph":
                futs = [writer.put(*item) for item in items]
                writer.flush()
                assert all(f.result() for f in futs)
            elif side == "floor":
                s.saver.many(items)
            else:
                for item in items:
                    s.saver.put(*item)

    # the group-commit writer graph runs use with durability="async"
    writer = s.saver.shared_writer() if op == "group_commit" and side == "warpgraph" else None
    if op in ("puts50", "group_commit"):  # a durable commit: fsync the WAL on each commit
        s.conn.execute("PRAGMA synchronous = FULL")
    if single:
        result = benchmark.pedantic(
            run, rounds=SINGLE_ROUNDS, iterations=OPS_PER_ROUND, warmup_rounds=1
        )
    elif op in ("get_tuple", "list10"):
        result = benchmark(run)
    else:
        result = benchmark.pedantic(run, rounds=BATCH_ROUNDS, iterations=1, warmup_rounds=1)
    if writer is not None:
        writer.flush()
    if op not in ("get_tuple", "list10"):  # what the last run stored is the head now
        done = len(inputs) - operator.length_hint(todo)
        last = inputs[done - 1]
        if op not in ("put_all", "put_one", "step"):
            last = last[-1] if op != "put_writes" else None
        if last is not None:
            cp, md = (last[3], last[4]) if op == "step" else (last[1], last[2])
            state["values"], state["step"] = cp["channel_values"], md["step"]
    # check the side did the op correctly (first principles / against the reference)
    if op == "get_tuple":
        if side == "floor":
            cp, writes = result
            assert cp["channel_values"] == _state(101)
            assert len(writes) == 9
        else:
            assert result.checkpoint["channel_values"] == _state(101)
            assert len(result.pending_writes) == 9
    elif op == "list10":
        assert len(result) == 10
        assert [t.metadata["step"] for t in result] == list(range(101, 91, -1))
    elif side != "floor":
        tup = s.saver.get_tuple(_cfg(thread))
        if op == "put_writes":  # on the head `fill` made
            assert tup.checkpoint["channel_values"] == _state(101)
            task = inputs[done - 1][2]
            assert all((task, *w) in tup.pending_writes for w in writes)
        else:
            assert tup.checkpoint["channel_values"] == state["values"]
            assert tup.metadata["step"] == state["step"]
        if op == "step":
            n = state["step"]
            parent = s.saver.get_tuple(tup.parent_config)
            assert parent.pending_writes[-3:] == [
                (f"task-{n}", "n0", n),
                (f"task-{n}", "s0", "x" * 20),
                (f"task-{n}", "s1", "y"),
            ]


def _big_messages() -> list[dict]:
    return [{"role": "user", "content": f"message {i} " + "lorem ipsum " * 12} for i in range(1000)]


TABLES = {
    "warpgraph": {"wg_checkpoints": ["checkpoint", "metadata"], "wg_blobs": ["blob"]},
    "langgraph": {"checkpoints": ["checkpoint", "metadata"]},
    "floor": {"floor_checkpoints": ["checkpoint", "metadata"], "floor_blobs": ["blob"]},
}


@pytest.mark.parametrize("side", SIDES)
def test_bytes_per_checkpoint(benchmark, tmp_path, side) -> None:
    """Stored bytes per checkpoint, ~200 KB state, only the small `counter` changes."""
    s = Side(side, tmp_path)
    messages = _big_messages()
    changed = len(SERDE.dumps_typed(0)[1])
    sizes = []
    config = _cfg("big")
    for step in range(20):
        versions = {"messages": _version(1), "counter": _version(step + 2)}
        new = versions if step == 0 else {"counter": versions["counter"]}
        cp = checkpoint_dict(
            {"messages": messages, "counter": step},
            versions,
            versions_seen={"node": {"counter": versions["counter"]}},
            updated_channels=["counter"],
        )
        before = stored_bytes(s.conn, TABLES[side])
        config = s.saver.put(config, cp, {"source": "loop", "step": step, "parents": {}}, new)
        sizes.append(stored_bytes(s.conn, TABLES[side]) - before)
    per = sum(sizes[1:]) / len(sizes[1:])
    benchmark.group = "sqlite-bytes-per-checkpoint"
    benchmark.extra_info.update(side=side, bytes_first=sizes[0], bytes_per_checkpoint=per)
    benchmark(lambda: per)
    print(f"\n{side}: first checkpoint {sizes[0]} B, then {per:.0f} B per checkpoint")
    if side == "warpgraph":
        assert per <= 1024 + changed
    if side == "langgraph":
        assert per >= len(SERDE.dumps_typed(messages)[1])
