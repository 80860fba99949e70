"""Lists that hold the same objects many times, encoded once per object.

A msgpack array is its header followed by each item's own encoding, which does not
depend on the item's position, so an item object that stands in a list many times (a
state list built by `operator.add` from slices of itself, say) has the same bytes at
every position. `pack_repeating` encodes each distinct item object (by identity) once
and joins the copies: the very bytes a single `packb` of the list gives, for a fraction
of the work when the repeats are many. A list whose items are scalars, or whose sampled
items are all distinct, is left to the single call (None): the check costs well under a
microsecond there, a sample of at most `SAMPLE` identities."""

from __future__ import annotations

from collections.abc import Callable
from struct import pack as _struct_pack
from typing import Any

__all__ = ("MIN_ITEMS", "array_header", "pack_repeating")

MIN_ITEMS = 16  # shorter lists: one call is as cheap
SAMPLE = 64  # item identities compared to decide
_SCALARS = frozenset((int, float, str, bool, type(None), bytes))


def array_header(n: int) -> bytes:
    """The msgpack array header for `n` items (the smallest form, as every encoder)."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 0x10000:
        return b"\xdc" + _struct_pack(">H", n)
    return b"\xdd" + _struct_pack(">I", n)


def pack_repeating(items: list, packb: Callable[[Any], bytes]) -> bytes | None:
    """`packb(items)`'s bytes built from one `packb` per distinct item, or None when the
    list shows no repeated item objects (then the caller encodes it in one call)."""
    n = len(items)
    if n < MIN_ITEMS or type(items[0]) in _SCALARS or type(items[-1]) in _SCALARS:
        return None
    step = max(1, n // SAMPLE)
    sample = items[::step]
    if len(set(map(id, sample))) == len(sample):
        return None
    memo: dict[int, bytes] = {}
    parts = [array_header(n)]
    append = parts.append
    for item in items:
        b = memo.get(id(item))
        if b is None:
            b = memo[id(item)] = packb(item)
        append(b)
    return b"".join(parts)
