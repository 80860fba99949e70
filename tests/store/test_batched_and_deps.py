"""AsyncBatchedBaseStore merges concurrent calls into one deduplicated `abatch`; the store
modules import without any optional package."""

from __future__ import annotations

import asyncio

import pytest
from warpgraph.store.base import GetOp, PutOp, SearchOp
from warpgraph.store.base.batch import AsyncBatchedBaseStore
from warpgraph.store.memory import InMemoryStore

from tests._subproc import run_python


class Recording(AsyncBatchedBaseStore):
    def __init__(self) -> None:
        super().__init__()
        self.inner = InMemoryStore()
        self.calls: list[list] = []

    def batch(self, ops):  # pragma: no cover - not called on the loop
        raise NotImplementedError

    async def abatch(self, ops):
        ops = list(ops)
        self.calls.append(ops)
        return self.inner.batch(ops)


def test_concurrent_calls_share_one_deduplicated_batch() -> None:
    async def run() -> tuple:
        store = Recording()
        await store.aput(("a",), "k", {"v": 0})
        store.calls.clear()
        got = await asyncio.gather(
            store.aget(("a",), "k"),
            store.aget(("a",), "k"),
            store.asearch(("a",), filter={"v": 0}),
            store.asearch(("a",), filter={"v": 0}),
            store.aput(("a",), "j", {"v": 1}),
            store.aput(("a",), "j", {"v": 2}),
        )
        return store.calls, got, await store.aget(("a",), "j")

    calls, got, last = asyncio.run(run())
    assert len(calls[0]) == 3  # one get, one search, one put (the last value)
    assert calls[0][0] == GetOp(("a",), "k")
    assert isinstance(calls[0][1], SearchOp)
    assert calls[0][2] == PutOp(("a",), "j", {"v": 2}, None, None)
    assert got[0].value == got[1].value == {"v": 0}
    assert [r.key for r in got[2]] == [r.key for r in got[3]] == ["k"]
    assert last.value == {"v": 2}


def test_sync_call_on_the_loop_is_refused() -> None:
    async def run() -> None:
        store = Recording()
        with pytest.raises(asyncio.InvalidStateError, match="await store.aget"):
            store.get(("a",), "k")

    asyncio.run(run())


def test_failures_reach_every_waiting_caller() -> None:
    class Failing(Recording):
        async def abatch(self, ops):
            raise RuntimeError("boom")

    async def run() -> list:
        store = Failing()
        return await asyncio.gather(
            store.aget(("a",), "k"), store.asearch(("a",)), return_exceptions=True
        )

    assert [str(e) for e in asyncio.run(run())] == ["boom", "boom"]


CHILD = r"""
import sys
from importlib.abc import MetaPathFinder
BLOCKED = {"langgraph", "langchain_core", "psycopg", "psycopg_pool", "aiosqlite", "numpy",
           "orjson", "sqlite_vec"}
class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"blocked optional dependency: {name}")
sys.meta_path.insert(0, Block())
import warpgraph.store.base, warpgraph.store.base.batch, warpgraph.store.base.embed
import warpgraph.store.postgres, warpgraph.store.sqlite
from warpgraph.store.memory import InMemoryStore
from warpgraph.store.sqlite import SqliteStore
embed = lambda texts: [[float(len(t)), 1.0] for t in texts]
for store in (InMemoryStore(index={"dims": 2, "embed": embed}), SqliteStore.__new__(SqliteStore)):
    if isinstance(store, SqliteStore):
        import sqlite3
        store.__init__(sqlite3.connect(":memory:"), index={"dims": 2, "embed": embed})
    store.put(("a",), "k", {"t": "hello"})
    assert store.get(("a",), "k").value == {"t": "hello"}
    assert store.search(("a",), query="hi")[0].key == "k"
leaked = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
assert not leaked, leaked
print("ok")
"""


def test_stores_need_no_optional_packages() -> None:
    proc = run_python(CHILD)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
