"""The cache interface: batched reads and writes keyed by (namespace, key)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Generic, TypeVar

from warpgraph.checkpoint.serde.base import SerializerProtocol
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

ValueT = TypeVar("ValueT")
Namespace = tuple[str, ...]
"""A group of entries (a node's or a task function's results) that is cleared at once."""
FullKey = tuple[Namespace, str]
"""Where one entry lives: its namespace and its key inside it."""

__all__ = ("BaseCache", "FullKey", "Namespace", "ValueT")


class BaseCache(ABC, Generic[ValueT]):
    """A store of values with optional expiry, read and written in batches.

    Every method takes many entries at once: the run loop asks once per step for all the
    tasks that could be answered from the cache. `set` takes `{full_key: (value, ttl)}`
    with `ttl` in seconds (None: kept until cleared). Expired entries are never returned.
    """

    serde: SerializerProtocol = JsonPlusSerializer()

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        if serde is not None:
            self.serde = serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The live entries among `keys` (missing or expired ones are left out)."""

    @abstractmethod
    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async `get`."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store each value under its key, expiring `ttl` seconds from now (None: never)."""

    @abstractmethod
    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Async `set`."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Drop every entry of `namespaces` (None: of all namespaces)."""

    @abstractmethod
    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async `clear`."""


def expiry_of(ttl: float | None, at: float | None = None) -> float | None:
    """The POSIX time at which an entry stored now with `ttl` seconds expires."""
    if ttl is None:
        return None
    return (time.time() if at is None else at) + ttl
