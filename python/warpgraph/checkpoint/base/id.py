"""UUID version 6 checkpoint ids (LangGraph's bit layout; monotonic within the process)."""

from __future__ import annotations

import random
import threading
import time
import uuid

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

    def __init__(
        self,
        hex: str | None = None,
        bytes: bytes | None = None,
        bytes_le: bytes | None = None,
        fields: tuple[int, int, int, int, int, int] | None = None,
        int: int | None = None,
        version: int | None = None,
        *,
        is_safe: uuid.SafeUUID = uuid.SafeUUID.unknown,
    ) -> None:
        if int is None or (hex, bytes, bytes_le, fields) != (None, None, None, None):
            super().__init__(hex, bytes, bytes_le, fields, int, version, is_safe=is_safe)
            return
        if not 0 <= int < 1 << 128:
            raise ValueError("int is out of range (need a 128-bit value)")
        if version is not None:
            if version not in (6, 7, 8):
                raise ValueError("illegal version number")
            int = (int & ~(0xC000 << 48)) | (0x8000 << 48)  # RFC 4122 variant
            int = (int & ~(0xF000 << 64)) | (version << 76)
        super().__init__(int=int, is_safe=is_safe)

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
    `node` defaults to 48 random bits.
    """
    if node is None and _native_uuid6 is not None:
        return UUID(_native_uuid6(clock_seq))
    ts = _next_timestamp()
    if clock_seq is None:
        clock_seq = random.getrandbits(14)
    if node is None:
        node = random.getrandbits(48)
    value = ((ts >> 12) & 0xFFFFFFFFFFFF) << 80
    value |= (ts & 0x0FFF) << 64
    value |= (clock_seq & 0x3FFF) << 48
    value |= node & 0xFFFFFFFFFFFF
    return UUID(int=value, version=6)
