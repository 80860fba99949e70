"""The long-term memory stores: put / get / search on InMemoryStore and SqliteStore,
LangGraph 1.2.24 against warpgraph in the same run.

Run timed:   pytest benches/bench_store.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_store.py   (--benchmark-disable: each case once, the
             results of both libraries compared; no timed assertions)
A/B:         PYTHONPATH=benches .venv/bin/python benches/bench_store.py  (the sides take
             turns in one process and the ratios are printed; target >= 10x each). A
             third side is the floor: for SQLite (`Floor`) the bare statement warpgraph
             needs per call with raw sqlite3, for memory (`MemoryFloor`) the least Python
             making the same objects; `floor/wg` is its time over warpgraph's (1.0 = no
             overhead left above the floor).

Each side's store holds 1,000 items in 10 namespaces ("docs", "u<i>") before timing.
Both SQLite sides use the same connection settings (WAL, synchronous=NORMAL).

Cases (group = case/store, one benchmark per library):
* `put`: `store.put(ns, key, value)` of a 6-key dict (keys cycle over 1,000: replaces).
* `get`: `store.get(ns, key)` of a stored item.
* `search`: `store.search(("docs",), limit=10)` (the first page of a prefix).
* `search_filter`: `store.search(("docs",), filter={"kind": "b", "n": {"$gte": 500}})`.
* `search_query` (memory only): a vector search (`query=`) over 1,000 items embedded by
  a cheap deterministic function (8 dims), top 10.
"""

from __future__ import annotations

import importlib
import statistics
import time
from typing import Any

import pytest
from _ab import case_side, same_answers, side_cache
from bench_sqlite_saver import _connect

LIBS = ("langgraph", "warpgraph")
STORES = ("memory", "sqlite")
CASES = ("put", "get", "search", "search_filter", "search_query")
ITEMS = 1000
NAMESPACES = 10


def _embed(texts: list[str]) -> list[list[float]]:
    return [[float((hash(t) >> (4 * k)) & 15) + 1.0 for k in range(8)] for t in texts]


def _value(i: int) -> dict[str, Any]:
    return {
        "n": i,
        "kind": "ab"[i % 2],
        "text": f"memory number {i} about topic {i % 7}",
        "tags": ["x", str(i % 3)],
        "score": i / 10,
        "ok": i % 5 == 0,
    }


def _ns(i: int) -> tuple[str, ...]:
    return ("docs", f"u{i % NAMESPACES}")


class Side:
    """One library's store, filled with ITEMS items."""

    def __init__(self, lib: str, kind: str, path: str) -> None:
        self.lib, self.kind = lib, kind
        if kind == "memory":
            mod = importlib.import_module(f"{lib}.store.memory")
            self.store = mod.InMemoryStore()
            self.vstore = mod.InMemoryStore(index={"dims": 8, "embed": _embed, "fields": ["text"]})
        else:
            mod = importlib.import_module(f"{lib}.store.sqlite")
            self.store = mod.SqliteStore(_connect(path))
            self.store.setup()
            self.vstore = None
        for i in range(ITEMS):
            self.store.put(_ns(i), f"k{i}", _value(i))
            if self.vstore is not None:
                self.vstore.put(_ns(i), f"k{i}", _value(i))
        self.i = 0

    def has(self, case: str) -> bool:
        return case != "search_query" or self.vstore is not None

    def put(self) -> Any:
        self.i = i = (self.i + 1) % ITEMS
        self.store.put(_ns(i), f"k{i}", _value(i))
        return True

    def get(self) -> Any:
        item = self.store.get(_ns(7), "k7")
        return (item.key, item.value)

    def search(self) -> Any:
        return len(self.store.search(("docs",), limit=10))

    def search_filter(self) -> Any:
        found = self.store.search(("docs",), filter={"kind": "b", "n": {"$gte": 500}}, limit=10)
        return sorted(r.value["n"] % 2 for r in found)

    def search_query(self) -> Any:
        found = self.vstore.search(("docs",), query="memory number 3 about topic 3", limit=10)
        return [(r.key, round(r.score, 6)) for r in found]


class Floor:
    """The SQLite floor: raw `sqlite3` running the one statement warpgraph's store needs per
    call (built once, from warpgraph's own SQL), on a file of the same schema and the same
    connection settings: the value encoded and stamped for a put (the same bytes, in the
    same durability: one autocommitted statement), rows fetched as plain tuples for reads
    (no decoding, no Item objects)."""

    def __init__(self, path: str) -> None:
        import orjson
        from warpgraph.store._sql import plan
        from warpgraph.store._sql.dialect import SqliteDialect
        from warpgraph.store.base import SearchOp
        from warpgraph.store.sqlite import SqliteStore, _direct

        self.lib, self.kind, self.vstore = "floor", "sqlite", None
        self.conn = _connect(path)
        SqliteStore(self.conn).setup()
        self._dumps = orjson.dumps
        self._put_sql, self._get_sql = _direct.PUT_SQL, _direct.GET_SQL
        d = SqliteDialect()

        def page(flt: Any) -> tuple[str, list]:
            _, sql, params = plan.recent_first(
                d, SearchOp(("docs",), flt, 10, 0), False, None, 10, 0
            )
            return sql, params

        self._search = page(None)
        self._search_filter = page({"kind": "b", "n": {"$gte": 500}})
        for i in range(ITEMS):
            self._put(i)
        self.i = 0

    def has(self, case: str) -> bool:
        return case != "search_query"

    def _put(self, i: int) -> None:
        from datetime import datetime, timezone

        stamp = datetime.now(timezone.utc).isoformat(" ")
        value = self._dumps(_value(i)).decode()
        self.conn.execute(
            self._put_sql, (".".join(_ns(i)), f"k{i}", value, stamp, stamp, None, None)
        )

    def put(self) -> Any:
        self.i = i = (self.i + 1) % ITEMS
        self._put(i)
        return True

    def get(self) -> Any:
        return self.conn.execute(self._get_sql, ("docs.u7", "k7")).fetchone()

    def search(self) -> Any:
        return len(self.conn.execute(*self._search).fetchall())

    def search_filter(self) -> Any:
        return self.conn.execute(*self._search_filter).fetchall()


class MemoryFloor:
    """The in-process floor: the least Python giving the same objects, as plain functions
    on a dict of dicts (no validation, no TTL, no options): a put stamps, copies the
    value and stores a new Item; a get is two dict lookups; a search makes SearchItems of
    the first 10 items under the prefix. No vector or filtered search here."""

    def __init__(self) -> None:
        from warpgraph.store.base import Item, SearchItem

        self.lib, self.kind, self.vstore = "floor", "memory", None
        self._item, self._search_item = Item.__new__, SearchItem.__new__
        self._classes = (Item, SearchItem)
        self.data: dict[tuple[str, ...], dict[str, Any]] = {}
        for i in range(ITEMS):
            self._put(i)
        self.i = 0

    def has(self, case: str) -> bool:
        return case in ("put", "get", "search")

    def _put(self, i: int) -> None:
        from datetime import datetime, timezone

        item = self._item(self._classes[0])
        item.value = dict(_value(i))
        item.namespace = namespace = _ns(i)
        item.key = key = f"k{i}"
        item.created_at = item.updated_at = datetime.now(timezone.utc)
        self.data.setdefault(namespace, {})[key] = item

    def put(self) -> Any:
        self.i = i = (self.i + 1) % ITEMS
        self._put(i)
        return True

    def get(self) -> Any:
        item = self.data[("docs", "u7")]["k7"]
        return (item.key, item.value)

    def search(self) -> Any:
        out = []
        cls = self._classes[1]
        for namespace, items in self.data.items():
            if namespace[:1] != ("docs",):
                continue
            for item in items.values():
                if len(out) == 10:
                    return len(out)
                found = self._search_item(cls)
                found.value, found.key, found.namespace = item.value, item.key, item.namespace
                found.created_at, found.updated_at, found.score = (
                    item.created_at,
                    item.updated_at,
                    None,
                )
                out.append(found)
        return len(out)


# --- pytest-benchmark -------------------------------------------------------------------
_RESULTS: dict[tuple[str, str], dict[str, Any]] = {}
sides = side_cache("store", Side)


@pytest.mark.parametrize(
    ("case", "kind", "lib"),
    # (vector search is measured on memory only)
    [
        (c, k, lib)
        for c in CASES
        for k in STORES
        for lib in LIBS
        if c != "search_query" or k == "memory"
    ],
)
def test_store(benchmark: Any, sides: Any, case: str, kind: str, lib: str) -> None:
    side = case_side(benchmark, sides, case, kind, lib, "store")
    got = benchmark(getattr(side, case))
    same_answers(_RESULTS, (case, kind), lib, got)
    assert got, got


# --- A/B in one process -------------------------------------------------------------------
def _ab(turns: int = 20) -> None:
    import tempfile
    from pathlib import Path

    tmp = Path(tempfile.mkdtemp())
    sides: dict[tuple[str, str], Any] = {
        (lib, kind): Side(lib, kind, str(tmp / f"{lib}-{kind}.db"))
        for kind in STORES
        for lib in LIBS
    }
    sides[("floor", "sqlite")] = Floor(str(tmp / "floor-sqlite.db"))
    sides[("floor", "memory")] = MemoryFloor()
    calls = {"put": 200, "get": 500, "search": 200, "search_filter": 20, "search_query": 5}
    times: dict[tuple[str, str, str], list[float]] = {}
    for turn in range(turns + 1):
        # case by case, the sides of one store back to back (a pair is timed close together)
        for case, n in calls.items():
            for (lib, kind), side in sorted(sides.items(), key=lambda e: e[0][1]):
                if not side.has(case):
                    continue
                fn = getattr(side, case)
                t0 = time.perf_counter()
                for _ in range(n):
                    fn()
                if turn:  # (the first turn warms up)
                    times.setdefault((case, kind, lib), []).append((time.perf_counter() - t0) / n)
    print(
        f"{'case':14} {'store':7} {'langgraph':>10} {'warpgraph':>10} {'floor':>9}"
        f"  {'wg vs lg (min-max)':>19}  {'floor/wg':>8}"
    )
    for case in CASES:
        for kind in STORES:
            ref, ours = times.get((case, kind, "langgraph")), times.get((case, kind, "warpgraph"))
            if not ref or not ours:
                continue
            ratios = [r / o for r, o in zip(ref, ours, strict=True)]
            floor = times.get((case, kind, "floor"))
            floor_txt, share = f"{'-':>9}", f"{'-':>8}"
            if floor:
                shares = [f / o for f, o in zip(floor, ours, strict=True)]
                floor_txt = f"{statistics.median(floor) * 1e6:7.1f}µs"
                share = f"{statistics.median(shares):8.2f}"
            print(
                f"{case:14} {kind:7} {statistics.median(ref) * 1e6:8.1f}µs "
                f"{statistics.median(ours) * 1e6:8.1f}µs {floor_txt}  "
                f"{statistics.median(ratios):6.1f}x ({min(ratios):5.1f}-{max(ratios):5.1f})"
                f"  {share}"
            )


if __name__ == "__main__":
    _ab()
