"""Pieces shared by the SQL savers: row codec, batch operations, write fencing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from warpgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from warpgraph.errors import CheckpointConflictError  # defined with the other errors

__all__ = (
    "CONFIG_KEY_EXPECTED_HEAD",
    "NO_EXPECTATION",
    "CheckpointConflictError",
    "PutOp",
    "WritesOp",
    "config_of",
    "expected_head_of",
)

# A run that wants fenced puts sets this in config["configurable"] (or passes
# `expected_head=` to `put`): the id of the thread/ns head it loaded or last wrote, or
# None when it expects the namespace to have no checkpoint yet. Keys starting with "__"
# never reach checkpoint metadata. (`put_writes` is fenced by its `expected_head=` only:
# the config it gets selects the checkpoint the writes belong to.)
CONFIG_KEY_EXPECTED_HEAD = "__pregel_expected_head"


class _NoExpectation:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NO_EXPECTATION"


NO_EXPECTATION: Any = _NoExpectation()


def config_of(thread_id: str, ns: str, checkpoint_id: str) -> dict[str, Any]:
    """The config selecting one stored checkpoint."""
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def expected_head_of(config: dict[str, Any], explicit: Any = NO_EXPECTATION) -> Any:
    """The head a put must find (`explicit` wins over the config key), or NO_EXPECTATION."""
    if explicit is not NO_EXPECTATION:
        return explicit
    return config.get("configurable", {}).get(CONFIG_KEY_EXPECTED_HEAD, NO_EXPECTATION)


@dataclass(slots=True)
class PutOp:
    """One `put` in a batch (see `put_batch`)."""

    config: dict[str, Any]
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    new_versions: ChannelVersions
    expected_head: Any = NO_EXPECTATION


@dataclass(slots=True)
class WritesOp:
    """One `put_writes` in a batch (see `put_batch`); fenced like a put when
    `expected_head` is given (the thread/ns head must still be that id)."""

    config: dict[str, Any]
    writes: Sequence[tuple[str, Any]]
    task_id: str
    task_path: str = ""
    expected_head: Any = NO_EXPECTATION
