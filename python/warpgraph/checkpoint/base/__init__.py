"""Checkpoint types and `BaseCheckpointSaver` (same names and signatures as LangGraph's)."""

from __future__ import annotations

import copy
import logging
import sys
from abc import ABCMeta
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Generic, Literal, NamedTuple, TypedDict, TypeVar

from warpgraph import _core
from warpgraph._internal._typing import MISSING
from warpgraph.checkpoint.base.id import uuid6
from warpgraph.checkpoint.serde.base import SerializerProtocol, maybe_add_typed_methods
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from warpgraph.checkpoint.serde.types import (
    ERROR,
    INTERRUPT,
    RESUME,
    SCHEDULED,
    ChannelProtocol,
)
from warpgraph.errors import EmptyChannelError

__all__ = (
    "EXCLUDED_METADATA_KEYS",
    "WRITES_IDX_MAP",
    "BaseCheckpointSaver",
    "ChannelVersions",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "DeltaChannelHistory",
    "EmptyChannelError",
    "PendingWrite",
    "SerializerProtocol",
    "as_langgraph_saver",
    "copy_checkpoint",
    "create_checkpoint",
    "empty_checkpoint",
    "get_checkpoint_id",
    "get_checkpoint_metadata",
    "get_serializable_checkpoint_metadata",
    "uuid6",
    "writes_sort_key",
)

logger = logging.getLogger(__name__)

V = TypeVar("V", int, float, str)
RunnableConfig = dict[str, Any]
PendingWrite = tuple[str, str, Any]
ChannelVersions = dict[str, str | int | float]


class CheckpointMetadata(TypedDict, total=False):
    """Metadata stored with a checkpoint."""

    source: Literal["input", "loop", "update", "fork"]
    step: int
    parents: dict[str, str]
    run_id: str
    counters_since_delta_snapshot: dict[str, tuple[int, int]]


class Checkpoint(TypedDict):
    """State snapshot at a given point in time."""

    v: int
    id: str
    ts: str
    channel_values: dict[str, Any]
    channel_versions: ChannelVersions
    versions_seen: dict[str, ChannelVersions]
    updated_channels: list[str] | None


class CheckpointTuple(NamedTuple):
    """A checkpoint with its config, metadata, parent config and pending writes."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: RunnableConfig | None = None
    pending_writes: list[PendingWrite] | None = None


class _DeltaChannelHistoryBase(TypedDict):
    writes: list[PendingWrite]


class DeltaChannelHistory(_DeltaChannelHistoryBase, total=False):
    """Writes (oldest first) and nearest stored value of one channel along a parent chain."""

    seed: Any


# Special writes use negative indices so they never collide with regular writes.
WRITES_IDX_MAP = dict(zip((ERROR, SCHEDULED, INTERRUPT, RESUME), range(-1, -5, -1)))

# Config keys that locate a checkpoint or describe a task: never copied into metadata.
EXCLUDED_METADATA_KEYS = {f"checkpoint_{k}" for k in ("id", "ns", "map")} | {"thread_id"}
EXCLUDED_METADATA_KEYS |= {
    f"langgraph_{k}" for k in ("step", "node", "triggers", "path", "checkpoint_ns")
}


def writes_sort_key(task_path: str, task_id: str = "", idx: int = 0) -> tuple[str, str, int]:
    """Order in which a super-step's writes are applied: (task_path, task_id, idx)."""
    return (task_path, task_id, idx)


def get_checkpoint_id(config: RunnableConfig) -> str | None:
    """The `checkpoint_id` in `config["configurable"]`, if any."""
    return config["configurable"].get("checkpoint_id")


def get_checkpoint_metadata(
    config: RunnableConfig, metadata: CheckpointMetadata
) -> CheckpointMetadata:
    """`metadata` plus the scalar entries of config metadata/configurable (NULs stripped).

    Keys already in `metadata`, excluded keys and `__`-private keys are not copied; nor are
    values that are not str/int/float/bool.
    """
    # natively: every saver calls this once per checkpoint
    merged = _core.checkpoint_metadata(config, metadata, EXCLUDED_METADATA_KEYS)
    return merged  # type: ignore[return-value]


def get_serializable_checkpoint_metadata(
    config: RunnableConfig, metadata: CheckpointMetadata
) -> CheckpointMetadata:
    """`get_checkpoint_metadata` without the legacy `writes` key."""
    out = get_checkpoint_metadata(config, metadata)
    out.pop("writes", None)  # type: ignore[misc]
    return out


class _SaverMeta(ABCMeta):
    """Lets `isinstance(x, BaseCheckpointSaver)` accept LangGraph's savers too."""

    def __instancecheck__(cls, obj: Any) -> bool:
        if super().__instancecheck__(obj):
            return True
        return cls is BaseCheckpointSaver and _is_langgraph_saver(type(obj))

    def __subclasscheck__(cls, sub: type) -> bool:
        if super().__subclasscheck__(sub):
            return True
        return cls is BaseCheckpointSaver and _is_langgraph_saver(sub)


def _is_langgraph_saver(sub: type) -> bool:
    mod = sys.modules.get("langgraph.checkpoint.base")
    theirs = getattr(mod, "BaseCheckpointSaver", None) if mod is not None else None
    # (under an import alias `langgraph.checkpoint.base` is this very module: its class is
    # ours, already checked, and asking it again would recurse)
    if theirs is None or theirs is BaseCheckpointSaver or not isinstance(sub, type):
        return False
    return issubclass(sub, theirs)


MetadataFilter = dict[str, Any]
"""`list(filter=...)`: metadata keys and the values a checkpoint must have."""


def _unimplemented(saver: Any, method: str) -> NotImplementedError:
    return NotImplementedError(
        f"{type(saver).__name__} does not implement {method}() (BaseCheckpointSaver leaves "
        "it to savers)"
    )


class BaseCheckpointSaver(Generic[V], metaclass=_SaverMeta):
    """Base class of checkpoint savers.

    Required: `get_tuple`, `list`, `put`, `put_writes`, `delete_thread` and their `a*`
    twins. Optional: `delete_for_runs`, `copy_thread`, `prune` (+ async).
    """

    serde: SerializerProtocol = JsonPlusSerializer()

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = maybe_add_typed_methods(serde or self.serde)

    @property
    def config_specs(self) -> list:
        """Configuration fields of the saver (none)."""
        return []

    # --- sync API
    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """The checkpoint selected by `config`, or None."""
        if value := self.get_tuple(config):
            return value.checkpoint
        return None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint tuple selected by `config` (latest if no `checkpoint_id`), or None."""
        raise _unimplemented(self, "get_tuple")

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: MetadataFilter | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoint tuples, newest first."""
        raise _unimplemented(self, "list")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint; return the config that selects it."""
        raise _unimplemented(self, "put")

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store the writes of task `task_id` against the checkpoint in `config`."""
        raise _unimplemented(self, "put_writes")

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of `thread_id`."""
        raise _unimplemented(self, "delete_thread")

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata `run_id` is in `run_ids`."""
        raise _unimplemented(self, "delete_for_runs")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another."""
        raise _unimplemented(self, "copy_thread")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads: "keep_latest" (latest per namespace) or "delete" (everything)."""
        raise _unimplemented(self, "prune")

    # --- async API
    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        """Async `get`."""
        if value := await self.aget_tuple(config):
            return value.checkpoint
        return None

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async `get_tuple`."""
        raise _unimplemented(self, "aget_tuple")

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: MetadataFilter | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list`."""
        raise _unimplemented(self, "alist")
        yield  # pragma: no cover

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async `put`."""
        raise _unimplemented(self, "aput")

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async `put_writes`."""
        raise _unimplemented(self, "aput_writes")

    async def adelete_thread(self, thread_id: str) -> None:
        """Async `delete_thread`."""
        raise _unimplemented(self, "adelete_thread")

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async `delete_for_runs`."""
        raise _unimplemented(self, "adelete_for_runs")

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async `copy_thread`."""
        raise _unimplemented(self, "acopy_thread")

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Async `prune`."""
        raise _unimplemented(self, "aprune")

    # --- delta channel history (default: walk parent_config with get_tuple)
    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel: writes along the parent chain (oldest first) and the nearest value."""
        walk = _DeltaWalk(channels)
        cursor = walk.start(self.get_tuple(config) if channels else None)
        while cursor is not None:
            cursor = walk.visit(self.get_tuple(cursor))
        return walk.result()

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async `get_delta_channel_history`."""
        walk = _DeltaWalk(channels)
        cursor = walk.start(await self.aget_tuple(config) if channels else None)
        while cursor is not None:
            cursor = walk.visit(await self.aget_tuple(cursor))
        return walk.result()

    # --- versions and allowlist
    def get_next_version(self, current: V | None, channel: None) -> V:
        """Next channel version: int increment (str versions need a saver override)."""
        if isinstance(current, str):
            raise _unimplemented(self, "get_next_version for str versions")
        return 1 if current is None else current + 1  # type: ignore[return-value]

    def with_allowlist(
        self, extra_allowlist: Collection[tuple[str, ...]]
    ) -> BaseCheckpointSaver[V]:
        """A shallow clone whose serializer also decodes the `extra_allowlist` types."""
        widened = _with_msgpack_allowlist(self.serde, extra_allowlist)
        if widened is self.serde:  # already decodes them, or has no allowlist to widen
            return self
        clone = copy.copy(self)
        clone.serde = maybe_add_typed_methods(widened)
        return clone


class _DeltaWalk:
    """State of one `get_delta_channel_history` walk (shared by the sync and async APIs)."""

    def __init__(self, channels: Sequence[str]) -> None:
        self.channels = list(channels)
        self.collected: dict[str, list[PendingWrite]] = {c: [] for c in self.channels}
        self.seeds: dict[str, Any] = {}
        self.remaining = set(self.channels)

    def start(self, target: CheckpointTuple | None) -> RunnableConfig | None:
        return target.parent_config if target is not None else None

    def visit(self, tup: CheckpointTuple | None) -> RunnableConfig | None:
        if tup is None:
            return None
        for write in reversed(tup.pending_writes or ()):
            if write[1] in self.remaining:
                self.collected[write[1]].append(write)
        values = tup.checkpoint["channel_values"]
        for ch in [c for c in self.remaining if c in values]:
            self.seeds[ch] = values[ch]
            self.remaining.discard(ch)
        return tup.parent_config if self.remaining else None

    def result(self) -> dict[str, DeltaChannelHistory]:
        out: dict[str, DeltaChannelHistory] = {}
        for ch in self.channels:
            entry: DeltaChannelHistory = {"writes": self.collected[ch][::-1]}
            if ch in self.seeds:
                entry["seed"] = self.seeds[ch]
            out[ch] = entry
        return out


def _with_msgpack_allowlist(
    serde: SerializerProtocol, extra_allowlist: Collection[tuple[str, ...]]
) -> SerializerProtocol:
    if isinstance(serde, JsonPlusSerializer):
        return serde.with_msgpack_allowlist(extra_allowlist)
    inner = getattr(serde, "serde", None)
    if isinstance(inner, JsonPlusSerializer) and hasattr(serde, "cipher"):
        updated = inner.with_msgpack_allowlist(extra_allowlist)
        if updated is inner:
            return serde
        return type(serde)(serde.cipher, updated)  # type: ignore[attr-defined,call-arg]
    logger.warning(
        "Serializer %s does not support msgpack allowlist. "
        "Strict msgpack deserialization will not be enforced.",
        type(serde).__name__,
    )
    return serde


def as_langgraph_saver(saver: BaseCheckpointSaver) -> Any:
    """Wrap a warpgraph saver so `langgraph` accepts it (needs langgraph-checkpoint)."""
    from warpgraph.checkpoint.base._langgraph import wrap

    return wrap(saver)


# --- deprecated helpers kept for compatibility (the runtime builds v4 checkpoints itself)

LATEST_VERSION = 2


def empty_checkpoint() -> Checkpoint:
    """A checkpoint with no channels (format v2, like LangGraph's deprecated helper)."""
    return {  # type: ignore[typeddict-unknown-key]
        "v": LATEST_VERSION,
        "id": str(uuid6(clock_seq=-2)),
        "ts": datetime.now(timezone.utc).isoformat(),
        "channel_values": {},
        "channel_versions": {},
        "versions_seen": {},
        "pending_sends": [],
        "updated_channels": None,
    }


def copy_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """Copy values/versions one level and versions_seen two levels."""
    return {  # type: ignore[typeddict-unknown-key]
        "v": checkpoint["v"],
        "ts": checkpoint["ts"],
        "id": checkpoint["id"],
        "channel_values": checkpoint["channel_values"].copy(),
        "channel_versions": checkpoint["channel_versions"].copy(),
        "versions_seen": {k: v.copy() for k, v in checkpoint["versions_seen"].items()},
        "pending_sends": list(checkpoint.get("pending_sends", [])),  # type: ignore[misc]
        "updated_channels": checkpoint.get("updated_channels", None),
    }


def create_checkpoint(
    checkpoint: Checkpoint,
    channels: Mapping[str, ChannelProtocol] | None,
    step: int,
    *,
    id: str | None = None,
) -> Checkpoint:
    """A new checkpoint (format v2) holding the current values of `channels`.

    Channels without a version are left out, and so are empty ones.
    """
    new: dict[str, Any] = {
        "v": LATEST_VERSION,
        "ts": datetime.now(timezone.utc).isoformat(),
        "id": id or str(uuid6(clock_seq=step)),
    }
    versioned = checkpoint["channel_versions"]
    if channels is None:
        new["channel_values"] = checkpoint["channel_values"]
    else:
        snapshots = ((k, _checkpoint_or_missing(c)) for k, c in channels.items() if k in versioned)
        new["channel_values"] = {k: v for k, v in snapshots if v is not MISSING}
    new["channel_versions"] = versioned
    new["versions_seen"] = checkpoint["versions_seen"]
    new["pending_sends"] = checkpoint.get("pending_sends", [])
    new["updated_channels"] = None
    return new  # type: ignore[return-value]


def _checkpoint_or_missing(channel: ChannelProtocol) -> Any:
    try:
        return channel.checkpoint()
    except EmptyChannelError:
        return MISSING
