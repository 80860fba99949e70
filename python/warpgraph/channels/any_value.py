"""AnyValue: the last value written (several equal writes allowed); an empty step clears it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel, Value
from warpgraph.errors import EmptyChannelError

__all__ = ("AnyValue",)


class AnyValue(BaseChannel[Value, Value, Value], Generic[Value]):
    """Holds the last value written, assuming all writes of a step are equal."""

    __slots__ = ("value",)

    value: Value | Any

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

    @property
    def ValueType(self) -> Any:
        return self.typ

    @property
    def UpdateType(self) -> Any:
        return self.typ

    def copy(self) -> Self:
        twin = self.__class__(self.typ, self.key)
        twin.value = self.value
        return twin

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self.__class__(self.typ, self.key)
        if checkpoint is not MISSING:
            restored.value = checkpoint
        return restored

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True

    def get(self) -> Value:
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value
