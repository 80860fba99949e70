"""The async savers side by side: warpgraph's AsyncSqliteSaver / AsyncPostgresSaver vs
LangGraph's (aiosqlite / psycopg AsyncConnection) vs the raw driver's floor from asyncio.

Run timed:   pytest benches/bench_async_savers.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_async_savers.py   (each case once, results checked)

Same data and floors as `bench_sqlite_saver.py` / `bench_postgres_saver.py`; what differs is
that every op is awaited on an event loop:
* SQLite floor: the sync floor's transaction run on one worker thread
  (`loop.run_in_executor`), the least an async caller of sqlite3 can do;
* Postgres floor: the sync floor's single statement on a psycopg `AsyncConnection`
  (prepared, on one reused `AsyncRawCursor`).
A round awaits `OPS` consecutive ops inside one `run_until_complete`: the reported time is
per block of `OPS` ops (compare sides within a group). The ops' inputs are built before the
timed runs (see `bench_sqlite_saver.py`).

pytest-benchmark runs the sides one after another, and a thread hop (~100-300 us on a busy
VM) dominates every async SQLite op, so the groups' ratios drift with the machine. The A/B
at the end of this file alternates the sides in one process instead:
    PYTHONPATH=tests .venv/bin/python benches/bench_async_savers.py [--no-postgres]
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import operator
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import aiosqlite
import bench_postgres_saver as P
import bench_sqlite_saver as S
import psycopg
import pytest
from bench_postgres_saver import pg  # noqa: F401 - the module's server fixture
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver as RefAsyncPg
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as RefAsyncSqlite
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

SIDES = ["warpgraph", "langgraph", "floor"]
OPS_NAMES = ["put_one", "put_writes", "get_tuple"]
OPS = 25  # ops per round
ROUNDS = 15
CALLS = (1 + ROUNDS) * OPS  # warm-up round + timed rounds
WRITES = [("n0", 1), ("s0", "x" * 20), ("s1", "y")]


def _blocks(benchmark: Any, loop: asyncio.AbstractEventLoop, inputs: list, afn: Any) -> int:
    """Time rounds of `OPS` awaited `afn(x)` over the inputs; returns how many were used."""
    todo = iter(inputs)

    async def block() -> Any:
        out = None
        for _ in range(OPS):
            out = await afn(next(todo))
        return out

    benchmark.pedantic(
        lambda: loop.run_until_complete(block()), rounds=ROUNDS, iterations=1, warmup_rounds=1
    )
    return len(inputs) - operator.length_hint(todo)


@pytest.fixture
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


# --- SQLite --------------------------------------------------------------------------------
class _SqliteFloor:
    """The sync floor, each op on one worker thread."""

    def __init__(self, path: str) -> None:
        self.floor = S.Floor(S._connect(path))
        self.pool = ThreadPoolExecutor(max_workers=1)

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def aput(self, config, checkpoint, metadata, new_versions) -> Any:
        return await self._run(self.floor.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id) -> None:
        await self._run(self.floor.put_writes, config, writes, task_id)

    async def aget_tuple(self, config) -> Any:
        return await self._run(self.floor.get_tuple, config)


async def _sqlite_side(side: str, path: str, stack: contextlib.AsyncExitStack) -> Any:
    if side == "floor":
        floor = _SqliteFloor(path)
        stack.callback(floor.pool.shutdown)
        return floor
    if side == "warpgraph":
        saver = AsyncSqliteSaver(S._connect(path))
        stack.callback(saver.conn.close)
        stack.callback(saver._runner.close)  # (runs first: its thread uses the connection)
    else:
        conn = await aiosqlite.connect(path)
        stack.push_async_callback(conn.close)
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "busy_timeout = 30000"):
            await conn.execute(f"PRAGMA {pragma}")
        saver = RefAsyncSqlite(conn)
    await saver.setup()
    return saver


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("op", OPS_NAMES)
def test_async_sqlite(benchmark, tmp_path, loop, op: str, side: str) -> None:
    benchmark.group = f"async-sqlite-{op}"
    benchmark.extra_info.update(side=side, op=op, ops_per_round=OPS)
    data = S.Side("floor", tmp_path)  # (only its input builders are used)
    thread = f"th-{uuid.uuid4().hex[:8]}"
    with contextlib.ExitStack() as sync_stack:
        stack = contextlib.AsyncExitStack()
        sync_stack.callback(lambda: loop.run_until_complete(stack.aclose()))
        saver = loop.run_until_complete(_sqlite_side(side, str(tmp_path / "a.db"), stack))

        async def fill() -> Any:  # 100 checkpoints, 9 writes on the head
            config = None
            for item in data.put_items(thread, None, True, 100):
                config = await saver.aput(*item)
            await saver.aput_writes(config, [(f"n{k}", k) for k in range(9)], "task")
            return config

        head = loop.run_until_complete(fill())
        if op == "put_one":
            inputs: list = data.put_items(thread, head, False, CALLS)
            used = _blocks(benchmark, loop, inputs, lambda item: saver.aput(*item))
            want = inputs[used - 1][1]["channel_values"]
        elif op == "put_writes":
            inputs = [(head, WRITES, f"task-{i}") for i in range(CALLS)]
            used = _blocks(benchmark, loop, inputs, lambda item: saver.aput_writes(*item))
            want = S._state(101)
        else:
            inputs = [S._cfg(thread)] * CALLS
            used = _blocks(benchmark, loop, inputs, saver.aget_tuple)
            want = S._state(101)
        got = loop.run_until_complete(saver.aget_tuple(S._cfg(thread)))
        values = got[0]["channel_values"] if side == "floor" else got.checkpoint["channel_values"]
        assert used >= OPS and values == want


# --- Postgres ------------------------------------------------------------------------------
class _PgFloor:
    """The sync floor's statements on a psycopg AsyncConnection."""

    def __init__(self, conn: psycopg.AsyncConnection, serde: Any) -> None:
        self.conn = conn
        self.serde = serde
        self.cur = psycopg.AsyncRawCursor(conn)

    rows = P.Floor.rows

    async def put(self, thread, cid, parent, blobs, envelope, metadata) -> None:
        params = [x for b in blobs for x in b]
        params += [thread, cid, parent, envelope, json.dumps(metadata)]
        await self.cur.execute(P._floor_put_sql(0, len(blobs)), params)

    async def put_writes(self, thread: str, cid: str, rows: list) -> None:
        await self.cur.execute(
            f"INSERT INTO floor_writes VALUES {P._values(len(rows), 7)}",
            [x for t, i, ch, b in rows for x in (thread, "", cid, t, i, ch, b)],
        )

    async def get(self, thread: str) -> list:
        async with self.conn.cursor(binary=True) as cur:
            await cur.execute(P.FLOOR_GET_SQL, ("1", thread, 1))
            return await cur.fetchall()


async def _pg_sides(dsn: str, stack: contextlib.AsyncExitStack) -> dict[str, Any]:
    """The three Postgres sides on `dsn`, closed by `stack`."""
    ours = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(dsn))
    ref = await stack.enter_async_context(RefAsyncPg.from_conn_string(dsn))
    raw = await psycopg.AsyncConnection.connect(dsn, autocommit=True, prepare_threshold=0)
    stack.push_async_callback(raw.close)
    await ours.setup()
    await ref.setup()
    for sql in P.FLOOR_SCHEMA:
        await raw.execute(sql)
    return {"warpgraph": ours, "langgraph": ref, "floor": _PgFloor(raw, ours.serde)}


@pytest.fixture
def pg_sides(pg, loop):  # noqa: F811 - `pg` is the imported fixture
    stack = contextlib.AsyncExitStack()
    yield loop.run_until_complete(_pg_sides(pg, stack))
    loop.run_until_complete(stack.aclose())


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize("op", OPS_NAMES)
def test_async_postgres(benchmark, loop, pg_sides, op: str, side: str) -> None:
    benchmark.group = f"async-postgres-{op}"
    benchmark.extra_info.update(side=side, op=op, ops_per_round=OPS)
    saver = pg_sides[side]
    thread = f"{side}-{uuid.uuid4().hex[:12]}"
    values = P._state(1)
    chain = P._chain(thread, values, False, CALLS + 1)

    async def put(item: tuple) -> None:
        parent, cp, new, meta = item
        if side == "floor":
            blobs, envelope = saver.rows(thread, cp, new)
            await saver.put(thread, cp["id"], parent, blobs, envelope, meta)
        else:
            await saver.aput(P._cfg(thread, parent), cp, meta, new)

    head = chain[0]
    loop.run_until_complete(put(head))  # the first checkpoint stores every channel
    head_id = head[1]["id"]
    if op == "put_one":
        used = 1 + _blocks(benchmark, loop, chain[1 : CALLS + 1], put)
        assert used > OPS
        last_id = chain[used - 1][1]["id"]
    elif op == "put_writes":

        async def put_writes(task: str) -> None:
            if side == "floor":
                rows = [
                    (task, i, ch, saver.serde.dumps_typed(v)[1]) for i, (ch, v) in enumerate(WRITES)
                ]
                await saver.put_writes(thread, head_id, rows)
            else:
                await saver.aput_writes(P._cfg(thread, head_id), WRITES, task)

        tasks = [str(uuid.uuid4()) for _ in range(CALLS)]
        used = _blocks(benchmark, loop, tasks, put_writes)
        assert used >= OPS
        last_id = head_id
    else:

        async def get(_: Any) -> Any:
            if side == "floor":
                return await saver.get(thread)
            return await saver.aget_tuple(P._cfg(thread))

        used = _blocks(benchmark, loop, [None] * CALLS, get)
        assert used >= OPS
        last_id = head_id
    if side != "floor":
        tup = loop.run_until_complete(saver.aget_tuple(P._cfg(thread)))
        assert tup.checkpoint["id"] == last_id and tup.checkpoint["channel_values"] == values
        if op == "put_writes":  # every task's 3 writes, on the head
            assert sorted(tup.pending_writes) == sorted(
                (task, *w) for task in tasks[:used] for w in WRITES
            )


# --- A/B: the sides alternating in one process ---------------------------------------------
def _ab(turns: int = 12, ops: int = 200) -> None:
    """Print median µs per op of put / put_writes per side, the sides taking turns (so a
    slow phase of the machine hits them alike):
    `PYTHONPATH=tests .venv/bin/python benches/bench_async_savers.py [--no-postgres]`."""
    import statistics
    import sys
    import tempfile
    import time
    from pathlib import Path

    from checkpoint.pg_server import PgServer, create_database

    async def sqlite_turns(tmp: Path, stack: contextlib.AsyncExitStack) -> dict[str, list]:
        sides = {n: await _sqlite_side(n, str(tmp / f"{n}.db"), stack) for n in SIDES}
        data = S.Side("floor", tmp)
        heads: dict[str, Any] = {}
        for n, saver in sides.items():
            for item in data.put_items(n, None, True, 10):
                heads[n] = await saver.aput(*item)
        out: dict[str, list] = {f"{n} {op}": [] for n in sides for op in ("put", "put_writes")}
        for _ in range(turns):
            for n, saver in sides.items():
                items = data.put_items(n, heads[n], False, ops)
                t0 = time.perf_counter()
                for item in items:
                    await saver.aput(*item)
                out[f"{n} put"].append((time.perf_counter() - t0) / ops * 1e6)
                heads[n] = S._cfg(n, items[-1][1]["id"])
                t0 = time.perf_counter()
                for i in range(ops):
                    await saver.aput_writes(heads[n], WRITES, f"ab-{uuid.uuid4()}")
                out[f"{n} put_writes"].append((time.perf_counter() - t0) / ops * 1e6)
        return out

    async def pg_turns(dsn: str, stack: contextlib.AsyncExitStack) -> dict[str, list]:
        sides = await _pg_sides(dsn, stack)
        out: dict[str, list] = {f"{n} {op}": [] for n in sides for op in ("put", "put_writes")}
        for _ in range(turns):
            for n, saver in sides.items():
                thread = f"ab-{n}-{uuid.uuid4().hex[:8]}"
                chain = P._chain(thread, P._state(1), False, ops + 1)
                t0 = time.perf_counter()
                for parent, cp, new, meta in chain[1:]:
                    if n == "floor":
                        blobs, envelope = saver.rows(thread, cp, new)
                        await saver.put(thread, cp["id"], parent, blobs, envelope, meta)
                    else:
                        await saver.aput(P._cfg(thread, parent), cp, meta, new)
                out[f"{n} put"].append((time.perf_counter() - t0) / ops * 1e6)
                cid = chain[-1][1]["id"]
                t0 = time.perf_counter()
                for _ in range(ops):
                    task = str(uuid.uuid4())
                    if n == "floor":
                        rows = [
                            (task, i, ch, saver.serde.dumps_typed(v)[1])
                            for i, (ch, v) in enumerate(WRITES)
                        ]
                        await saver.put_writes(thread, cid, rows)
                    else:
                        await saver.aput_writes(P._cfg(thread, cid), WRITES, task)
                out[f"{n} put_writes"].append((time.perf_counter() - t0) / ops * 1e6)
        return out

    def show(title: str, out: dict[str, list]) -> None:
        med = {k: statistics.median(v) for k, v in out.items()}
        print(title)
        for k, v in med.items():
            op = k.split(" ")[1]
            print(f"  {k:24s} {v:7.0f} us  ({v / med[f'floor {op}']:.2f}x floor)")

    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as tmp:
        stack = contextlib.AsyncExitStack()
        show("async SQLite", loop.run_until_complete(sqlite_turns(Path(tmp), stack)))
        loop.run_until_complete(stack.aclose())
    if "--no-postgres" not in sys.argv:
        with PgServer() as server:
            dsn = server.dsn_for(create_database(server.dsn, "ab"))
            stack = contextlib.AsyncExitStack()
            show("async Postgres", loop.run_until_complete(pg_turns(dsn, stack)))
            loop.run_until_complete(stack.aclose())
    loop.close()


if __name__ == "__main__":
    _ab()
