"""The store interface: items, operations and `BaseStore` (LangGraph's `langgraph.store.base`).

A store keeps JSON-like dicts under (namespace tuple, key). Every public method is a thin
wrapper that validates its arguments and runs ONE operation through `batch` / `abatch`, the
only two methods an implementation must provide. The sync and async wrappers are generated
from one declaration each (`_twin`), so they cannot drift apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal, NamedTuple, TypedDict

from warpgraph._internal._isotime import fromisoformat
from warpgraph.store.base.embed import (
    AEmbeddingsFunc,
    EmbeddingsFunc,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

__all__ = (
    "NOT_PROVIDED",
    "BaseStore",
    "Embeddings",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespaceMatchType",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
    "ensure_embeddings",
    "get_text_at_path",
    "tokenize_path",
    "validate_op_namespace",
)


class NotProvided:
    """Sentinel type of an argument left out (falsy), e.g. `put(..., ttl=...)`."""

    __slots__ = ()

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_PROVIDED = NotProvided()


def _as_datetime(value: Any) -> datetime:
    return fromisoformat(value) if isinstance(value, str) else value


class Item:
    """A stored value with its namespace, key and timestamps (ISO strings are parsed, so an
    item rebuilt from its `dict()` compares equal)."""

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime,
        updated_at: datetime,
    ) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _as_datetime(created_at)
        self.updated_at = _as_datetime(updated_at)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Item) and (
            (self.namespace, self.key, self.value, self.created_at, self.updated_at)
            == (other.namespace, other.key, other.value, other.created_at, other.updated_at)
        )

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict:
        """JSON-ready form: namespace as a list, timestamps as ISO strings."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={v!r}" for name, v in self.dict().items())
        return f"{type(self).__name__}({fields})"


class SearchItem(Item):
    """An item found by `search`, with its similarity `score` (None without a query)."""

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value, key=key, namespace=namespace, created_at=created_at, updated_at=updated_at
        )
        self.score = score

    def dict(self) -> dict:
        out = super().dict()
        out["score"] = self.score
        return out


# --- operations ---------------------------------------------------------------------------


class GetOp(NamedTuple):
    """Read one item."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True
    """Restart the item's TTL (stores with TTL support)."""


class SearchOp(NamedTuple):
    """Find items under a namespace prefix, by filter and/or by similarity to `query`."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    """Exact values or `{"$op": x}` comparisons ($eq $ne $gt $gte $lt $lte $in $nin) per key."""
    limit: int = 10
    offset: int = 0
    query: str | None = None
    """Natural-language query (stores with an index rank by similarity)."""
    refresh_ttl: bool = True


NamespacePath = tuple[str, ...]
"""A namespace pattern; a "*" label matches any one label."""

NamespaceMatchType = Literal["prefix", "suffix"]
"""Where a `MatchCondition`'s path is matched."""


class MatchCondition(NamedTuple):
    """A namespace pattern anchored at the start ("prefix") or the end ("suffix")."""

    match_type: NamespaceMatchType
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """List the stored namespaces (sorted), optionally truncated to `max_depth` labels."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    """Store `value` under (namespace, key); value None deletes the item."""

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any] | None
    index: Literal[False] | list[str] | None = None  # type: ignore[assignment]
    """Fields to embed: None the store's configured fields, False none, else these paths."""
    ttl: float | None = None
    """Minutes until the item expires (None: never)."""


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None


class InvalidNamespaceError(ValueError):
    """A namespace (or one of its labels) that a store does not accept."""


class TTLConfig(TypedDict, total=False):
    """Expiry settings of a store that supports TTL."""

    refresh_on_read: bool
    """Reads restart an item's TTL by default (default True)."""
    omit_expired: bool
    default_ttl: float | None
    """TTL in minutes of puts that give none."""
    sweep_interval_minutes: int | None
    """How often the background sweeper deletes expired items."""


class IndexConfig(TypedDict, total=False):
    """Vector-search settings: embedding size, the embeddings, the fields embedded."""

    dims: int
    embed: Any
    """An embeddings object, a function texts -> vectors, or a "provider:model" string."""
    fields: list[str] | None
    """Paths of the texts to embed (default ["$"]: the whole value as JSON)."""


# --- validation ---------------------------------------------------------------------------


def _validate_namespace_labels(namespace: tuple[str, ...]) -> None:
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Invalid namespace label '{label}' found in {namespace}. Namespace labels"
                f" must be strings, but got {type(label).__name__}."
            )
        if not label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot be empty strings. Got {label} in {namespace}"
            )
        if "." in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label '{label}' found in {namespace}. "
                "Namespace labels cannot contain periods ('.')."
            )
        if "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label '{label}' found in {namespace}. "
                "Namespace labels cannot contain NUL bytes ('\\x00')."
            )


READABLE_NAMESPACES: set[tuple[str, ...]] = set()
"""Namespace tuples whose labels passed `_validate_namespace_labels` (single-op fast paths
check a namespace once; bounded)."""


def _check_read_namespace(namespace: tuple[str, ...]) -> None:
    """`_validate_namespace_labels`, remembered for tuples (see READABLE_NAMESPACES)."""
    _validate_namespace_labels(namespace)
    if type(namespace) is tuple and len(READABLE_NAMESPACES) < 4096:
        READABLE_NAMESPACES.add(namespace)


def _validate_namespace(namespace: tuple[str, ...]) -> None:
    """A namespace items can be written to: non-empty, valid labels, not under "langgraph"."""
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    _validate_namespace_labels(namespace)
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {namespace}'
        )


def validate_op_namespace(op: Op) -> None:
    """Check the labels of the namespace(s) an operation names."""
    if isinstance(op, SearchOp):
        _validate_namespace_labels(op.namespace_prefix)
    elif isinstance(op, ListNamespacesOp):
        for cond in op.match_conditions or ():
            _validate_namespace_labels(cond.path)
    elif isinstance(op, (GetOp, PutOp)):
        _validate_namespace_labels(op.namespace)


def _ensure_refresh(ttl_config: TTLConfig | None, refresh_ttl: bool | None = None) -> bool:
    """The refresh flag of a read: explicit, else the store's `refresh_on_read`, else True."""
    if refresh_ttl is not None:
        return refresh_ttl
    return True if ttl_config is None else ttl_config.get("refresh_on_read", True)


def _ensure_ttl(
    ttl_config: TTLConfig | None, ttl: float | None | NotProvided = NOT_PROVIDED
) -> Any:
    """The TTL of a put: explicit (None included), else the store's `default_ttl`."""
    if ttl is NOT_PROVIDED:
        return ttl_config.get("default_ttl") if ttl_config else None
    return ttl


def _list_op(
    prefix: NamespacePath | None,
    suffix: NamespacePath | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> ListNamespacesOp:
    _validate_namespace_labels(prefix or ())
    _validate_namespace_labels(suffix or ())
    conditions = []
    if prefix:
        conditions.append(MatchCondition("prefix", prefix))
    if suffix:
        conditions.append(MatchCondition("suffix", suffix))
    return ListNamespacesOp(tuple(conditions), max_depth, limit, offset)


def _ttl_unsupported(store: BaseStore) -> NotImplementedError:
    return NotImplementedError(
        f"TTL is not supported by {type(store).__name__}. "
        f"Use a store implementation that supports TTL or set ttl=None."
    )


# --- the interface ------------------------------------------------------------------------


class BaseStore(ABC):
    """A key-value store of JSON-like dicts under hierarchical namespaces, with optional
    filtering, vector search and TTL. Subclasses implement `batch` and `abatch`."""

    supports_ttl: bool = False
    ttl_config: TTLConfig | None = None

    __slots__ = ("__weakref__",)

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in one go; one result per op (None for puts)."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`."""

    # Each public method pair (get/aget, ...) is generated from the op builder below
    # (`_<name>_op`) by `_define`.

    def _get_op(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> GetOp:
        _validate_namespace_labels(namespace)
        return GetOp(namespace, str(key), _ensure_refresh(self.ttl_config, refresh_ttl))

    def _search_op(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> SearchOp:
        _validate_namespace_labels(namespace_prefix)
        return _search_op_of(self, namespace_prefix, query, filter, limit, offset, refresh_ttl)

    def _put_op(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> PutOp:
        _validate_namespace(namespace)
        if ttl is not NOT_PROVIDED and ttl is not None and not self.supports_ttl:
            raise _ttl_unsupported(self)
        return PutOp(namespace, str(key), value, index, _ensure_ttl(self.ttl_config, ttl))

    def _delete_op(self, namespace: tuple[str, ...], key: str) -> PutOp:
        _validate_namespace_labels(namespace)
        return PutOp(namespace, str(key), None, None, None)

    def _list_namespaces_op(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> ListNamespacesOp:
        return _list_op(prefix, suffix, max_depth, limit, offset)


_PAIRS = {
    "get": "Item | None: the item under (namespace, key), or None.",
    "search": "Items under `namespace_prefix`, filtered and (with `query` and an index) "
    "ranked by similarity; `limit` / `offset` page the results.",
    "put": "Store (or replace) `value` under (namespace, key); `index` picks the fields "
    "to embed (False: none); `ttl` in minutes (stores with TTL support).",
    "delete": "Delete the item under (namespace, key) (no error if absent).",
    "list_namespaces": "Stored namespaces matching `prefix` / `suffix` patterns ('*' matches "
    "one label), truncated to `max_depth` labels, sorted, paged by `limit` / `offset`.",
}
_RETURNS_NONE = ("put", "delete")


def _search_op_of(
    store: Any,
    namespace_prefix: tuple[str, ...],
    query: str | None,
    filter: dict[str, Any] | None,
    limit: int,
    offset: int,
    refresh_ttl: bool | None,
) -> SearchOp:
    """`store._search_op` after its namespace check (for stores that checked it already)."""
    return SearchOp(
        namespace_prefix,
        filter,
        limit,
        offset,
        query,
        _ensure_refresh(store.ttl_config, refresh_ttl),
    )


def _define(name: str, doc: str) -> None:
    """Define BaseStore.<name> and BaseStore.a<name> from `_<name>_op`'s signature: the
    sync method runs the op through `self.batch`, the async one through `self.abatch`."""
    from warpgraph._internal._codegen import define_like

    builder = getattr(BaseStore, f"_{name}_op")
    tail = "" if name in _RETURNS_NONE else "return "
    for fn_name, keyword, run in (
        (name, "def", "self.batch({})[0]"),
        ("a" + name, "async def", "(await self.abatch({}))[0]"),
    ):

        def body(_: list[str], call: list[str], run: str = run) -> list[str]:
            return [tail + run.format(f"[self._{name}_op({', '.join(call)})]")]

        fn = define_like(keyword, fn_name, builder, body, {})
        fn.__doc__ = doc if fn_name == name else f"Async `{name}`: {doc}"
        fn.__qualname__ = f"BaseStore.{fn_name}"
        fn.__module__ = __name__
        fn.__annotations__ = {k: v for k, v in builder.__annotations__.items() if k != "return"}
        setattr(BaseStore, fn_name, fn)


for _name, _doc in _PAIRS.items():
    _define(_name, _doc)
del _name, _doc


def __getattr__(name: str) -> Any:
    if name == "Embeddings":
        from warpgraph.store.base.embed import _embeddings_base

        return _embeddings_base()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# re-exported for `from warpgraph.store.base import ...` (LangGraph's module has them too)
_EXPORTED_HELPERS = (AEmbeddingsFunc, EmbeddingsFunc)
