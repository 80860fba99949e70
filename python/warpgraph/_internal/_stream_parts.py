"""Typed shapes of stream payloads (public through `warpgraph.types`).

Two families share their common keys through small bases: every `version="v2"` stream part
is `{"type", "ns", "data"}` (values parts add `interrupts`), and every "debug" event is
`{"step", "timestamp", "type", "payload"}`. Only annotations: nothing here runs per step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, Literal

from warpgraph._internal._compat import NotRequired, TypeAliasType, TypedDict, TypeVar

if TYPE_CHECKING:
    from warpgraph.types import Interrupt, StateSnapshot

_S = TypeVar("_S")
_O = TypeVar("_O")

Namespace = tuple[str, ...]


# ---------------------------------------------------------------- task / checkpoint payloads
class _TaskIdentity(TypedDict):
    id: str
    name: str


class TaskPayload(_TaskIdentity):
    """ "tasks" stream: a task started."""

    input: Any
    triggers: list[str]
    metadata: NotRequired[dict[str, Any]]


class TaskResultPayload(_TaskIdentity):
    """ "tasks" stream: a task finished."""

    error: str | None
    interrupts: list[dict]
    result: dict[str, Any]


class CheckpointTask(_TaskIdentity):
    """A task inside a CheckpointPayload (which keys exist depends on the task's state)."""

    error: NotRequired[str]
    result: NotRequired[Any]
    interrupts: NotRequired[list[dict]]
    state: StateSnapshot | dict[str, Any] | None


class CheckpointPayload(TypedDict, Generic[_S]):
    """ "checkpoints" stream: a checkpoint was created."""

    config: dict[str, Any] | None
    parent_config: dict[str, Any] | None
    metadata: dict[str, Any]
    values: _S
    next: list[str]
    tasks: list[CheckpointTask]


# ---------------------------------------------------------------- "debug" events
class _DebugEvent(TypedDict):
    step: int
    timestamp: str


class _DebugCheckpoint(_DebugEvent, Generic[_S]):
    type: Literal["checkpoint"]
    payload: CheckpointPayload[_S]


class _DebugTask(_DebugEvent):
    type: Literal["task"]
    payload: TaskPayload


class _DebugTaskResult(_DebugEvent):
    type: Literal["task_result"]
    payload: TaskResultPayload


DebugPayload = TypeAliasType(
    "DebugPayload", _DebugCheckpoint[_S] | _DebugTask | _DebugTaskResult, type_params=(_S,)
)
"""A "debug" stream event; discriminate on `type`."""


# ---------------------------------------------------------------- version="v2" stream parts
class _Part(TypedDict):
    ns: Namespace


class ValuesStreamPart(_Part, Generic[_O]):
    type: Literal["values"]
    data: _O
    interrupts: tuple[Interrupt, ...]


class UpdatesStreamPart(_Part):
    type: Literal["updates"]
    data: dict[str, Any]


class MessagesStreamPart(_Part):
    type: Literal["messages"]
    data: tuple[Any, dict[str, Any]]


class CustomStreamPart(_Part):
    type: Literal["custom"]
    data: Any


class CheckpointStreamPart(_Part, Generic[_S]):
    type: Literal["checkpoints"]
    data: CheckpointPayload[_S]


class TasksStreamPart(_Part):
    type: Literal["tasks"]
    data: TaskPayload | TaskResultPayload


class DebugStreamPart(_Part, Generic[_S]):
    type: Literal["debug"]
    data: DebugPayload[_S]


StreamPart = TypeAliasType(
    "StreamPart",
    ValuesStreamPart[_O]
    | UpdatesStreamPart
    | MessagesStreamPart
    | CustomStreamPart
    | CheckpointStreamPart[_S]
    | TasksStreamPart
    | DebugStreamPart[_S],
    type_params=(_S, _O),
)
"""A `version="v2"` stream part; discriminate on `part["type"]`."""
