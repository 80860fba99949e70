"""A cache in Redis (entries expire with Redis' own TTLs).

The `redis` package is optional: `RedisCache` takes any client object with Redis'
`mget` / `pipeline` / `keys` / `delete` methods; only `RedisCache.from_url` imports
`redis`, and says how to install it when it is missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from warpgraph.cache.base import BaseCache, FullKey, Namespace, ValueT
from warpgraph.checkpoint.serde.base import SerializerProtocol

__all__ = ("RedisCache",)


def _import_redis() -> Any:
    try:
        import redis
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("RedisCache.from_url needs the `redis` package: pip install redis") from e
    return redis


class RedisCache(BaseCache[ValueT]):
    """Each entry is one Redis string `{prefix}{ns parts joined by ':'}:{key}` holding
    `b"{encoding}:" + payload`. A Redis that cannot be reached reads as empty and drops
    writes (a cache is an optimisation, never a reason for a run to fail)."""

    def __init__(
        self,
        redis: Any,
        *,
        serde: SerializerProtocol | None = None,
        prefix: str = "langgraph:cache:",
    ) -> None:
        super().__init__(serde=serde)
        self.redis = redis
        self.prefix = prefix

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisCache:
        """A cache on a new `redis.Redis.from_url(url)` client (imports `redis`)."""
        client = _import_redis().Redis.from_url(url, decode_responses=False)
        return cls(client, **kwargs)

    def _name(self, ns: Sequence[str], key: str) -> str:
        return f"{self.prefix}{':'.join(ns)}:{key}" if ns else f"{self.prefix}{key}"

    def _pattern(self, ns: Sequence[str]) -> str:
        return f"{self.prefix}{':'.join(ns)}:*" if ns else f"{self.prefix}*"

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        if not keys:
            return {}
        keys = list(keys)
        try:
            raw = self.redis.mget([self._name(ns, key) for ns, key in keys])
        except Exception:  # noqa: BLE001 - unreachable Redis: nothing cached
            return {}
        found: dict[FullKey, ValueT] = {}
        loads = self.serde.loads_typed
        for full, blob in zip(keys, raw):
            if blob is None:
                continue
            try:
                tag, _, data = bytes(blob).partition(b":")
                found[(tuple(full[0]), full[1])] = loads((tag.decode(), data))
            except Exception:  # noqa: BLE001, S112 - an entry we cannot read is a miss
                continue
        return found

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return self.get(keys)

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        if not pairs:
            return
        dumps = self.serde.dumps_typed
        pipe = self.redis.pipeline()
        for (ns, key), (value, ttl) in pairs.items():
            tag, data = dumps(value)
            blob = tag.encode() + b":" + data
            if ttl is None:
                pipe.set(self._name(ns, key), blob)
            else:
                pipe.setex(self._name(ns, key), ttl, blob)
        try:
            pipe.execute()
        except Exception:  # noqa: BLE001, S110 - unreachable Redis: nothing stored
            pass

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        self.set(pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        patterns = [self._pattern(())] if namespaces is None else map(self._pattern, namespaces)
        try:
            doomed = [k for p in patterns for k in self.redis.keys(p)]
            if doomed:
                self.redis.delete(*doomed)
        except Exception:  # noqa: BLE001, S110 - unreachable Redis: nothing to clear
            pass

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)
