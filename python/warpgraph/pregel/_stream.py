"""Where a run's chunks go (`Stream`), and when its output values may be read lazily."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ("LATEST", "Stream", "duplex")


class Stream:
    """Where the loop puts `(namespace, mode, payload)` chunks; `modes` filters them."""

    __slots__ = ("modes", "put")

    def __init__(self, put: Callable[[tuple], None], modes: set[str]) -> None:
        self.put = put
        self.modes = modes


def duplex(*streams: Stream) -> Stream:
    """One stream feeding several (each gets only its own modes)."""

    def put(chunk: tuple) -> None:
        for s in streams:
            if chunk[1] in s.modes:
                s.put(chunk)

    return Stream(put, {m for s in streams for m in s.modes})


class _Latest:
    __slots__ = ()

    def __repr__(self) -> str:
        return "LATEST"


LATEST: Any = _Latest()
"""`latest_values` marker: the output channels' values now (read by `latest_output`)."""
_LAZY_TYPES: Any = None


def _lazy_ok(graph: Any, keys: Any) -> bool:
    """Every output channel changes only through writes that also produce a values chunk
    (LastValue / BinaryOperatorAggregate: no clearing on a new step, consume or finish)."""
    global _LAZY_TYPES
    if _LAZY_TYPES is None:
        from warpgraph.channels import BinaryOperatorAggregate, LastValue

        _LAZY_TYPES = (LastValue, BinaryOperatorAggregate)
    chans = graph.channels
    cache = graph.__dict__.setdefault("_lazy_values_cache", {})
    key = keys if isinstance(keys, str) else tuple(keys)
    ok = cache.get(key)
    if ok is None:
        ok = cache[key] = all(
            type(chans.get(k)) in _LAZY_TYPES for k in ((keys,) if isinstance(keys, str) else keys)
        )
    return ok
