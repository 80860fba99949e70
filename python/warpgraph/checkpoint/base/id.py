"""UUID version 6 checkpoint ids (LangGraph's bit layout; monotonic within the process)."""

from __future__ import annotations

import random
import threading
import time
import uuid
from typing import Any

try:
    from warpgraph import _core

    _native_uuid6 = getattr(_core, "uuid6", None)
except ImportError:  # pragma: no cover
    _native_uuid6 = None

_GREGORIAN_OFFSET = 0x01B21DD213814000  # 100-ns ticks from 1582-10-15 to 1970-01-01
_lock = threading.Lock()
_last_timestamp = 0


class UUID(uuid.UUID):
    """A `uuid.UUID` that also accepts `int=` with `version=` 6, 7 or 8."""

    __slots__ = ()

    _ARGS = ("hex", "bytes", "bytes_le", "fields", "int", "version")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """`uuid.UUID`'s constructor; `int=` with `version=` 6, 7 or 8 also works (the
        standard library stops at 5): the version and RFC 4122 variant bits are set."""
        given = dict(zip(UUID._ARGS, args))
        given.update(kwargs)
        version, value = given.get("version"), given.get("int")
        alone = all(given.get(name) is None for name in UUID._ARGS[:4])
        if version not in (6, 7, 8) or value is None or not alone:
            super().__init__(*args, **kwargs)
            return
        if not 0 <= value < 1 << 128:
            raise ValueError("int is out of range (need a 128-bit value)")
        value = (value & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
        value = (value & ~(0xF000 << 64)) | (version << 76)
        super().__init__(int=value, is_safe=given.get("is_safe", uuid.SafeUUID.unknown))

    @property
    def subsec(self) -> int:
        return ((self.int >> 64) & 0x0FFF) << 8 | ((self.int >> 54) & 0xFF)

    @property
    def time(self) -> int:
        if self.version == 6:
            return (self.time_low << 28) | (self.time_mid << 12) | (self.time_hi_version & 0x0FFF)
        if self.version == 7:
            return self.int >> 80
        if self.version == 8:
            return (self.int >> 80) * 10**6 + -(-self.subsec * 10**6 // 2**20)
        return super().time


def _next_timestamp() -> int:
    global _last_timestamp
    ts = time.time_ns() // 100 + _GREGORIAN_OFFSET
    with _lock:
        if ts <= _last_timestamp:
            ts = _last_timestamp + 1
        _last_timestamp = ts
    return ts


def uuid6(node: int | None = None, clock_seq: int | None = None) -> UUID:
    """A version-6 UUID: 60-bit timestamp (strictly increasing), 14-bit clock_seq, 48-bit node.

    `clock_seq` is masked to 14 bits (LangGraph passes the step: -1 -> 0x3FFF).
    `node` defaults to 48 random bits. The random bits come from the global `random`, as
    LangGraph's do (a seeded program draws the same values after making ids).
    """
    if clock_seq is None:
        clock_seq = random.getrandbits(14)
    if node is None:
        node = random.getrandbits(48)
        if _native_uuid6 is not None:  # the native timestamp; the node bits drawn here
            return UUID("%s%012x" % (_native_uuid6(clock_seq)[:24], node))  # noqa: UP031
    ts = _next_timestamp()
    value = ((ts >> 12) & 0xFFFFFFFFFFFF) << 80
    value |= (ts & 0x0FFF) << 64
    value |= (clock_seq & 0x3FFF) << 48
    value |= node & 0xFFFFFFFFFFFF
    return UUID(int=value, version=6)
