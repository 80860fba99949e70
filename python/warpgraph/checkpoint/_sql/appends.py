"""Append deltas: a growing list channel stored as the items appended since its last value.

Why: a `messages` list with an `operator.add` / `add_messages` reducer grows by a few
items per step, and a saver storing each new version whole writes O(turns^2) bytes (and
encodes as much) over a thread. Here a saver stores such a version as a *delta*: only the
new items, plus a reference to the version they extend.

Detection (exact, never a guess). For each (thread, ns, channel) the saver keeps a `Tail`:
the version it last stored for that channel, and a tuple holding *the very objects* of that
list value (a snapshot, so an in-place change of the list object is seen). A new value is
stored as a delta of that version when it is a `list` (exactly), at least as long as the
tail, and `new[i] is tail.items[i]` for every i < len(tail) (a C-speed `map(operator.is_)`).
The engine hands the reducer's result to the saver, and both reducers build a new list
from the old one, so an append keeps the prefix's objects; anything else (a reducer that
rewrote the list, `add_messages` replacing a message by id, RemoveMessage, Overwrite, a
value decoded by some other read, or a non-list value) fails the check and is stored
whole, as before. A saver's own `get_tuple` also records the objects it decoded for a
list value (`read_tail`): the engine resumes a thread (the next turn of a chat is a new
`invoke`) or forks from an older checkpoint with those objects, and its next value for
the channel then extends the version that read returned (the right base for a fork). The tail's tuple keeps its items alive, so an id
can never be reused by another object while it is compared.

Bytes. With the serializer's typed output ("msgpack", b), a list is a msgpack array:
an array header followed by each item's own encoding, which does not depend on its
position. So the appended items' encoding (their array, header stripped) concatenated
after the previous version's items and behind a header for the total count IS the full
list's encoding, byte for byte. A delta is stored as the typed value
`(DELTA_TYPE, packb([FORMAT, prev_version, prefix_count, count, depth, chain_bytes,
base_bytes, items]))`. A value whose typed form is not "msgpack" (another or an encrypting
serializer, a pickled fallback) is stored whole.

Snapshots. A delta chain is bounded: a value is stored whole (a new base) when the chain
would reach `MAX_DEPTH` deltas or its delta bytes would exceed the base's own size. The
second rule makes the bases grow geometrically, so the total stored bytes stay O(total
items) (each base at least doubles the previous one while the list grows by small
appends) and a rebuild reads at most about twice the final value's bytes.

Reads. `rebuild` walks the chain back to its base (a whole "msgpack" list) and joins
the parts; it checks every link (format, types, that each delta's prefix count is its
predecessor's item count, no cycle, a base that is a list) and decodes the join once
with a sentinel item after the last part: a part holding more or fewer items than it
claims moves or swallows the sentinel, so damaged or hostile delta bytes raise
`AppendDeltaError` (a `SerdeDecodeError`) naming the channel, version and the fault,
never a silent wrong value. Readers get the full value: `get_tuple` / `list` return
LangGraph's exact checkpoint.

Integrity of chains. A delta names its predecessor's *version*; a saver that deletes
blobs keeps every version a live version's chain reaches (`chain_versions`), and a saver
that stores a version again with other bytes first stores its dependents whole
(`dependents`). Values written before this module existed are plain blobs and load as
they always did.

Savers. Every saver keeps its tails in one `Tails` and encodes a put's list values with
`Tails.encode` (InMemorySaver keeps a put's tails once it is stored; the SQL savers, whose
puts are stored in the order they are encoded, at once: `Tails.encoder`). A failed write
makes a SQL saver drop all its tails, and the SQLite saver's reruns of a failed batch
(savepoints, the native writer's fallback) store every value whole, so no delta names a
version that was not stored. SQLite keeps small values only inline in its checkpoint
records: a delta is never inline, and a chain's base is larger than the inline limit
(`min_base`), so every link has a blob row. Postgres follows a chain in SQL, one
primary-key lookup per link (`PREV_VERSION_SQL` reads the base version from a delta's
bytes; only a `text_version` may be one): reads fetch a delta's chain in one more
statement, and prune / delete_for_runs keep the rows live chains read.
Full values cached by a saver (`Rebuilt`) end later walks early.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Container, Hashable
from typing import Any

import ormsgpack

from warpgraph.checkpoint.serde._decode import SerdeDecodeError

__all__ = (
    "DELTA_TYPE",
    "AppendDeltaError",
    "Rebuilt",
    "Tail",
    "Tails",
    "chain_versions",
    "encode_value",
    "keep_tail",
    "read_tail",
    "rebuild",
)

DELTA_TYPE = "wg-append"  # the type tag of a stored delta (never a serializer's)
FORMAT = 1
MAX_DEPTH = 256  # deltas in a chain before a value is stored whole again
_SENTINEL = "\x00warpgraph append-delta end\x00"
_SENTINEL_BYTES = ormsgpack.packb(_SENTINEL)
Typed = tuple[str, bytes]


class AppendDeltaError(SerdeDecodeError):
    """A stored append delta (or its chain) is damaged, inconsistent or missing a link."""


class Tail:
    """What a saver last stored (or read) for one (thread, ns, channel): to test the next
    value against. `items`: the objects of the value stored; `alt`: those of the same
    version as a read decoded it (a run resumed from a stored checkpoint continues from
    the read's objects), or None."""

    __slots__ = ("alt", "base_bytes", "chain_bytes", "depth", "items", "version")

    def __init__(
        self, version: Any, items: tuple, depth: int, chain_bytes: int, base_bytes: int
    ) -> None:
        self.version = version
        self.items = items
        self.alt: tuple | None = None
        self.depth = depth
        self.chain_bytes = chain_bytes
        self.base_bytes = base_bytes

    def extended_by(self, value: list) -> bool:
        """Whether `value` starts with this tail's very objects (`items` or `alt`)."""
        n = len(self.items)
        if len(value) < n:
            return False
        if all(map(operator.is_, value, self.items)):
            return True
        alt = self.alt
        return alt is not None and all(map(operator.is_, value, alt))


TAILS_PER_CHANNEL = 4  # a put's value is tested against each (newest first)
MAX_TEXT_VERSION = 255  # characters (a msgpack str8: see `PREV_VERSION_SQL`)
# PostgreSQL: the base version a delta's bytes name (`{b}`: its payload), when it is an
# ASCII str of at most MAX_TEXT_VERSION characters without a backslash (`text_version`),
# else NULL or a text no version equals (never an error, whatever the bytes). The payload
# is the msgpack array [FORMAT, prev, ...]: 0x98 0x01, then prev as a fixstr (0xa0 | n)
# or a str8 (0xd9 n); `encode(..., 'escape')` gives such bytes as the same text.
PREV_VERSION_SQL = (
    "CASE WHEN length({b}) < 4 OR get_byte({b}, 0) <> 152 OR get_byte({b}, 1) <> 1 THEN NULL "
    "WHEN get_byte({b}, 2) = 217 THEN encode(substring({b} from 5 for get_byte({b}, 3)), "
    "'escape') WHEN get_byte({b}, 2) BETWEEN 160 AND 191 THEN encode(substring({b} from 4 "
    "for get_byte({b}, 2) - 160), 'escape') END"
)


def text_version(version: Any) -> bool:
    """Whether `PREV_VERSION_SQL` reads `version` back from a delta naming it."""
    return (
        type(version) is str
        and len(version) <= MAX_TEXT_VERSION
        and version.isascii()
        and "\\" not in version
    )


def keep_tail(tails: list[Tail] | None, tail: Tail) -> list[Tail]:
    """A channel's tails after a read: `tail` first (replacing one of its version)."""
    if not tails:
        return [tail]
    kept = [tail, *(t for t in tails if t.version != tail.version)]
    del kept[TAILS_PER_CHANNEL:]
    return kept


def read_tail(typed: Typed, version: Any, value: Any, tails: list[Tail] | None) -> list[Tail]:
    """A channel's tails after a read decoded `value` from the stored `typed` at `version`:
    the read's objects as an alternative of that version's tail, or a tail of their own
    (several are kept: a fork reads an old checkpoint and then the thread's head)."""
    if type(value) is not list:
        return tails or []
    for known in tails or ():
        if known.version == version and len(known.items) == len(value):
            known.alt = tuple(value)
            return tails  # type: ignore[return-value]
    tail = _read_tail(typed, version, value)
    return tails or [] if tail is None else keep_tail(tails, tail)


def _read_tail(typed: Typed, version: Any, value: list) -> Tail | None:
    if typed[0] == DELTA_TYPE:
        try:
            _, _, _, depth, chain, base, _ = parse_delta(typed[1], "")
        except AppendDeltaError:
            return None
        return Tail(version, tuple(value), depth, chain, base)
    if typed[0] != "msgpack":
        return None
    return Tail(version, tuple(value), 0, 0, len(typed[1]))


def array_header(n: int) -> bytes:
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return b"\xdc" + n.to_bytes(2, "big")
    return b"\xdd" + n.to_bytes(4, "big")


def split_array(data: bytes) -> tuple[int, int] | None:
    """(item count, header length) of msgpack bytes starting with an array header."""
    if not data:
        return None
    first = data[0]
    if 0x90 <= first <= 0x9F:
        return first & 0x0F, 1
    if first == 0xDC and len(data) >= 3:
        return int.from_bytes(data[1:3], "big"), 3
    if first == 0xDD and len(data) >= 5:
        return int.from_bytes(data[1:5], "big"), 5
    return None


def encode_value(
    dumps: Callable[[Any], Typed],
    value: Any,
    version: Any,
    tails: list[Tail] | None,
    min_base: int = 0,
) -> tuple[Typed, Tail | None]:
    """The typed form to store for `value` at `version` and the tail it leaves.

    A delta when `value` extends one of the channel's `tails` (see the module docstring)
    whose base is larger than `min_base` bytes, else the whole value (a list in msgpack
    form starts a new chain; anything else leaves no tail: None)."""
    if type(value) is not list:
        return dumps(value), None
    tail = None
    for known in tails or ():
        if known.version != version and known.extended_by(value):
            tail = known
            break
    if tail is not None and tail.depth < MAX_DEPTH and tail.base_bytes > min_base:
        prefix = len(tail.items)
        typed = dumps(value[prefix:])
        head = split_array(typed[1]) if typed[0] == "msgpack" else None
        if head is not None and head[0] == len(value) - prefix:
            items = typed[1][head[1] :]
            chain = tail.chain_bytes + len(items)
            if chain <= tail.base_bytes:
                depth, base = tail.depth + 1, tail.base_bytes
                payload = ormsgpack.packb(
                    [FORMAT, tail.version, prefix, head[0], depth, chain, base, items]
                )
                return (DELTA_TYPE, payload), Tail(version, tuple(value), depth, chain, base)
    typed = dumps(value)
    if typed[0] != "msgpack" or split_array(typed[1]) is None:
        return typed, None
    return typed, Tail(version, tuple(value), 0, 0, len(typed[1]))


class Tails:
    """A saver's tails, `(thread, ns, channel) -> [Tail, ...]` newest first (at most
    `limit` keys; all are dropped when it would hold more): the one bookkeeping of every
    saver that stores append deltas. `min_base`: a chain's base must be larger than this
    many bytes (the SQLite saver keeps smaller values only inline in its records, where a
    delta could not find them)."""

    __slots__ = ("held", "limit", "min_base")

    def __init__(self, limit: int = 4096, min_base: int = 0) -> None:
        self.held: dict[tuple[str, str, str], list[Tail]] = {}
        self.limit = limit
        self.min_base = min_base

    def encode(
        self,
        dumps: Callable[[Any], Typed],
        thread: str,
        ns: str,
        channel: str,
        version: Any,
        value: list,
        keep: bool = False,
    ) -> tuple[Typed, Tail | None]:
        """`encode_value` against the channel's tails; `keep`: its tail kept at once (a
        saver that stores puts in the order they are encoded: the next put of the
        channel may extend it before this one is committed), else nothing is kept yet."""
        key = (thread, ns, channel)
        typed, tail = encode_value(dumps, value, version, self.held.get(key), self.min_base)
        if tail is not None and tail.base_bytes <= self.min_base:
            tail = None  # (a base no delta may extend: nothing to keep)
        if keep:
            self.keep({key: tail})
        return typed, tail

    def encoder(self, dumps: Callable[[Any], Typed], text_versions: bool = False) -> Callable:
        """A saver's list encoder, `encode(thread, ns, channel, version, value)`: the typed
        form `encode` gives with the serializer's `dumps`, its tail kept. `text_versions`:
        only a `text_version` may become a delta's base (the Postgres saver follows a
        chain in SQL: `PREV_VERSION_SQL`); a value at any other version is stored whole
        and leaves no tail."""
        tails = self

        def encode(thread: str, ns: str, channel: str, version: Any, value: list) -> Typed:
            return tails.encode(dumps, thread, ns, channel, version, value, True)[0]

        if not text_versions:
            return encode

        def encode_text(thread: str, ns: str, channel: str, version: Any, value: list) -> Typed:
            if text_version(version):
                return tails.encode(dumps, thread, ns, channel, version, value, True)[0]
            self.keep({(thread, ns, channel): None})
            return dumps(value)

        return encode_text

    def keep(self, tails: dict[tuple[str, str, str], Tail | None]) -> None:
        """After a put: each channel's new tail only (what the run continues from; older
        ones would keep earlier generations of the list's objects alive); None drops it."""
        held = self.held
        if len(held) + len(tails) > self.limit:
            held.clear()
        for key, tail in tails.items():
            if tail is None:
                held.pop(key, None)
            else:
                held[key] = [tail]

    def read(
        self, thread: str, ns: str, channel: str, typed: Typed, version: Any, value: Any
    ) -> None:
        """After a read decoded the list `value` of `channel` from the stored `typed`
        (`read_tail`)."""
        key = (thread, ns, channel)
        held = self.held
        kept = read_tail(typed, version, value, held.get(key))
        if kept:
            if len(held) >= self.limit and key not in held:
                held.clear()
            held[key] = kept

    def forget(self, thread: str | None = None) -> None:
        """Drop the tails of `thread` (None: all)."""
        if thread is None:
            self.held.clear()
            return
        for key in [k for k in self.held if k[0] == thread]:
            del self.held[key]


class Rebuilt:
    """The full typed forms of the deltas a saver read before, by the saver's blob key
    (a later version's chain stops at one: `rebuild`), at most `limit` bytes (all are
    dropped when a new one would exceed it; one larger than a quarter is not kept)."""

    __slots__ = ("held", "limit", "size")

    def __init__(self, limit: int = 32 * 1024 * 1024) -> None:
        self.held: dict[Any, Typed] = {}
        self.limit = limit
        self.size = 0

    def clear(self) -> None:
        self.held.clear()
        self.size = 0

    def rebuild(
        self,
        loads: Callable[[Typed], Any],
        fetch: Callable[[Any], Typed | None],
        key: Callable[[Any], Any],
        typed: Typed,
        version: Any,
        channel: str,
    ) -> tuple[Typed, Any]:
        """`rebuild` of the delta `typed` stored at `version`: `fetch(v)` gives the
        stored typed value of a version of the same (thread, ns, channel), `key(v)` its
        key here (a version found here ends the walk)."""
        held = self.held
        hit = held.get(key(version))
        if hit is not None:
            return hit, loads(hit)

        def known(v: Any) -> Typed | None:
            return held.get(key(v)) or fetch(v)

        full, value = rebuild(loads, known, typed, version, channel)
        size = len(full[1])
        if size <= self.limit // 4:
            if self.size + size > self.limit:
                self.clear()
            held[key(version)] = full
            self.size += size
        return full, value


def parse_delta(payload: bytes, where: str) -> tuple[Any, int, int, int, int, int, bytes]:
    """(prev version, prefix count, count, depth, chain bytes, base bytes, items) of a
    delta's bytes."""
    try:
        fields = ormsgpack.unpackb(payload)
    except (ValueError, TypeError) as exc:
        raise AppendDeltaError(f"{where}: append delta is not valid msgpack ({exc})") from None
    if type(fields) is not list or len(fields) != 8:
        raise AppendDeltaError(f"{where}: append delta is not an 8-item array")
    fmt, prev, prefix, count, depth, chain, base, items = fields
    if fmt != FORMAT or type(fmt) is not int:
        raise AppendDeltaError(f"{where}: append delta has unknown format {fmt!r}")
    for name, n in (
        ("prefix count", prefix),
        ("count", count),
        ("depth", depth),
        ("chain size", chain),
        ("base size", base),
    ):
        if type(n) is not int or n < 0:
            raise AppendDeltaError(f"{where}: append delta has a bad {name} {n!r}")
    if type(items) is not bytes:
        raise AppendDeltaError(f"{where}: append delta items are not bytes")
    if prev is None or isinstance(prev, (list, dict, bytes)):
        raise AppendDeltaError(f"{where}: append delta names a bad base version {prev!r}")
    return prev, prefix, count, depth, chain, base, items


def chain_versions(
    fetch: Callable[[Any], Typed | None], version: Any, known: Container[Any] = ()
) -> list[Any]:
    """The versions a stored value's chain reads, `version` first (stops at a base, at a
    missing / repeated link - `rebuild` reports those - or after a version in `known`,
    whose own chain the caller has)."""
    out = [version]
    seen = {_key(version)}
    typed = fetch(version)
    while typed is not None and typed[0] == DELTA_TYPE:
        try:
            prev = parse_delta(typed[1], "")[0]
        except AppendDeltaError:
            break
        if _key(prev) in seen:
            break
        seen.add(_key(prev))
        out.append(prev)
        if prev in known:
            break
        typed = fetch(prev)
    return out


def live_closure(
    live: set[tuple[str, Any]], deltas: dict[tuple[str, Any], bytes], key_of: Callable[[Any], Any]
) -> set[tuple[str, Any]]:
    """`live` (channel, version key) pairs with every pair their append-delta chains read.
    `deltas`: the stored deltas' payloads by (channel, version key) (only the deltas are
    needed: a chain ends at its first value that is not one); `key_of`: a version's key."""
    out = set(live)
    for channel, vkey in live:
        if (channel, vkey) not in deltas:
            continue

        def fetch(v: Any, channel: str = channel) -> Typed | None:
            payload = deltas.get((channel, key_of(v)))
            return None if payload is None else (DELTA_TYPE, payload)

        for v in chain_versions(fetch, vkey, ())[1:]:
            k = (channel, key_of(v))
            if k in out:
                break  # (its own chain is walked from there)
            out.add(k)
    return out


def _key(version: Any) -> Hashable:
    return (type(version).__name__, version)


def rebuild(
    loads: Callable[[Typed], Any],
    fetch: Callable[[Any], Typed | None],
    typed: Typed,
    version: Any,
    channel: str,
) -> tuple[Typed, Any]:
    """A stored value's full form: its typed bytes as the whole list would have been
    stored ("msgpack") and the decoded value. `fetch(version)` gives a stored typed value
    of the same (thread, ns, channel), or None; it may give a version's full form (a
    cache of earlier rebuilds), which ends the walk there. A value that is not a delta is
    decoded as it is."""
    if typed[0] != DELTA_TYPE:
        return typed, loads(typed)
    parts: list[bytes] = []
    seen = {_key(version)}
    where = f"channel {channel!r} version {version!r}"
    total = need = depth_above = None
    while typed[0] == DELTA_TYPE:
        prev, prefix, count, depth, _, _, items = parse_delta(typed[1], where)
        if total is None:
            total = prefix + count
        elif prefix + count != need:
            raise AppendDeltaError(
                f"{where}: holds {prefix + count} items, the delta after it extends {need}"
            )
        if depth == 0 or (depth_above is not None and depth != depth_above - 1):
            raise AppendDeltaError(f"{where}: append delta has a bad depth {depth}")
        need, depth_above = prefix, depth
        parts.append(items)
        if _key(prev) in seen:
            raise AppendDeltaError(f"{where}: append delta chain loops at version {prev!r}")
        seen.add(_key(prev))
        found = fetch(prev)
        where = f"channel {channel!r} version {prev!r}"
        if found is None:
            raise AppendDeltaError(f"{where}: missing, an append delta extends it")
        typed = found
    head = split_array(typed[1]) if typed[0] == "msgpack" else None
    if head is None:
        raise AppendDeltaError(f"{where}: the base of an append delta is not a stored list")
    if head[0] != need:
        raise AppendDeltaError(f"{where}: holds {head[0]} items, the delta after it extends {need}")
    # one copy for the decoder's bytes (the base's items, the deltas', the sentinel), one
    # for the full value's
    parts.append(memoryview(typed[1])[head[1] :])
    counted = array_header(total + 1)
    parts.append(counted)
    parts.reverse()
    parts.append(_SENTINEL_BYTES)
    data = b"".join(parts)
    where = f"channel {channel!r} version {version!r}"
    try:
        value = loads(("msgpack", data))
    except (ValueError, TypeError) as exc:
        raise AppendDeltaError(f"{where}: append delta items do not decode ({exc})") from exc
    if (
        type(value) is not list
        or len(value) != total + 1
        or type(value[-1]) is not str
        or value[-1] != _SENTINEL
    ):
        raise AppendDeltaError(f"{where}: append delta items do not hold the counted items")
    value.pop()
    body = memoryview(data)[len(counted) : len(data) - len(_SENTINEL_BYTES)]
    return ("msgpack", b"".join((array_header(total), body))), value
