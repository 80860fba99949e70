"""EphemeralValue: holds the value written in the previous step only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic

from warpgraph._internal._typing import MISSING
from warpgraph.channels._single import GuardedValueChannel
from warpgraph.channels.base import Value

__all__ = ("EphemeralValue",)


class EphemeralValue(GuardedValueChannel[Value], Generic[Value]):
    """Holds the value of the step just before; an empty update clears it.

    With `guard` (default) more than one write in a step is an error.
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EphemeralValue) and other.guard == self.guard

    _label = "EphemeralValue"

    def update(self, values: Sequence[Value]) -> bool:
        if len(values) == 0 and self.value is not MISSING:
            self.value = MISSING  # a step without a write clears it
            return True
        return super().update(values)
