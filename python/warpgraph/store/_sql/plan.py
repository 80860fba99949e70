"""One batch of store operations as a step machine, shared by every SQL store and both
executors (sync and async).

`run_batch(store, ops)` is a generator yielding requests and receiving their answers:

    (EMBED_QUERIES, texts)     -> vectors       (before any statement: no lock held)
    (EMBED_DOCUMENTS, texts)   -> vectors
    (ROWS, sql, params)        -> list of row tuples
    (EXEC, sql, params)        -> None
    (MANY, sql, [params, ...]) -> None

Statements come after every embedding and run in ONE transaction the executor opens at
the first statement. Reads (gets, searches, namespace listings) see the state before the
batch's writes; puts are deduplicated (the last per (namespace, key) wins). Its return
value (StopIteration.value) is the results list.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Generator, Iterable, Sequence
from datetime import datetime, timedelta, timezone
from itertools import pairwise
from typing import Any

from warpgraph._internal._isotime import fromisoformat
from warpgraph.store import _namespaces
from warpgraph.store._sql.dialect import Dialect, pack_vector, unpack_vector
from warpgraph.store._sql.dialect import loads as _loads
from warpgraph.store._sql.filters import compile_filter_sql
from warpgraph.store._vectors import rank
from warpgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from warpgraph.store.base.embed import texts_to_embed, tokenize_path

__all__ = ("EMBED_DOCUMENTS", "EMBED_QUERIES", "EXEC", "MANY", "ROWS", "run_batch", "sweep")

EMBED_QUERIES, EMBED_DOCUMENTS, ROWS, EXEC, MANY = range(5)
_UTC = timezone.utc
_COLUMNS = "prefix, key, value, created_at, updated_at, ttl_minutes"
_S_COLUMNS = ", ".join(f"s.{c.strip()}" for c in _COLUMNS.split(","))
Plan = Generator[tuple, Any, list]


def _live(d: Dialect, now: Any, omit_expired: bool) -> tuple[str, list]:
    """The condition hiding expired, unswept rows (only with TTLConfig omit_expired)."""
    if not omit_expired:
        return "", []
    return f"(expires_at IS NULL OR expires_at > {d.ph})", [now]


def _and(*conds: str) -> str:
    return " AND ".join(c for c in conds if c) or ("1 = 1")


def _item(d: Dialect, row: Sequence, cls: type = Item, score: Any = None) -> Any:
    """Item (or SearchItem) from a (prefix, key, value, created_at, updated_at, ...) row."""
    if cls is Item:
        return Item(
            value=d.decode_value(row[2]),
            key=row[1],
            namespace=_namespaces.from_text(row[0]),
            created_at=row[3],
            updated_at=row[4],
        )
    return SearchItem(
        _namespaces.from_text(row[0]), row[1], d.decode_value(row[2]), row[3], row[4], score
    )


def _refresh_rows(d: Dialect, rows: Iterable[Sequence], now: datetime) -> list[tuple]:
    """UPDATE params restarting the TTL of the rows (prefix, key, ..., ttl_minutes) that have one."""
    return [
        (d.timestamp(now + timedelta(minutes=row[5])), row[0], row[1])
        for row in rows
        if row[5] is not None
    ]


def _refresh_sql(d: Dialect) -> str:
    return f"UPDATE store SET expires_at = {d.ph} WHERE prefix = {d.ph} AND key = {d.ph}"


_PROBE_MAX_PAGE = 1000
"""Pages up to this far (offset + limit) are first read in recency order (`recent_first`)."""
_PROBE_BUDGET = 2000
"""Index entries (most recent first) a probe looks at, at least ..."""
_PROBE_PER_ROW = 20
"""... or this many per row of the page, if more."""


def recent_first(
    d: Dialect, op: SearchOp, omit: bool, now_p: Any, limit: int, offset: int
) -> tuple:
    """A search page read from the most recent items down: the recency index is walked in
    order (prefix checked on the index entry), each candidate's row fetched by rowid and
    filtered, and the walk stops at the page's last row, or after the budget of index
    entries. Without ORDER BY the rows come in the walk's order (checked by `_in_order`);
    a page that comes back short is no answer (the budget may have cut it) and the caller
    runs the full query. A search over many recent items reads ~a page of rows instead of
    sorting every match; a search of a few old items costs the budget's walk more.

    The request of a search with no filter and no expiry condition depends only on the
    prefix and the page, so it is built once per (dialect, prefix, limit, offset) and
    shared (callers only read it)."""
    prefix = op.namespace_prefix
    memo = not op.filter and not omit and type(prefix) is tuple
    if memo:
        key = (type(d), prefix, limit, offset)
        hit = _RECENT_FIRST.get(key)
        if hit is not None:
            return hit
    where, params = _search_where(d, op, omit, now_p, prefix_column="c.pfx")
    budget = max(_PROBE_BUDGET, _PROBE_PER_ROW * (offset + limit))
    request = (
        ROWS,
        (
            f"SELECT {_S_COLUMNS} FROM (SELECT rowid AS rid, prefix AS pfx FROM store "
            f"INDEXED BY {d.recent_index} ORDER BY updated_at DESC, prefix, key "
            f"LIMIT {d.ph}) AS c CROSS JOIN store AS s ON s.rowid = c.rid "
            f"WHERE {where} LIMIT {d.ph} OFFSET {d.ph}"
        ),
        (budget, *params, limit, offset),
    )
    if memo:
        if len(_RECENT_FIRST) >= 4096:
            _RECENT_FIRST.clear()
        _RECENT_FIRST[key] = request
    return request


_RECENT_FIRST: dict[tuple, tuple] = {}
"""(dialect type, prefix, limit, offset) -> `recent_first`'s request of an unfiltered
search with no expiry condition (cleared when large)."""


def _search_where(
    d: Dialect, op: SearchOp, omit: bool, now_p: Any, prefix_column: str = "prefix"
) -> tuple[str, list]:
    """The WHERE clause (and its parameters) of a search: prefix, liveness, filter."""
    conds: list[str] = []
    params: list[Any] = []
    if op.namespace_prefix:
        text = _namespaces.to_text(op.namespace_prefix)
        sql, p = d.prefix_condition(text, column=prefix_column)
        conds.append(sql)
        params += p
    sql, p = _live(d, now_p, omit)
    conds.append(sql)
    params += p
    fsql, fparams = compile_filter_sql(d, op.filter)
    if fsql:
        conds.append(fsql)
        params += fparams
    return _and(*conds), params


def search_page(d: Dialect, op: SearchOp, omit: bool, now_p: Any) -> Generator[tuple, Any, list]:
    """The rows of an unranked search's page (a sub-plan: yields ROWS requests): the
    recency walk first where the dialect has the index, else or when it comes back short
    the full sorted query."""
    limit, offset = max(op.limit, 0), max(op.offset, 0)
    if d.recent_index is not None and 0 < limit and offset + limit <= _PROBE_MAX_PAGE:
        rows = yield recent_first(d, op, omit, now_p, limit, offset)
        if len(rows) == limit and _in_order(rows):
            return rows
    where, params = _search_where(d, op, omit, now_p)
    return (
        yield (
            ROWS,
            (
                f"SELECT {_COLUMNS} FROM store WHERE {where} "
                f"ORDER BY updated_at DESC, prefix, key LIMIT {d.ph} OFFSET {d.ph}"
            ),
            [*params, limit, offset],
        )
    )


_new_search_item = SearchItem.__new__
_NAMESPACES: dict[str, tuple[str, ...]] = {}
"""Stored prefix text -> namespace tuple, of recent rows (cleared when large)."""
_JSON_TYPES = (str, bytes)
_fromiso = fromisoformat


def stamp_item(item: Any, created: Any, updated: Any) -> None:
    """Set `item`'s created_at / updated_at from a row's stamps (ISO text parsed, the same
    text once), for the rows both direct paths make items of (`search_items`, the SQLite
    store's one-statement get)."""
    item.created_at = stamp = _fromiso(created) if type(created) is str else created
    item.updated_at = (
        stamp if updated == created else _fromiso(updated) if type(updated) is str else updated
    )


def search_items(d: Dialect, rows: Sequence[Sequence]) -> list[SearchItem]:
    """SearchItems (score None) of (prefix, key, value, created_at, updated_at, ...) rows."""
    out = []
    namespaces = _NAMESPACES
    if len(namespaces) > 4096:
        namespaces.clear()
    decode = d.decode_value
    plain = type(d).decode_value is Dialect.decode_value  # JSON text or bytes: loads
    for row in rows:
        item = _new_search_item(SearchItem)
        prefix = row[0]
        namespace = namespaces.get(prefix)
        if namespace is None:
            namespace = namespaces[prefix] = _namespaces.from_text(prefix)
        item.namespace = namespace
        item.key = row[1]
        value = row[2]
        item.value = _loads(value) if plain and type(value) in _JSON_TYPES else decode(value)
        created, updated = row[3], row[4]
        if type(created) is str and updated == created:  # (stamp_item, inlined: per row)
            item.created_at = item.updated_at = _fromiso(created)
        else:
            stamp_item(item, created, updated)
        item.score = None
        out.append(item)
    return out


def _in_order(rows: Sequence[Sequence]) -> bool:
    """Whether rows (prefix, key, _, _, updated_at, ...) are in the search order."""
    try:
        for a, b in pairwise(rows):
            if a[4] < b[4] or (a[4] == b[4] and (a[0], a[1]) > (b[0], b[1])):
                return False
    except TypeError:  # NULL or non-text stamps: SQL's order is not Python's
        return False
    return True


def run_batch(store: Any, ops: Iterable[Op]) -> Plan:
    d: Dialect = store._dialect
    gets: list[tuple[int, GetOp]] = []
    searches: list[tuple[int, SearchOp]] = []
    lists: list[tuple[int, ListNamespacesOp]] = []
    puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
    count = 0
    for i, op in enumerate(ops):
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            gets.append((i, op))
        elif isinstance(op, SearchOp):
            searches.append((i, op))
        elif isinstance(op, PutOp):
            puts[(op.namespace, op.key)] = op
        elif isinstance(op, ListNamespacesOp):
            lists.append((i, op))
        else:
            raise ValueError(f"Unknown operation type: {type(op)}")  # noqa: TRY004 - LangGraph raises ValueError
        count = i + 1
    results: list[Any] = [None] * count
    embeddings = store.embeddings

    # --- embeddings first (outside the transaction)
    query_vectors: dict[str, list[float]] = {}
    if embeddings is not None:
        queries = list(dict.fromkeys(op.query for _, op in searches if op.query))
        if queries:
            query_vectors = dict(zip(queries, (yield (EMBED_QUERIES, queries)), strict=True))
    pending: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    if embeddings is not None and puts:
        default_paths = store.index_config["__tokenized_fields"]
        for op in puts.values():
            if op.value is None or op.index is False:
                continue
            paths = default_paths if op.index is None else [(p, tokenize_path(p)) for p in op.index]
            ns = _namespaces.to_text(op.namespace)
            for field, text in texts_to_embed(op.value, paths):
                pending[text].append((ns, op.key, field))
    doc_vectors: list[list[float]] = []
    if pending:
        doc_vectors = yield (EMBED_DOCUMENTS, list(pending))
        if len(doc_vectors) != len(pending):
            raise ValueError(
                f"Number of embeddings ({len(doc_vectors)}) does not match number of texts "
                f"({len(pending)})"
            )

    now = datetime.now(_UTC)
    now_p = d.timestamp(now)
    ttl_config = store.ttl_config or {}
    refresh_ok = not d.refresh_needs_config or bool(ttl_config.get("refresh_on_read"))
    omit = bool(ttl_config.get("omit_expired"))
    refresh: list[tuple] = []

    # --- gets: one query per namespace
    if gets:
        by_ns: dict[tuple[str, ...], list[tuple[int, GetOp]]] = defaultdict(list)
        for entry in gets:
            by_ns[entry[1].namespace].append(entry)
        live_sql, live_p = _live(d, now_p, omit)
        for namespace, entries in by_ns.items():
            keys = list(dict.fromkeys(op.key for _, op in entries))
            rows = yield (
                ROWS,
                f"SELECT {_COLUMNS} FROM store WHERE "
                + _and(f"prefix = {d.ph} AND key IN ({d.p(len(keys))})", live_sql),
                [_namespaces.to_text(namespace), *keys, *live_p],
            )
            found = {row[1]: row for row in rows}
            refreshed = set()
            for i, op in entries:
                row = found.get(op.key)
                results[i] = None if row is None else _item(d, row)
                if row is not None and op.refresh_ttl and refresh_ok and op.key not in refreshed:
                    refreshed.add(op.key)
                    refresh.extend(_refresh_rows(d, [row], now))

    # --- searches
    for i, op in searches:
        ranked = bool(op.query) and op.query in query_vectors
        if not ranked:
            rows = yield from search_page(d, op, omit, now_p)
            results[i] = search_items(d, rows)
        else:
            where, params = _search_where(d, op, omit, now_p)
            order = "ORDER BY updated_at DESC, prefix, key"
            rows = yield (ROWS, f"SELECT {_COLUMNS} FROM store WHERE {where} {order}", params)
            vectors: dict[tuple[str, str], list[list[float]]] = defaultdict(list)
            if rows:
                vsql = f"SELECT prefix, key, embedding FROM {d.vectors_table}"
                vparams: list[Any] = []
                if op.namespace_prefix:
                    nsql, vparams = d.prefix_condition(_namespaces.to_text(op.namespace_prefix))
                    vsql += f" WHERE {nsql}"
                for prefix, key, blob in (yield (ROWS, vsql, vparams)):
                    if blob is not None:
                        vectors[(prefix, key)].append(unpack_vector(blob))
            candidates = [(row, vectors.get((row[0], row[1]), [])) for row in rows]
            page = rank(
                query_vectors[op.query],
                candidates,
                op.offset,
                op.limit,
                store.index_config.get("distance_type", "cosine"),
            )
            rows = [row for _, row in page]
            results[i] = [
                _item(d, row, SearchItem, None if score is None else float(score))
                for score, row in page
            ]
        if op.refresh_ttl and refresh_ok:
            refresh.extend(_refresh_rows(d, rows, now))

    # --- namespace listings
    for i, op in lists:
        conds, params = [], []
        for cond in op.match_conditions or ():
            if cond.match_type == "prefix" and cond.path and "*" not in cond.path:
                sql, p = d.prefix_condition(_namespaces.to_text(tuple(cond.path)))
                conds.append(sql)
                params += p
        sql, p = _live(d, now_p, omit)
        conds.append(sql)
        params += p
        rows = yield (ROWS, f"SELECT DISTINCT prefix FROM store WHERE {_and(*conds)}", params)
        results[i] = _namespaces.list_namespaces(
            [_namespaces.from_text(row[0]) for row in rows], op
        )

    if refresh:
        yield (MANY, _refresh_sql(d), refresh)

    # --- writes
    if puts:
        stamp = d.timestamp(now)
        deletes: dict[str, list[str]] = defaultdict(list)
        rows_out: list[Any] = []
        n_rows = 0
        for (namespace, key), op in puts.items():
            ns = _namespaces.to_text(namespace)
            if op.value is None:
                deletes[ns].append(key)
                continue
            ttl = op.ttl if store.supports_ttl else None
            expires = None if ttl is None else d.timestamp(now + timedelta(minutes=ttl))
            rows_out += [ns, key, d.encode_value(dict(op.value)), stamp, stamp, expires, ttl]
            n_rows += 1
        if store.index_config is not None:  # vectors of replaced or deleted values are stale
            stale: dict[str, list[str]] = defaultdict(list)
            for namespace, key in puts:
                stale[_namespaces.to_text(namespace)].append(key)
            for ns, keys in stale.items():
                yield (
                    EXEC,
                    (
                        f"DELETE FROM {d.vectors_table} WHERE prefix = {d.ph} "
                        f"AND key IN ({d.p(len(keys))})"
                    ),
                    [ns, *keys],
                )
        for ns, keys in deletes.items():
            if keys:
                yield (
                    EXEC,
                    f"DELETE FROM store WHERE prefix = {d.ph} AND key IN ({d.p(len(keys))})",
                    [ns, *keys],
                )
        # one statement per chunk of rows (SQLite binds at most 32766 parameters)
        for start in range(0, n_rows, 500):
            chunk = rows_out[start * 7 : (start + 500) * 7]
            yield (EXEC, d.upsert(len(chunk) // 7), chunk)
        if pending:
            vrows = []
            for text, vector in zip(pending, doc_vectors, strict=True):
                blob = pack_vector(vector)
                for ns, key, field in pending[text]:
                    vrows.append((ns, key, field, blob))
            yield (
                MANY,
                (
                    f"INSERT INTO {d.vectors_table} (prefix, key, field_name, embedding) "
                    f"VALUES ({d.p(4)})"
                ),
                vrows,
            )
    return results


def sweep(store: Any) -> Plan:
    """Delete expired items (and their vectors); returns [count]."""
    d: Dialect = store._dialect
    now = d.timestamp(datetime.now(_UTC))
    expired = f"expires_at IS NOT NULL AND expires_at <= {d.ph}"
    if store.index_config is not None:
        yield (
            EXEC,
            (
                f"DELETE FROM {d.vectors_table} WHERE (prefix, key) IN "
                f"(SELECT prefix, key FROM store WHERE {expired})"
            ),
            [now],
        )
    count = yield (EXEC, f"DELETE FROM store WHERE {expired}", [now])
    return [count]
