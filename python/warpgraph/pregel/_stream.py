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
