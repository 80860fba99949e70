"""Concurrency on a real PostgreSQL server: pool-backed savers are not serialised, and write
fencing lets exactly one of two racing processes append to a thread.

Non-serialisation is shown without timing: a session holds a SHARE lock on the checkpoints
table, so every put blocks inside the server; all N puts must be waiting there at the same
time (seen in pg_stat_activity) before the lock is released.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import threading
import time
import uuid
from typing import Any

import pytest

psycopg = pytest.importorskip("psycopg")
from warpgraph.checkpoint._sql import (
    CONFIG_KEY_EXPECTED_HEAD,
    CheckpointConflictError,
    PutOp,
    WritesOp,
)
from warpgraph.checkpoint.base import uuid6
from warpgraph.checkpoint.postgres import PostgresSaver
from warpgraph.checkpoint.postgres._schema import BLOBS, CHECKPOINTS, FENCE_HEAD
from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

N = 6
WAIT_LIMIT_S = 60  # liveness bound only: the assertion is on the count, never on time


def _checkpoint(n: int) -> dict:
    return {
        "v": 4,
        "id": str(uuid6()),
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"n": n},
        "channel_versions": {"n": n + 1},
        "versions_seen": {},
        "updated_channels": None,
    }


def _cfg(thread: str, checkpoint_id: str | None = None, **extra) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": "", **extra}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def _waiting_puts(admin: psycopg.Connection) -> int:
    return admin.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND query LIKE %s AND pid <> pg_backend_pid()",
        [f"%INSERT INTO {CHECKPOINTS} (%"],
    ).fetchone()[0]


class _Blocker:
    """Holds SHARE on the checkpoints table so inserts wait inside the server."""

    def __init__(self, dsn: str) -> None:
        self.conn = psycopg.connect(dsn)
        self.conn.execute(f"LOCK TABLE {CHECKPOINTS} IN SHARE MODE")
        self.admin = psycopg.connect(dsn, autocommit=True)

    def wait_for(self, count: int) -> int:
        seen = 0
        deadline = time.monotonic() + WAIT_LIMIT_S
        while time.monotonic() < deadline:
            seen = _waiting_puts(self.admin)
            if seen >= count:
                break
            time.sleep(0.05)
        return seen

    def release(self) -> None:
        self.conn.rollback()
        self.conn.close()
        self.admin.close()


def test_pool_saver_runs_puts_from_many_threads_concurrently(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=N) as saver:
        saver.setup()
        prefix = uuid.uuid4().hex
        results: list = [None] * N
        blocker = _Blocker(pg_dsn)

        def put(i: int) -> None:
            try:
                results[i] = saver.put(_cfg(f"{prefix}-{i}"), _checkpoint(i), {}, {"n": i + 1})
            except BaseException as exc:  # noqa: BLE001
                results[i] = exc

        threads = [threading.Thread(target=put, args=(i,)) for i in range(N)]
        try:
            for t in threads:
                t.start()
            in_flight = blocker.wait_for(N)
        finally:
            blocker.release()
            for t in threads:
                t.join()
        assert in_flight == N  # all N puts were inside the server at once
        for i, res in enumerate(results):
            assert res == _cfg(f"{prefix}-{i}", res["configurable"]["checkpoint_id"]), res
            assert saver.get_tuple(res).checkpoint["channel_values"] == {"n": i}


async def test_async_pool_saver_runs_puts_concurrently(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pool_size=N) as saver:
        await saver.setup()
        await saver.conn.wait()  # open the pool's connections before blocking the table
        prefix = uuid.uuid4().hex
        blocker = _Blocker(pg_dsn)
        try:
            puts = [
                asyncio.create_task(
                    saver.aput(_cfg(f"{prefix}-{i}"), _checkpoint(i), {}, {"n": i + 1})
                )
                for i in range(N)
            ]
            in_flight = await asyncio.to_thread(blocker.wait_for, N)
        finally:
            blocker.release()
        results = await asyncio.gather(*puts)
        assert in_flight == N
        for i, res in enumerate(results):
            assert (await saver.aget_tuple(res)).checkpoint["channel_values"] == {"n": i}


# --- write fencing -----------------------------------------------------------------------


def test_fenced_put_semantics(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
        t = uuid.uuid4().hex
        # a run that expects an empty thread
        c1 = saver.put(_cfg(t, **{CONFIG_KEY_EXPECTED_HEAD: None}), _checkpoint(0), {}, {"n": 1})
        head1 = c1["configurable"]["checkpoint_id"]
        with pytest.raises(CheckpointConflictError) as err:
            saver.put(_cfg(t), _checkpoint(9), {}, {"n": 10}, expected_head=None)
        assert (err.value.expected, err.value.actual) == (None, head1)
        c2 = saver.put(c1, _checkpoint(1), {}, {"n": 2}, expected_head=head1)
        head2 = c2["configurable"]["checkpoint_id"]
        # a stale expectation stores nothing (no checkpoint row, no blob)
        stale = _checkpoint(7)
        with pytest.raises(CheckpointConflictError, match="another run wrote"):
            saver.put(c1, stale, {}, {"n": 99}, expected_head=head1)
        assert saver.get_tuple(_cfg(t, stale["id"])) is None
        assert (
            saver.conn.execute(
                f"SELECT count(*) FROM {BLOBS} WHERE thread_id = %s AND version = '99'", [t]
            ).fetchone()[0]
            == 0
        )
        # time travel: fork from the old checkpoint while expecting the current head
        c3 = saver.put(c1, _checkpoint(2), {"source": "fork"}, {"n": 3}, expected_head=head2)
        tup = saver.get_tuple(_cfg(t))
        assert tup.config == c3 and tup.parent_config == c1
        # plain puts (no expectation) are unaffected
        saver.put(c1, _checkpoint(3), {}, {"n": 4})
        with pytest.raises(ValueError, match="expected head"):
            saver.put(c1, _checkpoint(4), {}, {"n": 5}, expected_head=123)


def _waiting(admin: psycopg.Connection, pattern: str, count: int) -> int:
    """Poll until `count` sessions whose query matches `pattern` wait for a lock."""
    seen = 0
    deadline = time.monotonic() + WAIT_LIMIT_S
    while time.monotonic() < deadline:
        seen = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND query LIKE %s AND pid <> pg_backend_pid()",
            [pattern],
        ).fetchone()[0]
        if seen >= count:
            break
        time.sleep(0.02)
    return seen


def test_conflict_reports_the_head_that_won_a_real_race(pg_dsn: str) -> None:
    """Two writers, one thread, the same expected head, truly concurrent: A has passed the
    fence check and is held inside its statement (its checkpoint insert waits for a
    blocker's uncommitted row) while B's statement waits for A's fence lock. When A commits, B
    fails, and its error names A's checkpoint as the actual head, not the stale one B's
    statement started from."""
    with (
        PostgresSaver.from_conn_string(pg_dsn) as a,
        PostgresSaver.from_conn_string(pg_dsn) as b,
        psycopg.connect(pg_dsn) as blocker,
        psycopg.connect(pg_dsn, autocommit=True) as admin,
    ):
        a.setup()
        t = uuid.uuid4().hex
        head = a.put(_cfg(t), _checkpoint(0), {}, {"n": 1})["configurable"]["checkpoint_id"]
        cp_a, cp_b = _checkpoint(1), _checkpoint(2)
        blocker.execute(  # an uncommitted row with A's key: A's insert waits for it
            f"INSERT INTO {CHECKPOINTS} (thread_id, checkpoint_ns, checkpoint_id, type,"
            " checkpoint, channels, versions) VALUES (%s, '', %s, 'x', '', '{}', '{}')",
            [t, cp_a["id"]],
        )
        results: dict[str, Any] = {}

        def put(name: str, saver: PostgresSaver, cp: dict) -> None:
            try:
                results[name] = saver.put(
                    _cfg(t, head), cp, {}, dict(cp["channel_versions"]), expected_head=head
                )
            except BaseException as exc:  # noqa: BLE001
                results[name] = exc

        pattern = f"%{FENCE_HEAD}%"
        ta = threading.Thread(target=put, args=("a", a, cp_a))
        tb = threading.Thread(target=put, args=("b", b, cp_b))
        try:
            ta.start()
            a_waits = _waiting(admin, pattern, 1)  # A holds the fence lock, waits on the blob
            tb.start()
            both_wait = _waiting(admin, pattern, 2)  # B waits for A's fence lock
        finally:
            blocker.rollback()
            ta.join()
            tb.join()
        assert (a_waits, both_wait) == (1, 2)
        assert results["a"] == _cfg(t, cp_a["id"])
        err = results["b"]
        assert isinstance(err, CheckpointConflictError), err
        assert (err.thread_id, err.checkpoint_ns, err.expected) == (t, "", head)
        assert err.actual == cp_a["id"]
        history = [tup.config["configurable"]["checkpoint_id"] for tup in a.list(_cfg(t))]
        assert history == [cp_a["id"], head]


def _racer(dsn: str, thread: str, rounds: int, fenced: bool, barrier, out) -> None:
    with PostgresSaver.from_conn_string(dsn) as saver:
        for r in range(rounds):
            head = saver.get_tuple(_cfg(thread))
            head_id = head.config["configurable"]["checkpoint_id"] if head else None
            barrier.wait()
            kwargs = {"expected_head": head_id} if fenced else {}
            try:
                saver.put(_cfg(thread, head_id), _checkpoint(r), {}, {"n": r + 1}, **kwargs)
                out.put((r, "ok"))
            except CheckpointConflictError:
                out.put((r, "conflict"))
            barrier.wait()


def _race(dsn: str, fenced: bool, rounds: int = 5) -> tuple[dict, list]:
    ctx = multiprocessing.get_context("spawn")
    thread = uuid.uuid4().hex
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_racer, args=(dsn, thread, rounds, fenced, barrier, out))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0]
    outcomes: dict[int, list[str]] = {}
    for _ in range(2 * rounds):
        r, what = out.get(timeout=10)
        outcomes.setdefault(r, []).append(what)
    with PostgresSaver.from_conn_string(dsn) as saver:
        history = list(saver.list(_cfg(thread)))
    return outcomes, history


def test_two_processes_racing_on_one_thread_never_fork(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
    outcomes, history = _race(pg_dsn, fenced=True)
    assert all(sorted(v) == ["conflict", "ok"] for v in outcomes.values()), outcomes
    # one linear chain: each checkpoint's parent is the next older one
    assert len(history) == len(outcomes)
    for newer, older in itertools.pairwise(history):
        assert newer.parent_config == older.config
    assert history[-1].parent_config is None


def test_two_processes_without_fencing_both_append(pg_dsn: str) -> None:
    """The plain saver contract (and LangGraph's behaviour): both puts succeed and fork."""
    with PostgresSaver.from_conn_string(pg_dsn) as saver:
        saver.setup()
    outcomes, history = _race(pg_dsn, fenced=False, rounds=2)
    assert all(v == ["ok", "ok"] for v in outcomes.values()), outcomes
    parents = [t.parent_config for t in history]
    assert len(history) == 4 and len({str(p) for p in parents}) < len(parents)


# --- put_batch: one pipelined transaction --------------------------------------------------


def _batch_ops(thread: str, head: str | None, parent_cp: dict, child_cp: dict) -> list:
    parent_id = parent_cp["id"]
    return [
        PutOp(
            _cfg(thread, head),
            parent_cp,
            {"step": 1},
            {"n": parent_cp["channel_versions"]["n"]},
            expected_head=head,
        ),
        WritesOp(_cfg(thread, parent_id), [("n", 5), ("__interrupt__", "stop?")], "task", "p"),
        PutOp(
            _cfg(thread, parent_id),
            child_cp,
            {"step": 2},
            {"n": child_cp["channel_versions"]["n"]},
            expected_head=parent_id,
        ),
    ]


def _check_batch(saver, thread: str, parent_cp: dict, child_cp: dict, out: list) -> None:
    assert out == [_cfg(thread, parent_cp["id"]), None, _cfg(thread, child_cp["id"])]
    parent = saver.get_tuple(_cfg(thread, parent_cp["id"]))
    assert parent.pending_writes == [("task", "__interrupt__", "stop?"), ("task", "n", 5)]
    assert saver.get_tuple(_cfg(thread)).parent_config == _cfg(thread, parent_cp["id"])


def test_put_batch_is_all_or_nothing(pg_dsn: str) -> None:
    with PostgresSaver.from_conn_string(pg_dsn, pool_size=2) as saver:
        saver.setup()
        t = uuid.uuid4().hex
        first, second = _checkpoint(0), _checkpoint(1)
        _check_batch(saver, t, first, second, saver.put_batch(_batch_ops(t, None, first, second)))
        # a stale expectation in the middle of a batch rolls back the whole batch
        stale = [
            WritesOp(_cfg(t, second["id"]), [("n", 9)], "late"),
            PutOp(_cfg(t, first["id"]), _checkpoint(2), {}, {"n": 3}, expected_head=first["id"]),
        ]
        with pytest.raises(CheckpointConflictError) as err:
            saver.put_batch(stale)
        assert (err.value.thread_id, err.value.expected, err.value.actual) == (
            t,
            first["id"],
            second["id"],
        )
        assert saver.get_tuple(_cfg(t)).pending_writes == []  # the writes were rolled back
        # return_exceptions: op by op
        out = saver.put_batch(stale, return_exceptions=True)
        assert out[0] is None and isinstance(out[1], CheckpointConflictError)
        assert saver.get_tuple(_cfg(t)).pending_writes == [("late", "n", 9)]
        with pytest.raises(TypeError, match="PutOp or WritesOp"):
            saver.put_batch([("not", "an op")])


async def test_async_put_batch_is_all_or_nothing(pg_dsn: str) -> None:
    async with AsyncPostgresSaver.from_conn_string(pg_dsn) as saver:
        await saver.setup()
        t = uuid.uuid4().hex
        first, second = _checkpoint(0), _checkpoint(1)
        out = await saver.aput_batch(_batch_ops(t, None, first, second))
        await asyncio.to_thread(_check_batch, saver, t, first, second, out)
        stale = [
            WritesOp(_cfg(t, second["id"]), [("n", 9)], "late"),
            PutOp(_cfg(t), _checkpoint(2), {}, {"n": 3}, expected_head=None),
        ]
        with pytest.raises(CheckpointConflictError):
            await saver.aput_batch(stale)
        assert (await saver.aget_tuple(_cfg(t))).pending_writes == []


@pytest.mark.parametrize("pipeline", [False, True])
async def test_put_batch_return_exceptions_reports_each_ops_own_outcome(
    pg_dsn: str, pipeline: bool
) -> None:
    """A failed op does not spoil the ones after it (in pipeline mode either): each op runs
    and reports its own outcome, in the sync and the async saver."""
    outcomes = []
    async with AsyncPostgresSaver.from_conn_string(pg_dsn, pipeline=pipeline) as asaver:
        await asaver.setup()
        with PostgresSaver.from_conn_string(pg_dsn, pipeline=pipeline) as saver:
            for run in (saver.put_batch, asaver.aput_batch):
                t = uuid.uuid4().hex
                c1 = saver.put(_cfg(t), _checkpoint(0), {}, {"n": 1})
                nxt = _checkpoint(1)
                ops = [
                    PutOp(_cfg(t), _checkpoint(9), {}, {"n": 10}, expected_head=None),  # stale
                    WritesOp(c1, [("n", 5)], "task"),
                    PutOp(c1, _checkpoint(8), {}, {"n": 9}, expected_head="not-the-head"),
                    PutOp(c1, nxt, {}, {"n": 2}, expected_head=c1["configurable"]["checkpoint_id"]),
                ]
                out = run(ops, return_exceptions=True)
                if asyncio.iscoroutine(out):
                    out = await out
                outcomes.append([type(o).__name__ for o in out])
                assert isinstance(out[0], CheckpointConflictError)
                assert out[0].actual == c1["configurable"]["checkpoint_id"]
                assert out[1] is None
                assert isinstance(out[2], CheckpointConflictError)
                assert out[3] == _cfg(t, nxt["id"])
                assert saver.get_tuple(c1).pending_writes == [("task", "n", 5)]
                assert saver.get_tuple(_cfg(t)).checkpoint["channel_values"] == {"n": 1}
    expected = ["CheckpointConflictError", "NoneType", "CheckpointConflictError", "dict"]
    assert outcomes == [expected, expected]


# --- connections set up the way LangGraph's docs do, shared by many threads ---------------


def _hammer(saver, prefix: str, n_threads: int = 6, n_puts: int = 15) -> None:
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            cfg = _cfg(f"{prefix}-{i}")
            for k in range(n_puts):
                cfg = saver.put(cfg, _checkpoint(k), {"step": k}, {"n": k + 1})
                saver.put_writes(cfg, [("n", k), ("__error__", "e")], f"task{k}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i in range(n_threads):
        history = list(saver.list(_cfg(f"{prefix}-{i}")))
        assert [t.metadata["step"] for t in history] == list(range(n_puts))[::-1]
        assert history[0].checkpoint["channel_values"] == {"n": n_puts - 1}
        assert history[0].pending_writes == [
            (f"task{n_puts - 1}", "__error__", "e"),
            (f"task{n_puts - 1}", "n", n_puts - 1),
        ]


@pytest.mark.parametrize("mode", ["dict_row-connection", "dict_row-pool", "pipeline"])
def test_many_threads_on_langgraph_style_connections(pg_dsn: str, mode: str) -> None:
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
    if mode == "dict_row-pool":
        with ConnectionPool(pg_dsn, min_size=1, max_size=3, kwargs=kwargs) as pool:
            saver = PostgresSaver(pool)
            saver.setup()
            _hammer(saver, uuid.uuid4().hex)
        return
    with psycopg.Connection.connect(pg_dsn, **kwargs) as conn:
        if mode == "pipeline":
            with conn.pipeline() as pipe:
                saver = PostgresSaver(conn, pipe)
                saver.setup()
                _hammer(saver, uuid.uuid4().hex)
        else:
            saver = PostgresSaver(conn)
            saver.setup()
            _hammer(saver, uuid.uuid4().hex)
