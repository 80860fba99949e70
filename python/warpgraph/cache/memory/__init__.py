"""A process-local cache (a dict of namespaces, guarded by a lock)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

from warpgraph.cache.base import BaseCache, FullKey, Namespace, ValueT, expiry_of
from warpgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ("InMemoryCache",)


class InMemoryCache(BaseCache[ValueT]):
    """Entries kept serialized in memory, per namespace: `{ns: {key: (tag, bytes, expiry)}}`.

    Values are stored through the serializer (as the persistent caches store them), so a
    hit hands back a fresh copy, never the object that was stored.
    """

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self._cache: dict[Namespace, dict[str, tuple[str, bytes, float | None]]] = {}
        self._lock = threading.RLock()

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        found: dict[FullKey, ValueT] = {}
        if not keys:
            return found
        loads = self.serde.loads_typed
        with self._lock:
            now = time.time()
            for ns, key in keys:
                ns = tuple(ns)
                entries = self._cache.get(ns)
                if not entries or key not in entries:
                    continue
                tag, data, expires = entries[key]
                if expires is not None and now >= expires:
                    del entries[key]  # expired: gone for everyone
                    continue
                found[(ns, key)] = loads((tag, data))
        return found

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return self.get(keys)

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        dumps = self.serde.dumps_typed
        with self._lock:
            now = time.time()
            for (ns, key), (value, ttl) in pairs.items():
                tag, data = dumps(value)
                self._cache.setdefault(tuple(ns), {})[key] = (tag, data, expiry_of(ttl, now))

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        self.set(pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._cache.clear()
                return
            for ns in namespaces:
                self._cache.pop(tuple(ns), None)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)
