"""AnyValue: the last value written (several equal writes allowed); an empty step clears it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from warpgraph._internal._typing import MISSING
from warpgraph.channels._single import SingleValueChannel
from warpgraph.channels.base import Value

__all__ = ("AnyValue",)


class AnyValue(SingleValueChannel[Value], Generic[Value]):
    """Holds the last value written, assuming all writes of a step are equal."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnyValue)

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True
