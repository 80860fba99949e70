"""UntrackedValue: like a guarded LastValue, but never checkpointed."""

from __future__ import annotations

from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels._single import GuardedValueChannel
from warpgraph.channels.base import Value

__all__ = ("UntrackedValue",)


class UntrackedValue(GuardedValueChannel[Value], Generic[Value]):
    """Holds the last value written; `checkpoint()` is always MISSING."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UntrackedValue) and other.guard == self.guard

    def checkpoint(self) -> Any:
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> Self:
        return self._blank()

    _label = "UntrackedValue"
