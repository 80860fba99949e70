"""Special write channels and the protocols the serializer relies on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from warpgraph._internal._compat import Self

ERROR = "__error__"
SCHEDULED = "__scheduled__"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
TASKS = "__pregel_tasks"


class _DeltaSnapshot(NamedTuple):
    """Full value of a delta channel, stored every `snapshot_frequency` updates."""

    value: Any


Value = TypeVar("Value", covariant=True)  # noqa: PLC0105
Update = TypeVar("Update", contravariant=True)  # noqa: PLC0105
C = TypeVar("C")


class ChannelProtocol(Protocol[Value, Update, C]):
    """Structural type of a channel (what `BaseChannel` offers a saver).

    Reading: `get`, and `checkpoint`/`from_checkpoint` to persist and restore; writing:
    `update` with a step's values and `consume` once a subscriber ran. `ValueType` and
    `UpdateType` describe the two sides.
    """

    def get(self) -> Value: ...
    def update(self, values: Sequence[Update]) -> bool: ...
    def consume(self) -> bool: ...
    def checkpoint(self) -> C | None: ...
    def from_checkpoint(self, checkpoint: C | None) -> Self: ...

    @property
    def ValueType(self) -> Any: ...

    @property
    def UpdateType(self) -> Any: ...


@runtime_checkable
class SendProtocol(Protocol):
    """Structural type of `Send`."""

    node: str
    arg: Any

    def __hash__(self) -> int: ...

    def __repr__(self) -> str: ...

    def __eq__(self, value: object) -> bool: ...
