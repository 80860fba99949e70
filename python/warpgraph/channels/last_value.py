"""LastValue (one write per step) and LastValueAfterFinish (released by finish())."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels._single import SingleValueChannel
from warpgraph.channels.base import SameTypeChannel, Value
from warpgraph.errors import (
    EmptyChannelError,
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)

__all__ = ("LastValue", "LastValueAfterFinish")


class LastValue(SingleValueChannel[Value], Generic[Value]):
    """Holds the last value written; at most one write per step."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValue)

    def update(self, values: Sequence[Value]) -> bool:
        count = len(values)
        if count == 0:
            return False
        if count > 1:
            raise InvalidUpdateError(
                create_error_message(
                    message=(
                        f"At key '{self.key}': Can receive only one value per step. "
                        "Use an Annotated key to handle multiple values."
                    ),
                    error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                )
            )
        self.value = values[0]
        return True


class LastValueAfterFinish(SameTypeChannel[Value, Value, tuple[Value, bool]], Generic[Value]):
    """Keeps the last value written, readable only after finish(); consuming clears it."""

    __slots__ = ("finished", "value")

    value: Value | Any
    finished: bool

    def __init__(self, typ: Any, key: str = "") -> None:
        super().__init__(typ, key)
        self.value = MISSING
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LastValueAfterFinish)

    def copy(self) -> Self:
        twin = self.__class__(self.typ, self.key)
        twin.value = self.value
        twin.finished = self.finished
        return twin

    def checkpoint(self) -> Any:
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self.__class__(self.typ, self.key)
        if checkpoint is not MISSING:
            restored.value, restored.finished = checkpoint
        return restored

    def update(self, values: Sequence[Value | Any]) -> bool:
        if len(values) == 0:
            return False
        self.value = values[-1]
        self.finished = False
        return True

    def consume(self) -> bool:
        if not self.finished:
            return False
        self.value = MISSING
        self.finished = False
        return True

    def finish(self) -> bool:
        if self.finished or self.value is MISSING:
            return False
        self.finished = True
        return True

    def get(self) -> Value:
        if not self.finished or self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.finished and self.value is not MISSING
