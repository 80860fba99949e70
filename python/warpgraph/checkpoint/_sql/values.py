"""Decoding many stored values at once (a snapshot's channel values, a tuple's writes).

With warpgraph's default serializer a value is stored as ("msgpack", bytes), each bytes
one complete msgpack object (or as ("null", b""): None, decoded as msgpack's nil). `loads_many` decodes a list of them in ONE `ormsgpack` call:
their bytes joined behind a msgpack array header decode as the list of the values (with
the serializer's own extension hook and options), instead of three Python calls and a
crossing per value. Any value of another type, another serializer, or a batch that fails
to decode (then each value's own error is raised) goes through `serde.loads_typed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ormsgpack

from warpgraph.checkpoint._sql.appends import array_header as _array_header
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = (
    "freeze_plain",
    "loads_given",
    "loads_many",
    "msgpack_payload",
    "thaw_plain",
    "unpack_payload",
)

_OPTION = ormsgpack.OPT_NON_STR_KEYS  # (the decoder's own)
_NIL = b"\xc0"


def loads_many(serde: Any, typed: Sequence[tuple[str, bytes]]) -> list[Any]:
    """`[serde.loads_typed(t) for t in typed]`, in one decoder call when it can."""
    if len(typed) > 1 and type(serde) is JsonPlusSerializer:
        payloads = []
        for t in typed:
            if type(t) is not tuple or len(t) != 2 or type(t[1]) is not bytes:
                break
            if t[0] == "msgpack":
                payloads.append(t[1])
            elif t[0] == "null":  # (None, as `loads_typed` gives it: msgpack's nil)
                payloads.append(_NIL)
            else:
                break
        else:
            decoder = serde._decoder
            try:
                out = ormsgpack.unpackb(
                    _array_header(len(payloads)) + b"".join(payloads),
                    ext_hook=decoder.hook,
                    option=_OPTION,
                )
            except (ValueError, TypeError, RecursionError):
                pass  # each value again: the failing one raises its own error
            else:
                if type(out) is list and len(out) == len(payloads):
                    return out
    loads = serde.loads_typed
    return [loads(t) for t in typed]


def loads_given(serde: Any, typed: Sequence[tuple[str, bytes]], given: dict[int, Any]) -> list[Any]:
    """`loads_many`, except that the values at the indexes of `given` are those (decoded
    already: rebuilt append deltas)."""
    if not given:
        return loads_many(serde, typed)
    rest = iter(loads_many(serde, [t for i, t in enumerate(typed) if i not in given]))
    return [given[i] if i in given else next(rest) for i in range(len(typed))]


def msgpack_payload(serde: Any, typed: Sequence[tuple[str, bytes]], limit: int) -> bytes | None:
    """The msgpack array of `typed` (`unpack_payload` decodes it as their list), or None
    when the serializer or a value's type does not allow that, or it exceeds `limit` bytes."""
    if type(serde) is not JsonPlusSerializer:
        return None
    payloads = []
    size = 0
    for t in typed:
        if type(t) is not tuple or len(t) != 2 or type(t[1]) is not bytes:
            return None
        if t[0] == "msgpack":
            payloads.append(t[1])
        elif t[0] == "null":
            payloads.append(_NIL)
        else:
            return None
        size += len(t[1])
    if size > limit:
        return None
    return _array_header(len(payloads)) + b"".join(payloads)


def unpack_payload(serde: Any, payload: bytes) -> list[Any]:
    """The values of a `msgpack_payload` (fresh objects on every call)."""
    return ormsgpack.unpackb(payload, ext_hook=serde._decoder.hook, option=_OPTION)


# the types of the values `freeze_plain` shares between the copies `thaw_plain` makes (immutable)
PLAIN_TYPES = frozenset((str, int, float, bool, bytes, type(None)))


def freeze_plain(d: dict) -> tuple | None:
    """`d`'s items as `thaw_plain` copies them: (key, how, value), the value a leaf (0: shared),
    a dict of leaves (1: copied), a dict of dicts of leaves (2: both levels copied) or a
    list of leaves (3: kept as a tuple, copied as a list); None if `d` holds anything else.
    The containers are copied here, so the caller may change `d` afterwards."""
    if type(d) is not dict:
        return None
    leaves = PLAIN_TYPES
    items = []
    for k, v in d.items():
        t = type(v)
        if t in leaves:
            items.append((k, 0, v))
        elif t is dict:
            if all(type(x) in leaves for x in v.values()):
                items.append((k, 1, dict(v)))
            elif all(
                type(x) is dict and all(type(y) in leaves for y in x.values()) for x in v.values()
            ):
                items.append((k, 2, {n: dict(x) for n, x in v.items()}))
            else:
                return None
        elif t is list and all(type(x) in leaves for x in v):
            items.append((k, 3, tuple(v)))
        else:
            return None
    return tuple(items)


def thaw_plain(items: tuple) -> dict:
    """A fresh dict of `freeze_plain` items (new containers, the immutable leaves shared)."""
    out = {}
    for k, how, v in items:
        if how == 0:
            out[k] = v
        elif how == 1:
            out[k] = v.copy()
        elif how == 2:
            out[k] = {n: x.copy() for n, x in v.items()}
        else:
            out[k] = list(v)
    return out
