"""The shared body of the channels that hold at most one value (MISSING when empty)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import SameTypeChannel, Value
from warpgraph.errors import EmptyChannelError, InvalidUpdateError


class SingleValueChannel(SameTypeChannel[Value, Value, Value], Generic[Value]):
    """Reads, copies and checkpoints of a one-value channel; subclasses define `update`
    (and `_blank` when their constructor takes more than `typ` and `key`)."""

    __slots__ = ("value",)

    value: Value | Any

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = MISSING

    def _blank(self) -> Self:
        """An empty channel configured like this one."""
        return self.__class__(self.typ, self.key)

    def copy(self) -> Self:
        twin = self._blank()
        twin.value = self.value
        return twin

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self._blank()
        if checkpoint is not MISSING:
            restored.value = checkpoint
        return restored

    def get(self) -> Value:
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value


class GuardedValueChannel(SingleValueChannel[Value], Generic[Value]):
    """A one-value channel whose `guard` flag forbids several writes in one step."""

    __slots__ = ("guard",)

    guard: bool

    def __init__(self, typ: Any, guard: bool = True) -> None:
        super().__init__(typ)
        self.guard = guard

    _label = "GuardedValueChannel"  # the class name the guard error reports

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            return False
        if self.guard and len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': {self._label}(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True

    def _blank(self) -> Self:
        twin = self.__class__(self.typ, self.guard)
        twin.key = self.key
        return twin
