"""The records that cross the seams of a run: what the engine hands the loop, what the loop
yields to its drivers, what the drivers hand the saver session.

The engine's records (`PreparedTask`, `TaskWrites`) are plain tuples on the hot path (the
native engine returns and takes tuples; wrapping each would cost a Python call per task):
these NamedTuples document their layout in one place, and annotations name them so a type
checker sees the fields. Everything the loop yields is one of the operation records below
(NamedTuples: the first field says what the operation is, so a driver dispatches on it).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

__all__ = (
    "LONE_DRAIN",
    "LONE_DRAIN_OP",
    "LONE_RUN",
    "RUN",
    "GetTupleOp",
    "LoneDrainOp",
    "LoneRunOp",
    "PreparedTask",
    "PutCheckpointOp",
    "PutWritesOp",
    "RunOp",
    "TaskWrites",
    "WriteOp",
)

RUN = "run"
LONE_RUN = "run_lone"
LONE_DRAIN = "drain_lone"


# --- the engine's tuples (layout only) ---------------------------------------------------
class PreparedTask(NamedTuple):
    """One task of `Engine.prepare_next_tasks` (also the third item of `Engine.advance`)."""

    id: str
    name: str
    path: tuple
    """`(PULL, name)` or `(PUSH, index, ...)` (see `task_path_str`)."""
    triggers: tuple
    input: Any
    """The node's input as read (a PUSH task's: its Send's argument)."""


class TaskWrites(NamedTuple):
    """One task's part of `Engine.apply_writes(step_writes, ...)` / `Engine.advance`."""

    name: str
    path: tuple
    triggers: tuple
    writes: Any
    """`(channel, value)` pairs (the task's `writes` deque)."""


# --- what the loop yields -----------------------------------------------------------------
class RunOp(NamedTuple):
    """Run these tasks of the step (the driver sends nothing back)."""

    kind: Literal["run"]
    tasks: list


class LoneRunOp(NamedTuple):
    """Run a lone step's task as the async runner runs a step's only task (`_lone.py`:
    the async driver awaits it, sending back nothing or throwing its error in)."""

    kind: Literal["run_lone"]
    task: Any


class LoneDrainOp(NamedTuple):
    """Hand the queued stream chunks on now (`_lone.py`: the sync driver's lone steps of a
    streamed run yield it where the general path's driver drains: before a step's task
    runs, after a task failed); the driver sends back nothing."""

    kind: Literal["drain_lone"]


LONE_DRAIN_OP = LoneDrainOp(LONE_DRAIN)


class GetTupleOp(NamedTuple):
    """Read a checkpoint tuple (the driver sends it back, or None)."""

    kind: Literal["get_tuple"]
    config: dict


class PutCheckpointOp(NamedTuple):
    """Save a checkpoint."""

    kind: Literal["put"]
    config: dict
    checkpoint: dict
    metadata: dict
    new_versions: dict
    envelope: Any = None
    """The checkpoint's encoding made by the engine with it (`loop.packed_puts`: only for
    a saver that stores it as such, warpgraph's InMemorySaver), else None."""


class PutWritesOp(NamedTuple):
    """Save one task's writes."""

    kind: Literal["put_writes"]
    config: dict
    writes: list
    task_id: str
    task_path: str


WriteOp = PutCheckpointOp | PutWritesOp
"""A write operation (what the saver session handles: `_persist.SaverSession.write`)."""
