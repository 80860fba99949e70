"""Barrier channels: available once every expected name has been written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel, SameTypeChannel, Value
from warpgraph.errors import EmptyChannelError, InvalidUpdateError

__all__ = ("NamedBarrierValue", "NamedBarrierValueAfterFinish")


def _record(key: str, names: set, seen: set, values: Sequence[Any]) -> bool:
    """Add `values` to `seen` (each must be in `names`); True if a new name was added."""
    added = False
    for value in values:
        if value not in names:
            raise InvalidUpdateError(f"At key '{key}': Value {value} not in {names}")
        if value not in seen:
            seen.add(value)
            added = True
    return added


class _Barrier(SameTypeChannel[Value, Value, Any], Generic[Value]):
    """The names a barrier waits for, the ones seen so far, and how writes add to them."""

    __slots__ = ("names", "seen")

    names: set[Value]
    seen: set[Value]

    def __init__(self, typ: type[Value], names: set[Value]) -> None:
        super().__init__(typ)
        self.names = names
        self.seen = set()

    def _blank(self) -> Self:
        """An empty barrier for the same names and key."""
        twin = self.__class__(self.typ, self.names)
        twin.key = self.key
        return twin

    def update(self, values: Sequence[Value]) -> bool:
        return _record(self.key, self.names, self.seen, values)


class NamedBarrierValue(_Barrier[Value], Generic[Value]):
    """Available (value None) once all `names` are seen; consuming resets it."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValue) and other.names == self.names

    def copy(self) -> Self:
        twin = self._blank()
        twin.seen = self.seen.copy()
        return twin

    def checkpoint(self) -> Any:
        return self.seen

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self._blank()
        if checkpoint is not MISSING:
            restored.seen = checkpoint
        return restored

    def get(self) -> Value:
        if self.seen != self.names:
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        return self.seen == self.names

    def consume(self) -> bool:
        if self.seen != self.names:
            return False
        self.seen = set()
        return True


class NamedBarrierValueAfterFinish(_Barrier[Value], Generic[Value]):
    """Like NamedBarrierValue, but available only after finish() once all names are seen."""

    __slots__ = ("finished",)

    finished: bool

    def __init__(self, typ: type[Value], names: set[Value]) -> None:
        # BaseChannel's constructor directly, one call per copy and restore like the others
        BaseChannel.__init__(self, typ)
        self.names = names
        self.seen = set()
        self.finished = False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NamedBarrierValueAfterFinish) and other.names == self.names

    def copy(self) -> Self:
        twin = self._blank()
        twin.seen = self.seen.copy()
        twin.finished = self.finished
        return twin

    def checkpoint(self) -> Any:
        return (self.seen, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self._blank()
        if checkpoint is not MISSING:
            restored.seen, restored.finished = checkpoint
        return restored

    def get(self) -> Value:
        if not self.finished or self.seen != self.names:
            raise EmptyChannelError()
        return None  # type: ignore[return-value]

    def is_available(self) -> bool:
        return self.finished and self.seen == self.names

    def consume(self) -> bool:
        if not self.finished or self.seen != self.names:
            return False
        self.seen = set()
        self.finished = False
        return True

    def finish(self) -> bool:
        if self.finished or self.seen != self.names:
            return False
        self.finished = True
        return True
