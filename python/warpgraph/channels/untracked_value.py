"""UntrackedValue: like a guarded LastValue, but never checkpointed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel, Value
from warpgraph.errors import EmptyChannelError, InvalidUpdateError

__all__ = ("UntrackedValue",)


class UntrackedValue(BaseChannel[Value, Value, Value], Generic[Value]):
    """Holds the last value written; `checkpoint()` is always MISSING."""

    __slots__ = ("guard", "value")

    guard: bool
    value: Value | Any

    def __init__(self, typ: type[Value], guard: bool = True) -> None:
        super().__init__(typ)
        self.guard = guard
        self.value = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    @property
    def ValueType(self) -> Any:
        return self.typ

    @property
    def UpdateType(self) -> Any:
        return self.typ

    def _blank(self) -> Self:
        twin = self.__class__(self.typ, self.guard)
        twin.key = self.key
        return twin

    def copy(self) -> Self:
        twin = self._blank()
        twin.value = self.value
        return twin

    def checkpoint(self) -> Any:
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        return self._blank()

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            return False
        if self.guard and len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value "
                "per step. Use guard=False if you want to store any one of multiple values."
            )
        self.value = values[-1]
        return True

    def get(self) -> Value:
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        return self.value is not MISSING
