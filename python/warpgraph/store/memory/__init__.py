"""`InMemoryStore`: a dict-backed store with optional vector search and TTL.

Layout (LangGraph's, kept for code that peeks): `_data[namespace][key] -> Item` and
`_vectors[namespace][key][field] -> vector`. A batch answers every read against the state
before the batch, then applies its puts (the last put per (namespace, key) wins).

`index={"embed": ..., "dims": ..., "fields": [...]}` embeds the configured fields of each
put (one `embed_documents` call per batch, each distinct text once) and ranks searches
with a query by cosine similarity. `ttl=TTLConfig(...)` (warpgraph's addition; without it
the store, like LangGraph's, rejects `put(ttl=...)`) makes items expire: reads refresh the
TTL when asked to, `sweep_ttl` / `start_ttl_sweeper` delete expired items, and until
then they are still returned unless the config says `omit_expired` (the rules of
LangGraph's SQL stores).

`get`, `put`, `delete` and `search` run their single operation directly (no op objects,
no batch); a subclass that overrides `batch` / `abatch` gets the generic methods back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any, Literal

from warpgraph.store import _namespaces
from warpgraph.store._filter import compile_filter
from warpgraph.store._sweeper import ThreadSweeper
from warpgraph.store._vectors import NATIVE, pack, rank, rank_packed
from warpgraph.store.base import (
    NOT_PROVIDED,
    READABLE_NAMESPACES,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    _check_read_namespace,
    _ensure_refresh,
    _ensure_ttl,
    _search_op_of,
    _ttl_unsupported,
    _validate_namespace,
    _validate_namespace_labels,
    ensure_embeddings,
)
from warpgraph.store.base.embed import _tokenized_fields, texts_to_embed, tokenize_path

__all__ = ("InMemoryStore",)

_UTC = timezone.utc
_now = datetime.now


_VALID_NAMESPACES: set = set()  # tuples `_validate_namespace` accepted (writes)
_new_search_item = SearchItem.__new__
_new_item = Item.__new__


def _search_item(item: Item, score: float | None) -> SearchItem:
    """A SearchItem of a stored item (its fields are already normalized: no parsing)."""
    found = _new_search_item(SearchItem)
    found.value = item.value
    found.key = item.key
    found.namespace = item.namespace
    found.created_at = item.created_at
    found.updated_at = item.updated_at
    found.score = score
    return found


class _Packed:
    """A ranked search's candidates for the native ranking: items and packed vectors."""

    __slots__ = ("dims", "items", "packed")

    def __init__(self, items: list[Item], packed: list[bytes | None], dims: int) -> None:
        self.items, self.packed, self.dims = items, packed, dims


def _vector_table() -> defaultdict:
    return defaultdict(dict)


class InMemoryStore(BaseStore):
    """A store kept in process memory (lost when the process ends)."""

    __slots__ = (
        "_data",
        "_expiry",
        "_lock",
        "_packed",
        "_sweeper",
        "_vectors",
        "embeddings",
        "index_config",
        "supports_ttl",
        "ttl_config",
    )

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None) -> None:
        self._data: dict[tuple[str, ...], dict[str, Item]] = defaultdict(dict)
        self._vectors: dict[tuple[str, ...], dict[str, dict[str, list[float]]]] = defaultdict(
            _vector_table
        )
        self.embeddings: Any = None
        self.index_config: Any = None
        if index:
            config = dict(index)
            self.embeddings = ensure_embeddings(config.get("embed"))
            config["__tokenized_fields"] = _tokenized_fields(config.get("fields") or ["$"])
            self.index_config = config
        self.ttl_config = ttl
        self.supports_ttl = ttl is not None
        # (namespace, key) -> (expires at, epoch seconds; ttl minutes)
        self._expiry: dict[tuple[tuple[str, ...], str], tuple[float, float]] = {}
        self._sweeper = ThreadSweeper()
        self._lock = threading.Lock()
        # namespace -> (its items, their packed vectors) for native ranking; dropped when
        # the namespace's items or vectors change (see `_packed_candidates`)
        self._packed: dict[tuple[str, ...], tuple[list[Item], list[bytes | None]] | None] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # direct single-op methods bypass batch: a subclass that intercepts batch / abatch
        # must see every operation, so it gets the generic BaseStore methods back
        if cls.batch is not InMemoryStore.batch:
            for name in ("get", "put", "delete", "search"):
                setattr(cls, name, getattr(BaseStore, name))
        if cls.abatch is not InMemoryStore.abatch:
            for name in ("aget", "aput", "adelete", "asearch"):
                setattr(cls, name, getattr(BaseStore, name))

    # --- batch --------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results, puts, searches = self._read_ops(ops)
        if searches:
            vectors = self._query_vectors_sync([op for op, _ in searches.values()])
            self._finish_searches(searches, vectors, results)
        self._write(puts, self._embed_sync)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        results, puts, searches = self._read_ops(ops)
        if searches:
            vectors = await self._query_vectors_async([op for op, _ in searches.values()])
            self._finish_searches(searches, vectors, results)
        pending = self._texts_of(puts)
        vectors_of_texts = (
            await self.embeddings.aembed_documents(list(pending)) if pending else None
        )
        self._apply_puts(puts, pending, vectors_of_texts)
        return results

    def _read_ops(self, ops: Iterable[Op]) -> tuple[list[Result], dict, dict]:
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        searches: dict[int, tuple[SearchOp, list]] = {}
        for i, op in enumerate(ops):
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key, op.refresh_ttl))
            elif isinstance(op, SearchOp):
                searches[i] = (op, self._candidates(op))
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(_namespaces.list_namespaces(self._live_namespaces(), op))
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
                results.append(None)
            else:
                raise ValueError(f"Unknown operation type: {type(op)}")  # noqa: TRY004 - LangGraph raises ValueError
        return results, puts, searches

    # --- reads --------------------------------------------------------------------------

    def _expired(self, namespace: tuple[str, ...], key: str, refresh: bool) -> bool:
        """Whether the item is hidden (expired, with TTLConfig `omit_expired`; expired items
        stay until swept, as in LangGraph's stores); restarts a shown item's TTL if asked."""
        entry = self._expiry.get((namespace, key))
        if entry is None:
            return False
        deadline, minutes = entry
        now = time.time()
        if deadline <= now and self.ttl_config is not None and self.ttl_config.get("omit_expired"):
            return True
        if refresh:
            self._expiry[(namespace, key)] = (now + minutes * 60.0, minutes)
        return False

    def _get(self, namespace: tuple[str, ...], key: str, refresh: bool) -> Item | None:
        items = self._data.get(namespace)
        if items is None:
            return None
        item = items.get(key)
        if item is not None and self._expiry and self._expired(namespace, key, refresh):
            return None
        return item

    def _live_namespaces(self) -> list[tuple[str, ...]]:
        if not self._expiry:
            return [ns for ns, items in self._data.items() if items]
        return [
            ns
            for ns, items in self._data.items()
            if any(not self._expired(ns, key, False) for key in items)
        ]

    def _packed_candidates(self, op: SearchOp) -> _Packed | None:
        """The candidates of a ranked search with no filter and no TTL as (items, packed
        vectors) for the native ranking, or None (no native build, a vector of another
        size than the index's `dims`)."""
        if not NATIVE or op.filter or self._expiry or op.offset < 0 or op.limit < 0:
            return None
        dims = self.index_config.get("dims")
        if not isinstance(dims, int) or dims <= 0:
            return None
        prefix = op.namespace_prefix
        n = len(prefix)
        items: list[Item] = []
        packed: list[bytes | None] = []
        cache = self._packed
        for namespace, stored in self._data.items():
            if namespace[:n] != prefix:
                continue
            if namespace in cache:
                entry = cache[namespace]
            else:
                entry = cache[namespace] = self._pack_namespace(namespace, stored, dims)
            if entry is None:
                return None
            items += entry[0]
            packed += entry[1]
        return _Packed(items, packed, dims)

    def _pack_namespace(
        self, namespace: tuple[str, ...], stored: dict[str, Item], dims: int
    ) -> tuple[list[Item], list[bytes | None]] | None:
        vectors = self._vectors.get(namespace) or {}
        packed: list[bytes | None] = []
        for key in stored:
            found = vectors.get(key)
            if found and any(len(v) != dims for v in found.values()):
                return None
            packed.append(pack(list(found.values())) if found else None)
        return list(stored.values()), packed

    def _candidates(self, op: SearchOp) -> list[tuple[Item, list]] | _Packed:
        """[(item, its vectors if the search ranks)] under the prefix that pass the filter."""
        prefix = op.namespace_prefix
        n = len(prefix)
        match = compile_filter(op.filter)
        ranked = bool(op.query and self.embeddings is not None)
        if ranked:
            fast = self._packed_candidates(op)
            if fast is not None:
                return fast
        # without ranking only the first offset + limit candidates are used
        stop = op.offset + op.limit if not ranked and op.offset >= 0 and op.limit >= 0 else -1
        expiry = self._expiry
        out: list[tuple[Item, list]] = []
        for namespace, items in self._data.items():
            if namespace[:n] != prefix:
                continue
            vectors = self._vectors.get(namespace) if ranked else None
            for key, item in items.items():
                if expiry and self._expired(namespace, key, False):
                    continue
                if match is not None and not match(item.value):
                    continue
                if len(out) == stop:
                    return out
                found = vectors.get(key) if vectors else None
                out.append((item, list(found.values()) if found else []))
        return out

    def _finish_searches(
        self,
        searches: dict[int, tuple[SearchOp, list]],
        query_vectors: dict[str, list[float]],
        results: list[Result],
    ) -> None:
        for i, (op, candidates) in searches.items():
            if type(candidates) is _Packed:
                page = rank_packed(
                    query_vectors.get(op.query) or [],
                    candidates.items,
                    candidates.packed,
                    op.offset,
                    op.limit,
                    candidates.dims,
                )
                if page is None:  # not natively: the plain candidates then
                    self._packed.clear()
                    page = rank(
                        query_vectors.get(op.query) or [],
                        self._unpacked(candidates),
                        op.offset,
                        op.limit,
                    )
            elif op.query and query_vectors:
                page = rank(query_vectors[op.query], candidates, op.offset, op.limit)
            else:
                page = [(None, item) for item, _ in candidates[op.offset : op.offset + op.limit]]
            results[i] = found = [
                _search_item(item, None if score is None else float(score)) for score, item in page
            ]
            if op.refresh_ttl and self._expiry:
                for item in found:
                    self._expired(item.namespace, item.key, True)

    def _unpacked(self, candidates: _Packed) -> list[tuple[Item, list]]:
        out = []
        for item in candidates.items:
            found = self._vectors.get(item.namespace, {}).get(item.key)
            out.append((item, list(found.values()) if found else []))
        return out

    def _queries(self, ops: list[SearchOp]) -> list[str]:
        if self.embeddings is None:
            return []
        return list(dict.fromkeys(op.query for op in ops if op.query))

    def _query_vectors_sync(self, ops: list[SearchOp]) -> dict[str, list[float]]:
        queries = self._queries(ops)
        if not queries:
            return {}
        if len(queries) == 1:
            return {queries[0]: self.embeddings.embed_query(queries[0])}
        with concurrent.futures.ThreadPoolExecutor() as pool:
            return dict(zip(queries, pool.map(self.embeddings.embed_query, queries), strict=True))

    async def _query_vectors_async(self, ops: list[SearchOp]) -> dict[str, list[float]]:
        queries = self._queries(ops)
        if not queries:
            return {}
        found = await asyncio.gather(*(self.embeddings.aembed_query(q) for q in queries))
        return dict(zip(queries, found, strict=True))

    # --- writes -------------------------------------------------------------------------

    def _texts_of(self, puts: Mapping[tuple, PutOp]) -> dict[str, list[tuple]]:
        """{text: [(namespace, key, field)]} to embed for these puts (each text once)."""
        if self.embeddings is None or not puts:
            return {}
        pending: dict[str, list[tuple]] = defaultdict(list)
        default_paths = self.index_config["__tokenized_fields"]
        for op in puts.values():
            if op.value is None or op.index is False:
                continue
            paths = default_paths if op.index is None else [(p, tokenize_path(p)) for p in op.index]
            for field, text in texts_to_embed(op.value, paths):
                pending[text].append((op.namespace, op.key, field))
        return pending

    def _embed_sync(self, texts: list[str]) -> list[list[float]]:
        return self.embeddings.embed_documents(texts)

    def _write(self, puts: Mapping[tuple, PutOp], embed: Any) -> None:
        pending = self._texts_of(puts)
        self._apply_puts(puts, pending, embed(list(pending)) if pending else None)

    def _apply_puts(
        self,
        puts: Mapping[tuple, PutOp],
        pending: dict[str, list[tuple]],
        vectors: list[list[float]] | None,
    ) -> None:
        if pending and (vectors is None or len(vectors) != len(pending)):
            got = 0 if vectors is None else len(vectors)
            raise ValueError(
                f"Number of embeddings ({got}) does not match number of texts ({len(pending)})"
            )
        for (namespace, key), op in puts.items():
            if op.value is None:
                self._drop(namespace, key)
            else:
                self._store(namespace, key, op.value, op.ttl)
        if pending:
            by_text = dict(zip(pending, vectors, strict=True))  # type: ignore[arg-type]
            for text, owners in pending.items():
                for namespace, key, field in owners:
                    self._vectors[namespace][key][field] = by_text[text]
                    self._packed.pop(namespace, None)

    def _store(self, namespace: tuple[str, ...], key: str, value: Mapping, ttl: Any) -> None:
        now = _now(_UTC)
        item = _new_item(Item)
        item.value = dict(value)
        item.key = key
        item.namespace = namespace if type(namespace) is tuple else tuple(namespace)
        item.created_at = item.updated_at = now
        self._data[item.namespace][key] = item
        if self._packed:
            self._packed.pop(item.namespace, None)
        vectors = self._vectors.get(namespace)
        if vectors and key in vectors:
            del vectors[key]  # a replaced value's vectors are stale
        if ttl is not None and self.supports_ttl:
            self._expiry[(namespace, key)] = (time.time() + ttl * 60.0, ttl)
        elif self._expiry:
            self._expiry.pop((namespace, key), None)

    def _drop(self, namespace: tuple[str, ...], key: str) -> None:
        if self._packed:
            self._packed.pop(namespace, None)
        items = self._data.get(namespace)
        if items is not None:
            items.pop(key, None)
            if not items:
                del self._data[namespace]
        vectors = self._vectors.get(namespace)
        if vectors is not None:
            vectors.pop(key, None)
            if not vectors:
                del self._vectors[namespace]
        if self._expiry:
            self._expiry.pop((namespace, key), None)

    # --- direct single-op methods ---------------------------------------------------------

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item under (namespace, key), or None."""
        if type(namespace) is not tuple or namespace not in READABLE_NAMESPACES:
            _check_read_namespace(namespace)
        if type(key) is not str:
            key = str(key)
        if self._expiry:
            return self._get(namespace, key, _ensure_refresh(self.ttl_config, refresh_ttl))
        items = self._data.get(namespace)
        return None if items is None else items.get(key)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async `get`."""
        return InMemoryStore.get(self, namespace, key, refresh_ttl=refresh_ttl)

    def _put_direct(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None,
        ttl: Any,
    ) -> PutOp | None:
        """Store without embeddings; returns the op instead when it needs embedding."""
        if type(namespace) is not tuple or namespace not in _VALID_NAMESPACES:
            _validate_namespace(namespace)
            if len(_VALID_NAMESPACES) < 4096 and type(namespace) is tuple:
                _VALID_NAMESPACES.add(namespace)
        if ttl is not NOT_PROVIDED and ttl is not None and not self.supports_ttl:
            raise _ttl_unsupported(self)
        ttl = _ensure_ttl(self.ttl_config, ttl)
        key = str(key)
        if self.embeddings is not None and index is not False:
            return PutOp(namespace, key, value, index, ttl)
        self._store(namespace, key, value, ttl)
        return None

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Store (or replace) `value` under (namespace, key)."""
        op = self._put_direct(namespace, key, value, index, ttl)
        if op is not None:
            self._write({(op.namespace, op.key): op}, self._embed_sync)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Async `put`."""
        op = self._put_direct(namespace, key, value, index, ttl)
        if op is not None:
            await self.abatch([op])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the item under (namespace, key) (no error if absent)."""
        _validate_namespace_labels(namespace)
        self._drop(namespace, str(key))

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async `delete`."""
        InMemoryStore.delete(self, namespace, key)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under `namespace_prefix`, filtered and (with `query` and an index) ranked."""
        started = self._search_start(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        if type(started) is list:
            return started
        return self._search_end(started, self._query_vectors_sync([started[0][0]]))

    def _search_start(
        self,
        namespace_prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> list[SearchItem] | dict[int, tuple[SearchOp, Any]]:
        """The first part of `search` / `asearch` (the state read before any query is
        embedded): the page itself when it is the prefix's first items in order, else
        {0: (the op, its candidates)} for `_search_end`."""
        if type(namespace_prefix) is not tuple or namespace_prefix not in READABLE_NAMESPACES:
            _check_read_namespace(namespace_prefix)
        if (
            not filter
            and not self._expiry
            and (not query or self.embeddings is None)
            and type(limit) is int
            and type(offset) is int
            and limit >= 0
            and offset >= 0
        ):  # the first page of the prefix's items, in order: no op, no candidates list
            return self._first_page(namespace_prefix, offset, limit)
        op = _search_op_of(self, namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return {0: (op, self._candidates(op))}

    def _search_end(
        self, searches: dict[int, tuple[SearchOp, Any]], query_vectors: dict[str, list[float]]
    ) -> list[SearchItem]:
        results: list[Result] = [None]
        self._finish_searches(searches, query_vectors, results)
        return results[0]  # type: ignore[return-value]

    def _first_page(self, prefix: tuple[str, ...], offset: int, limit: int) -> list[SearchItem]:
        out: list[SearchItem] = []
        if not limit:
            return out
        n = len(prefix)
        skip = offset
        for namespace, items in self._data.items():
            if namespace[:n] != prefix:
                continue
            if skip >= len(items):
                skip -= len(items)
                continue
            for item in items.values():
                if skip:
                    skip -= 1
                    continue
                out.append(_search_item(item, None))
                if len(out) == limit:
                    return out
        return out

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async `search` (the query embedded with `aembed_query`)."""
        started = self._search_start(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        if type(started) is list:
            return started
        return self._search_end(started, await self._query_vectors_async([started[0][0]]))

    # --- TTL ----------------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete the expired items; returns how many."""
        now = time.time()
        expired = [k for k, (deadline, _) in list(self._expiry.items()) if deadline <= now]
        for namespace, key in expired:
            self._drop(namespace, key)
        return len(expired)

    async def asweep_ttl(self) -> int:
        """Async `sweep_ttl`."""
        return self.sweep_ttl()

    def start_ttl_sweeper(
        self, sweep_interval_minutes: int | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep every `sweep_interval_minutes` (default: the TTL config's, else 5) on a
        daemon thread until `stop_ttl_sweeper`; the future resolves when it stops."""
        with self._lock:
            return self._sweeper.start(self, sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True when it has stopped within `timeout`."""
        return self._sweeper.stop(timeout)
