"""`InMemorySaver`: checkpoints, writes and per-version channel blobs in nested dicts."""

from __future__ import annotations

import bisect
import itertools
import random
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager, ExitStack
from typing import Any

import ormsgpack

from warpgraph.checkpoint._sql import config_of
from warpgraph.checkpoint._sql.appends import (
    DELTA_TYPE,
    Rebuilt,
    Tail,
    Tails,
    array_header,
    chain_versions,
)
from warpgraph.checkpoint._sql.values import (
    freeze_plain,
    loads_given,
    loads_many,
    msgpack_payload,
    thaw_plain,
    unpack_payload,
)
from warpgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from warpgraph.checkpoint.memory._delta import memory_delta_history
from warpgraph.checkpoint.memory._persistent import PersistentDict
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

try:
    from warpgraph import _core

    _pack_envelope = getattr(_core, "pack_checkpoint_envelope", None)
except ImportError:  # pragma: no cover
    _pack_envelope = None

__all__ = ("InMemorySaver", "MemorySaver", "PersistentDict")

Typed = tuple[str, bytes]
_EMPTY: Typed = ("empty", b"")
_NOT_YET = object()  # (a `_reads` entry read once: not frozen yet)
_UNREAD = object()  # (a `_reads` entry `put` left, not read yet: its payload not decoded yet)
_NIL = b"\xc0"  # (msgpack's nil: a ("null", b"") value, None, as `loads_typed` gives it)
_MSGPACK_OPTION = ormsgpack.OPT_NON_STR_KEYS  # (the default serializer's decoding option)
_NULL: Typed = ("null", b"")  # (JsonPlusSerializer's encoding of None)
READ_CACHE = 256  # checkpoints whose joined payload `_tuple` keeps, each at most:
READ_CACHE_MAX = 64 * 1024  # bytes
TAILS = 4096  # (thread, ns, channel) tails kept for append deltas (see `_sql/appends.py`)
REBUILT_MAX = 32 * 1024 * 1024  # bytes of rebuilt append-delta values kept (`_rebuild`)


def _ns(config: RunnableConfig) -> str:
    return config["configurable"].get("checkpoint_ns", "")


_config = config_of  # the config selecting one stored checkpoint


def dumps_once(dumps: Callable[[Any], Typed]) -> Callable[[Any], Typed]:
    """`dumps` encoding each object once (for one put: one list object standing in two
    channels is encoded once). The memo holds the objects, so an id is not reused while
    it is consulted."""
    memo: dict[int, tuple[Any, Typed]] = {}

    def once(value: Any) -> Typed:
        hit = memo.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        typed = dumps(value)
        memo[id(value)] = (value, typed)
        return typed

    return once


class InMemorySaver(BaseCheckpointSaver[str], AbstractContextManager, AbstractAsyncContextManager):
    """An in-memory checkpoint saver (for tests and debugging).

    `storage[thread][ns][checkpoint_id] = (checkpoint without values, metadata, parent_id)`,
    `writes[(thread, ns, checkpoint_id)][(task_id, idx)] = (task_id, channel, value, task_path)`,
    `blobs[(thread, ns, channel, version)] = value`; every value is `serde.dumps_typed` output.
    A channel value is stored once per version (only for `new_versions` in `put`).

    With `append_deltas` (the default) a list value that extends the one last stored for
    its channel is stored as the appended items only: `("wg-append", ...)` in `blobs`,
    rebuilt into the full value on every read (`warpgraph/checkpoint/_sql/appends.py`).
    """

    storage: defaultdict[str, dict[str, dict[str, tuple[Typed, Typed, str | None]]]]
    writes: defaultdict[tuple[str, str, str], dict[tuple[str, int], tuple[str, str, Typed, str]]]
    blobs: dict[tuple[str, str, str, Any], Typed]

    def __init__(
        self,
        *,
        serde: SerializerProtocol | None = None,
        factory: type[defaultdict] = defaultdict,
        append_deltas: bool = True,
    ) -> None:
        super().__init__(serde=serde)
        self.append_deltas = append_deltas
        # (thread, ns, channel) -> the list values last stored or read for it, newest
        # first (`Tail`s: what a put's value may extend)
        self._tails = Tails(TAILS)
        # (thread, ns, channel, version) -> the full typed value of an append delta read
        # before (a later version's chain stops there); cleared with `_reads`
        self._rebuilt = Rebuilt(REBUILT_MAX)
        # `factory` may be a persistent dict type (a context manager flushing to disk); the
        # saver's own context then opens and closes the three stores together.
        self.stack = ExitStack()
        self.storage, self.writes, self.blobs = stores = (
            factory(lambda: defaultdict(dict)),
            factory(dict),
            factory(),
        )
        if factory is not defaultdict:
            for store in stores:
                self.stack.enter_context(store)  # type: ignore[arg-type]
        # (thread, ns) -> (its checkpoints dict, the latest id in it): `get_tuple` without
        # an id then needs no scan. Valid while it names that very dict and the id is still
        # in it (a deletion of other ids leaves the latest one); `_store` keeps it current,
        # the other writers of `storage` drop it.
        self._heads: dict[tuple[str, str], tuple[dict, str]] = {}
        # (thread, ns) -> (its checkpoints dict, its ids in ascending order): `list` then
        # sorts no ids. Valid while it names that very dict and has as many ids (puts only
        # add ids: the ones added since are the dict's last keys, appended when they sort
        # after the others, else the ids are sorted again); the savers' deleters drop it.
        self._orders: dict[tuple[str, str], tuple[dict, list[str]]] = {}
        # (thread, ns, id) -> (its storage entry, channels, payload): the msgpack array of
        # the entry's envelope, metadata and stored channel values, decoded in one call by
        # `_tuple` (fresh objects each time). Valid while the entry is that very tuple and
        # no blob was replaced or deleted since (`_reads_valid`; a put of new versions only
        # adds blobs, checked by the blob count, and every other blob writer clears it).
        # Read again, an entry whose checkpoint and metadata hold only immutable values in
        # dicts and lists also keeps them decoded (`freeze_plain`): later reads copy the
        # containers (`thaw_plain`), without decoding.
        self._reads: dict[tuple[str, str, str], tuple[Any, tuple[str, ...], bytes, Any]] = {}
        # the checkpoint `put` stored last (or a `get_tuple` decoded): (its `_reads` key, its
        # storage entry, its channel versions, the channels with a stored value and their
        # bytes), what `_keep_payload` builds its child's payload from; cleared with `_reads`
        self._last_put: tuple[tuple[str, str, str], Any, dict, tuple, list] | None = None

    def __enter__(self) -> InMemorySaver:  # noqa: PYI034
        self.stack.__enter__()
        return self

    def __exit__(self, *exc_info: object) -> bool | None:
        return self.stack.__exit__(*exc_info)

    async def __aenter__(self) -> InMemorySaver:  # noqa: PYI034
        return self.__enter__()

    async def __aexit__(self, *exc_info: object) -> bool | None:
        return self.__exit__(*exc_info)

    # --- encoding helpers
    def _dump(self, what: str, value: Any, name: Any = None) -> Typed:
        """Serialize `value`; a TypeError names `what` (formatted with `name!r` if given)."""
        try:
            return self.serde.dumps_typed(value)
        except TypeError as exc:
            if name is not None:
                what = f"{what} {name!r}"
            raise TypeError(
                f"Cannot serialize {what}: value of type {type(value).__name__} ({exc})"
            ) from exc

    def _dump_envelope(self, checkpoint: dict[str, Any]) -> Typed:
        if _pack_envelope is not None and type(self.serde) is JsonPlusSerializer:
            try:
                return "msgpack", _pack_envelope(checkpoint)
            except (TypeError, ValueError, OverflowError):
                pass  # a value the native packer does not handle: use the serializer
        envelope = {k: v for k, v in checkpoint.items() if k != "channel_values"}
        return self._dump("checkpoint", envelope)

    def _stored_values(
        self, thread_id: str, ns: str, versions: ChannelVersions
    ) -> tuple[list[str], list[Typed], dict[int, Any]]:
        """The channels with a stored value at their version, those values (typed, append
        deltas rebuilt) and {index: decoded value} of the rebuilt ones."""
        channels, stored = [], []
        rebuilt: dict[int, Any] = {}
        get = self.blobs.get
        for channel, version in versions.items():
            blob = get((thread_id, ns, channel, version))
            if blob is not None and blob[0] != "empty":
                if blob[0] == DELTA_TYPE:
                    blob, rebuilt[len(stored)] = self._rebuild(thread_id, ns, channel, version)
                channels.append(channel)
                stored.append(blob)
        return channels, stored, rebuilt

    def _read_plain(
        self, thread_id: str, ns: str, versions: ChannelVersions, envelope: Typed, meta: Typed
    ) -> tuple[list[str], list[Any], bytes | None, list[bytes]] | None:
        """`_stored_values`, their decoding and the `_reads` payload in one pass, when the
        serializer is the default one and every stored value is plain msgpack (or null):
        (channels, decoded values, payload or None past `READ_CACHE_MAX`, the values'
        bytes). None otherwise
        (append deltas, other types, a batch that does not decode: the general path)."""
        if type(self.serde) is not JsonPlusSerializer:
            return None
        channels, parts = [], []
        get = self.blobs.get
        for channel, version in versions.items():
            blob = get((thread_id, ns, channel, version))
            if blob is None:
                continue
            kind = blob[0]
            if kind == "msgpack" and type(blob[1]) is bytes:
                parts.append(blob[1])
            elif kind == "null":
                parts.append(_NIL)
            elif kind == "empty":
                continue
            else:
                return None
            channels.append(channel)
        body = b"".join(parts)
        decoder = self.serde._decoder
        try:
            decoded = ormsgpack.unpackb(
                array_header(len(parts)) + body, ext_hook=decoder.hook, option=_MSGPACK_OPTION
            )
        except (ValueError, TypeError, RecursionError):
            return None  # (each value again: the failing one raises its own error)
        if type(decoded) is not list or len(decoded) != len(parts):
            return None
        payload = None
        if (
            envelope[0] == "msgpack"
            and meta[0] == "msgpack"
            and type(envelope[1]) is bytes
            and type(meta[1]) is bytes
            and len(envelope[1]) + len(meta[1]) + len(body) <= READ_CACHE_MAX
        ):
            payload = b"".join((array_header(len(parts) + 2), envelope[1], meta[1], body))
        return channels, decoded, payload, parts

    def _rebuild(self, thread_id: str, ns: str, channel: str, version: Any) -> tuple[Typed, Any]:
        """The full (typed, decoded) value stored at a version, append deltas joined."""
        blobs = self.blobs

        def key(v: Any) -> tuple:
            return (thread_id, ns, channel, v)

        def fetch(v: Any) -> Typed | None:
            return blobs.get((thread_id, ns, channel, v))

        typed = blobs[(thread_id, ns, channel, version)]
        return self._rebuilt.rebuild(self.serde.loads_typed, fetch, key, typed, version, channel)

    def _clear_reads(self) -> None:
        """Forget the read caches (a blob was stored again or deleted)."""
        self._reads.clear()
        self._last_put = None
        self._rebuilt.clear()

    def _chain_keys(
        self, thread_id: str, ns: str, channel: str, version: Any, known: Any = ()
    ) -> list[tuple]:
        """The blob keys the value stored at a version is read from (itself first; the walk
        stops after a version in `known`)."""
        blobs = self.blobs

        def fetch(v: Any) -> Typed | None:
            return blobs.get((thread_id, ns, channel, v))

        return [(thread_id, ns, channel, v) for v in chain_versions(fetch, version, known)]

    def _tuple(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        entry: tuple[Typed, Typed, str | None],
        config: RunnableConfig | None = None,
        metadata: Any = None,
        remember: bool = False,
    ) -> CheckpointTuple:
        envelope, metadata_b, parent_id = entry
        key = (thread_id, ns, checkpoint_id)
        hit = self._reads.get(key)
        if hit is not None and hit[0] is entry and hit[3] is _UNREAD:
            # (left by `put`, its payload never decoded: on a failure, the general path)
            try:
                decoded = unpack_payload(self.serde, hit[2])
            except (ValueError, TypeError, RecursionError):
                decoded = None
            if type(decoded) is list and len(decoded) == len(hit[1]) + 2:
                self._reads[key] = (*hit[:3], _NOT_YET)
                checkpoint, meta, *values = decoded
                checkpoint["channel_values"] = dict(zip(hit[1], values))
                if metadata is None:
                    metadata = meta
            else:
                del self._reads[key]
                hit = None
        elif hit is not None and hit[0] is entry:
            frozen = hit[3]
            if frozen is not None and frozen is not _NOT_YET:
                checkpoint = thaw_plain(frozen[0])
                if metadata is None:
                    metadata = thaw_plain(frozen[1])
            else:
                checkpoint, meta, *values = unpack_payload(self.serde, hit[2])
                checkpoint["channel_values"] = dict(zip(hit[1], values))
                if frozen is _NOT_YET:  # (read a second time: kept decoded if it can be)
                    cold = freeze_plain(checkpoint)
                    warm = None if cold is None else freeze_plain(meta)
                    self._reads[key] = (*hit[:3], None if warm is None else (cold, warm))
                if metadata is None:
                    metadata = meta
        if hit is None or hit[0] is not entry:
            checkpoint = self.serde.loads_typed(envelope)
            versions = checkpoint["channel_versions"]
            fused = self._read_plain(thread_id, ns, versions, envelope, metadata_b)
            if fused is not None:  # (the default serializer: `checkpoint` is its own dict)
                channels, decoded, payload, parts = fused
                if remember and payload is not None:  # (a `get_tuple`: maybe `put` next)
                    self._last_put = (key, entry, dict(versions), tuple(channels), parts)
                checkpoint["channel_values"] = dict(zip(channels, decoded))
            else:
                channels, stored, rebuilt = self._stored_values(thread_id, ns, versions)
                decoded = loads_given(self.serde, stored, rebuilt)
                payload = msgpack_payload(
                    self.serde, [envelope, metadata_b, *stored], READ_CACHE_MAX
                )
                checkpoint = {**checkpoint, "channel_values": dict(zip(channels, decoded))}
            if payload is not None:
                if len(self._reads) >= READ_CACHE:
                    self._reads.clear()
                self._reads[key] = (entry, tuple(channels), payload, _NOT_YET)
        if remember and self.append_deltas:
            self._read_tails(thread_id, ns, checkpoint)
        held = self.writes.get((thread_id, ns, checkpoint_id))
        if held:
            if len(held) == 1:
                (w,) = held.values()
                pending = [(w[0], w[1], self.serde.loads_typed(w[2]))]
            else:
                order = sorted(held, key=lambda k: writes_sort_key(held[k][3], *k))
                values = loads_many(self.serde, [held[k][2] for k in order])
                pending = [(held[k][0], held[k][1], v) for k, v in zip(order, values)]
        else:
            pending = []
        return CheckpointTuple(
            config=config or _config(thread_id, ns, checkpoint_id),
            checkpoint=checkpoint,  # type: ignore[arg-type]
            metadata=self.serde.loads_typed(metadata_b) if metadata is None else metadata,
            parent_config=_config(thread_id, ns, parent_id) if parent_id else None,
            pending_writes=pending,
        )

    # --- required API
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint selected by `config` (latest of the thread/ns if no id), or None."""
        thread_id = config["configurable"]["thread_id"]
        ns = _ns(config)
        checkpoints = self.storage.get(thread_id, {}).get(ns)
        if not checkpoints:
            return None
        checkpoint_id = get_checkpoint_id(config)
        if checkpoint_id:
            entry = checkpoints.get(checkpoint_id)
            return (
                None
                if entry is None
                else self._tuple(thread_id, ns, checkpoint_id, entry, config, remember=True)
            )
        head = self._heads.get((thread_id, ns))
        if head is not None and head[0] is checkpoints and head[1] in checkpoints:
            checkpoint_id = head[1]
        else:
            checkpoint_id = max(checkpoints)
            self._heads[(thread_id, ns)] = (checkpoints, checkpoint_id)
        return self._tuple(thread_id, ns, checkpoint_id, checkpoints[checkpoint_id], remember=True)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first per namespace; `before` is exclusive."""
        conf = config["configurable"] if config else {}
        thread_id = conf.get("thread_id")
        threads = [thread_id] if thread_id is not None else list(self.storage)
        want_ns = conf.get("checkpoint_ns")
        want_id = conf.get("checkpoint_id")
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for tid in threads:
            for ns, checkpoints in list(self.storage.get(tid, {}).items()):
                if want_ns is not None and ns != want_ns:
                    continue
                ids = self._ordered(tid, ns, checkpoints)
                # (newest first; `before` is exclusive; ids put meanwhile come after `end`)
                end = bisect.bisect_left(ids, before_id) if before_id else len(ids)
                for i in range(end - 1, -1, -1):
                    cid = ids[i]
                    if want_id and cid != want_id:
                        continue
                    entry = checkpoints.get(cid)
                    if entry is None:
                        continue
                    metadata = None  # (without a filter: `_tuple` decodes it)
                    if filter:
                        metadata = self.serde.loads_typed(entry[1])
                        if not all(metadata.get(k) == v for k, v in filter.items()):
                            continue
                    if remaining is not None:
                        if remaining <= 0:
                            return
                        remaining -= 1
                    yield self._tuple(tid, ns, cid, entry, metadata=metadata)

    def _ordered(self, thread_id: str, ns: str, checkpoints: dict) -> list[str]:
        """The ids of `checkpoints` (the namespace's dict in `storage`), ascending."""
        held = self._orders.get((thread_id, ns))
        if held is not None and held[0] is checkpoints:
            ids = held[1]
            added = len(checkpoints) - len(ids)
            if added == 0:
                return ids
            if added > 0:
                new = list(itertools.islice(reversed(checkpoints), added))
                new.reverse()
                if (not ids or new[0] > ids[-1]) and all(
                    a < b for a, b in zip(new, itertools.islice(new, 1, None))
                ):
                    ids.extend(new)  # (in place: a `list` walking it reads below its end)
                    return ids
        ids = sorted(checkpoints)
        self._orders[(thread_id, ns)] = (checkpoints, ids)
        return ids

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; values are stored only for the channels in `new_versions`.

        Everything is serialized before anything is stored, so a value that cannot be
        serialized raises TypeError (naming the channel) and leaves the saver unchanged.
        """
        last = self._last_put  # (`_store` forgets it: it stores blobs)
        stored = self._store(config, checkpoint, metadata, new_versions, None)
        if last is not None:
            self._keep_payload(config, checkpoint, new_versions, last)
        return stored

    def _keep_payload(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        new_versions: ChannelVersions,
        last: tuple,
    ) -> None:
        """After `put`: leave in `_reads` the payload `_tuple` would build reading the
        checkpoint just stored (its envelope, metadata and stored values: their bytes as
        stored, nothing decoded), so the next `get_tuple` (`update_state` reads the
        checkpoint the previous one wrote) decodes it in one call. Only with the default
        serializer, when the parent is the checkpoint the previous `put` stored or
        `get_tuple` read (`_last_put`) and the new versions replace values of channels
        stored in it with plain msgpack (or null) ones: the other values are its bytes (the
        parent still in `_reads`: no blob was stored again or deleted since)."""
        if type(self.serde) is not JsonPlusSerializer:
            return
        conf = config["configurable"]
        thread_id = conf["thread_id"]
        ns = conf.get("checkpoint_ns", "")
        parent_key, parent_entry, versions, channels, parts = last
        if parent_key != (thread_id, ns, conf.get("checkpoint_id")):
            return
        checkpoints = self.storage.get(thread_id, {}).get(ns, {})
        entry = checkpoints.get(checkpoint["id"])
        hit = self._reads.get(parent_key)
        if (
            entry is None
            or hit is None
            or hit[0] is not parent_entry
            or checkpoints.get(parent_key[2]) is not parent_entry
        ):
            return
        envelope, meta = entry[0], entry[1]
        if (
            envelope[0] != "msgpack"
            or meta[0] != "msgpack"
            or type(envelope[1]) is not bytes
            or type(meta[1]) is not bytes
        ):
            return
        # (the versions the stored envelope holds, in its order: it was encoded from them)
        cv = checkpoint["channel_versions"]
        versions = {**versions, **new_versions}
        if versions != cv or list(versions) != list(cv):
            return
        parts = parts.copy()
        get = self.blobs.get
        for channel, version in new_versions.items():
            if channel not in channels:
                return  # (a channel without a stored value before: the read's own path)
            blob = get((thread_id, ns, channel, version))
            if blob is None:
                return
            if blob[0] == "msgpack" and type(blob[1]) is bytes:
                parts[channels.index(channel)] = blob[1]
            elif blob[0] == "null":
                parts[channels.index(channel)] = _NIL
            else:
                return  # (empty, append deltas, other types: the read's own path)
        payload = b"".join((array_header(len(parts) + 2), envelope[1], meta[1], *parts))
        if len(payload) > READ_CACHE_MAX:
            return
        if len(self._reads) >= READ_CACHE:
            self._reads.clear()
        key = (thread_id, ns, checkpoint["id"])
        self._reads[key] = (entry, channels, payload, _UNREAD)
        self._last_put = (key, entry, versions, channels, parts)

    def takes_packed_puts(self) -> bool:
        """Whether the engine may hand this saver checkpoints with their envelope already
        encoded (`_store`): `put` and the envelope encoding are this class's own, and the
        serializer is the default one (whose bytes the engine's encoding equals)."""
        cls = type(self)
        return (
            _pack_envelope is not None
            and cls.put is InMemorySaver.put
            and cls._dump_envelope is InMemorySaver._dump_envelope
            and type(self.serde) is JsonPlusSerializer
        )

    def _store(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        envelope: bytes | None,
    ) -> RunnableConfig:
        """`put`, with the envelope already encoded when `envelope` is given (the engine's
        `create_checkpoint_packed`: the bytes `_dump_envelope` would give)."""
        self._store_packed(config, checkpoint, metadata, new_versions, envelope)
        conf = config["configurable"]
        return _config(conf["thread_id"], conf.get("checkpoint_ns", ""), checkpoint["id"])

    def _store_packed(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        envelope: bytes | None,
    ) -> None:
        """`_store` without its answer (the engine's puts do not read the config a `put`
        returns). Only the values of the channels in `new_versions` are read from the
        checkpoint's `channel_values` (the engine may hand over only those)."""
        self._last_put = None  # (blobs are stored next)
        conf = config["configurable"]
        thread_id = conf["thread_id"]
        ns = conf.get("checkpoint_ns", "")
        values = checkpoint["channel_values"]
        blobs = {}
        dumps = self.serde.dumps_typed
        null = _NULL if type(self.serde) is JsonPlusSerializer else None  # (what it gives)
        channel = None
        tails: dict[tuple[str, str, str], Tail | None] = {}
        try:
            if self.append_deltas:
                book = self._tails
                held = book.held
                list_dumps = None
                for channel, version in new_versions.items():
                    value = values.get(channel, _EMPTY)
                    if type(value) is list:
                        if list_dumps is None:
                            list_dumps = dumps_once(dumps)
                        key = (thread_id, ns, channel)
                        blobs[(*key, version)], tails[key] = book.encode(
                            list_dumps, thread_id, ns, channel, version, value
                        )
                        continue
                    if value is _EMPTY:
                        blob = _EMPTY
                    elif value is None and null is not None:
                        blob = null
                    else:
                        blob = dumps(value)
                    blobs[(thread_id, ns, channel, version)] = blob
                    if held and (thread_id, ns, channel) in held:
                        tails[(thread_id, ns, channel)] = None  # (not a list: no tail)
            else:
                for channel, version in new_versions.items():
                    blobs[(thread_id, ns, channel, version)] = (
                        dumps(values[channel]) if channel in values else _EMPTY
                    )
        except TypeError:
            self._dump("channel", values[channel], channel)  # raises, naming the channel
            raise
        typed = (
            self._dump_envelope(checkpoint)  # type: ignore[arg-type]
            if envelope is None
            else ("msgpack", envelope)
        )
        merged = get_checkpoint_metadata(config, metadata)
        try:
            meta = dumps(merged)
        except TypeError:
            self._dump("checkpoint metadata", merged)  # raises, naming what it is
            raise
        stored = self.blobs
        if not stored.keys().isdisjoint(blobs):
            # versions stored again: a delta naming one must not see other bytes
            self._clear_reads()
            changed = [k for k in blobs if k in stored and stored[k] != blobs[k]]
            if changed:
                self._rebase_dependents(changed)
        stored.update(blobs)
        if tails:
            self._tails.keep(tails)
        checkpoints = self.storage[thread_id][ns]
        cid = checkpoint["id"]
        checkpoints[cid] = (typed, meta, conf.get("checkpoint_id"))
        heads = self._heads
        if heads:
            head = heads.get((thread_id, ns))
            if head is not None:
                if head[0] is not checkpoints:
                    del heads[(thread_id, ns)]
                elif cid > head[1]:
                    heads[(thread_id, ns)] = (checkpoints, cid)

    def _read_tails(self, thread_id: str, ns: str, checkpoint: dict[str, Any]) -> None:
        """Tails of the list values a `get_tuple` returns (`read_tail`)."""
        versions = checkpoint["channel_versions"]
        for channel, value in checkpoint["channel_values"].items():
            if type(value) is list:
                version = versions[channel]
                typed = self.blobs[(thread_id, ns, channel, version)]
                self._tails.read(thread_id, ns, channel, typed, version, value)

    def _rebase_dependents(self, keys: Sequence[tuple]) -> None:
        """Before the blobs at `keys` are stored again with other bytes: store every append
        delta whose chain reads one of them whole (rebuilt from the bytes held now)."""
        doomed = set(keys)
        lines = {k[:3] for k in keys}
        whole = {}
        for key, blob in list(self.blobs.items()):
            if (
                blob[0] == DELTA_TYPE
                and key[:3] in lines
                and key not in doomed
                and doomed.intersection(self._chain_keys(*key)[1:])
            ):
                whole[key] = self._rebuild(*key)[0]
        self.blobs.update(whole)
        for key in lines:
            self._tails.held.pop(key, None)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes: regular writes are idempotent per (task_id, idx), special
        writes (WRITES_IDX_MAP, negative idx) replace the previous one."""
        conf = config["configurable"]
        key = (conf["thread_id"], conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
        held = self.writes.get(key)
        staged = {}
        dumps = self.serde.dumps_typed
        null = _NULL if type(self.serde) is JsonPlusSerializer else None  # (what it gives)
        special = WRITES_IDX_MAP
        for idx, (channel, value) in enumerate(writes):
            if channel in special:
                inner = (task_id, special[channel])
            else:
                inner = (task_id, idx)
                if held is not None and inner in held:
                    continue
            if value is None and null is not None:
                dumped = null
            else:
                try:
                    dumped = dumps(value)
                except TypeError:
                    self._dump("write to channel", value, channel)  # raises, naming it
                    raise
            staged[inner] = (task_id, channel, dumped, task_path)
        if staged:
            if held is None:  # (the first writes of the checkpoint: the staged dict is kept)
                self.writes[key] = staged
            else:
                held.update(staged)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, write and blob of `thread_id`."""
        self._forget_heads(thread_id)
        self.storage.pop(thread_id, None)
        for key in [k for k in self.writes if k[0] == thread_id]:
            del self.writes[key]
        for key in [k for k in self.blobs if k[0] == thread_id]:
            del self.blobs[key]

    # --- optional API
    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata `run_id` is in `run_ids`, with their writes."""
        wanted = set(run_ids)
        if not wanted:
            return
        for thread_id, namespaces in list(self.storage.items()):
            for ns, checkpoints in list(namespaces.items()):
                doomed = [
                    cid
                    for cid, entry in checkpoints.items()
                    if self.serde.loads_typed(entry[1]).get("run_id") in wanted
                ]
                self._drop(thread_id, ns, doomed)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, write and blob of one thread to another."""
        namespaces = self.storage.get(source_thread_id)
        if not namespaces:
            return
        target = self.storage[target_thread_id]
        self._forget_heads(target_thread_id)
        for ns, checkpoints in namespaces.items():
            target.setdefault(ns, {}).update(checkpoints)
        for (tid, ns, cid), writes in list(self.writes.items()):
            if tid == source_thread_id:
                self.writes[(target_thread_id, ns, cid)] = dict(writes)
        for (tid, ns, channel, version), blob in list(self.blobs.items()):
            if tid == source_thread_id:
                self.blobs[(target_thread_id, ns, channel, version)] = blob

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """ "keep_latest": keep the latest checkpoint of each namespace with its pending
        writes (e.g. interrupts awaiting resume) and the blobs it reads; "delete": drop all."""
        if strategy not in ("keep_latest", "delete"):
            raise ValueError(f"Unknown prune strategy {strategy!r}: use 'keep_latest' or 'delete'")
        for thread_id in thread_ids:
            if strategy == "delete":
                self.delete_thread(thread_id)
                continue
            for ns, checkpoints in list(self.storage.get(thread_id, {}).items()):
                if checkpoints:
                    latest = max(checkpoints)
                    self._drop(thread_id, ns, [c for c in checkpoints if c != latest])

    def _drop(self, thread_id: str, ns: str, checkpoint_ids: Iterable[str]) -> None:
        """Delete checkpoints with their writes, then the blobs no checkpoint references."""
        checkpoints = self.storage[thread_id][ns]
        dropped = False
        for cid in checkpoint_ids:
            checkpoints.pop(cid, None)
            self.writes.pop((thread_id, ns, cid), None)
            dropped = True
        if not dropped:
            return
        self._orders.pop((thread_id, ns), None)
        self._clear_reads()
        self._forget_tails(thread_id)
        live: set[tuple[str, Any]] = set()
        reached: dict[str, set[Any]] = {}  # channel -> its live versions
        for envelope, _, _ in checkpoints.values():
            for channel, version in self.serde.loads_typed(envelope)["channel_versions"].items():
                if (channel, version) not in live:
                    # (with the versions its append-delta chain reads)
                    mine = reached.setdefault(channel, set())
                    for key in self._chain_keys(thread_id, ns, channel, version, mine):
                        live.add(key[2:])
                        mine.add(key[3])
        for key in [
            k for k in self.blobs if k[0] == thread_id and k[1] == ns and (k[2], k[3]) not in live
        ]:
            del self.blobs[key]
        if not checkpoints:
            self._heads.pop((thread_id, ns), None)
            del self.storage[thread_id][ns]
            if not self.storage[thread_id]:
                del self.storage[thread_id]

    def _forget_heads(self, thread_id: str) -> None:
        self._clear_reads()  # (blobs are deleted or copied next)
        self._forget_tails(thread_id)
        for key in [k for k in self._heads if k[0] == thread_id]:
            del self._heads[key]
        for key in [k for k in self._orders if k[0] == thread_id]:
            del self._orders[key]

    def _forget_tails(self, thread_id: str) -> None:
        self._tails.forget(thread_id)

    # --- async API: the sync methods (nothing here blocks); see `_async_twin` below
    async def alist(self, config: RunnableConfig | None, **kwargs: Any) -> AsyncIterator[Any]:
        for item in self.list(config, **kwargs):
            yield item

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Any:
        """Per channel: the writes on the parent chain since its nearest stored value (oldest
        first) and that value as `seed` (absent when the walk reached the root)."""
        return memory_delta_history(self, config, channels)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Any:
        return memory_delta_history(self, config, channels)

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """`f"{n + 1:032}.{random.random():016}"` where n is the integer part of `current`."""
        if current is None:
            n = 0
        elif isinstance(current, int):
            n = current
        else:
            n = int(current.split(".")[0])
        return f"{n + 1:032}.{random.random():016}"


def _async_twin(name: str) -> Any:
    async def twin(self: InMemorySaver, *args: Any, **kwargs: Any) -> Any:
        # the instance's method: a subclass overriding `put` is also what `aput` calls
        return getattr(self, name)(*args, **kwargs)

    twin.__name__ = f"a{name}"
    twin.__qualname__ = f"InMemorySaver.a{name}"
    twin.__doc__ = f"Async `{name}`: the same in-memory operation."
    return twin


for _name in (
    "get_tuple",
    "put",
    "put_writes",
    "delete_thread",
    "delete_for_runs",
    "copy_thread",
    "prune",
):
    setattr(InMemorySaver, f"a{_name}", _async_twin(_name))
del _name

MemorySaver = InMemorySaver  # backwards-compatible alias
