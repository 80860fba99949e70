"""The channel contract: a named slot that receives a step's writes and holds a value."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.errors import EmptyChannelError

Value = TypeVar("Value")
Update = TypeVar("Update")
Checkpoint = TypeVar("Checkpoint")

__all__ = ("BaseChannel",)


class BaseChannel(ABC, Generic[Value, Update, Checkpoint]):
    """Base class for all channels.

    `update` receives every write of a super-step at once; `consume` is called for the
    channels that triggered a task; `finish` when the run would otherwise end. `checkpoint`
    returns MISSING for "nothing to store".
    """

    __slots__ = ("key", "typ")

    def __init__(self, typ: Any, key: str = "") -> None:
        # key: the channel's name in its graph (set by the graph builder when it is "")
        self.key = key
        self.typ = typ

    @property
    @abstractmethod
    def ValueType(self) -> Any:
        """Type of the stored value."""

    @property
    @abstractmethod
    def UpdateType(self) -> Any:
        """Type of one update."""

    def copy(self) -> Self:
        """An independent channel in the same state (via checkpoint round trip by default)."""
        return self.from_checkpoint(self.checkpoint())

    def checkpoint(self) -> Checkpoint | Any:
        """Serializable state; MISSING when there is nothing to store."""
        try:
            return self.get()
        except EmptyChannelError:
            return MISSING

    @abstractmethod
    def from_checkpoint(self, checkpoint: Checkpoint | Any) -> Self:
        """A new channel like this one, restored from `checkpoint` (MISSING: empty)."""

    @abstractmethod
    def get(self) -> Value:
        """The current value; raises EmptyChannelError when there is none."""

    def is_available(self) -> bool:
        """Whether `get` would return a value."""
        try:
            self.get()
        except EmptyChannelError:
            return False
        return True

    @abstractmethod
    def update(self, values: Sequence[Update]) -> bool:
        """Apply one step's updates (possibly none); True if the channel changed."""

    def consume(self) -> bool:
        """A task subscribed to this channel ran; True if that changed the channel."""
        return False

    def finish(self) -> bool:
        """The run is about to finish; True if that changed the channel."""
        return False


class SameTypeChannel(BaseChannel[Value, Update, Checkpoint]):
    """A channel whose value type and update type are both its `typ`."""

    __slots__ = ()

    @property
    def ValueType(self) -> Any:
        return self.typ

    @property
    def UpdateType(self) -> Any:
        return self.typ
