"""Topic: a pub/sub channel collecting every value written (optionally across steps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel, Value
from warpgraph.errors import EmptyChannelError

__all__ = ("Topic",)


def _flat(values: Sequence[Any]) -> list[Any]:
    """The writes with list writes spliced in (one level)."""
    out: list[Any] = []
    for value in values:
        if isinstance(value, list):
            out.extend(value)
        else:
            out.append(value)
    return out


class Topic(BaseChannel[Sequence[Value], Value | list[Value], list[Value]], Generic[Value]):
    """Collects written values; without `accumulate` each step starts from an empty list."""

    __slots__ = ("accumulate", "values")

    def __init__(self, typ: type[Value], accumulate: bool = False) -> None:
        super().__init__(typ)
        self.accumulate = accumulate
        self.values: list[Value] = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Topic) and other.accumulate == self.accumulate

    @property
    def ValueType(self) -> Any:
        return Sequence[self.typ]  # type: ignore[name-defined]

    @property
    def UpdateType(self) -> Any:
        return self.typ | list[self.typ]  # type: ignore[name-defined]

    def _blank(self) -> Self:
        twin = self.__class__(self.typ, self.accumulate)
        twin.key = self.key
        return twin

    def copy(self) -> Self:
        twin = self._blank()
        twin.values = self.values.copy()
        return twin

    def checkpoint(self) -> Any:
        return self.values

    def from_checkpoint(self, checkpoint: Any) -> Self:
        restored = self._blank()
        if checkpoint is not MISSING:
            # Older checkpoints stored a (flag, values) tuple.
            restored.values = checkpoint[1] if isinstance(checkpoint, tuple) else checkpoint
        return restored

    def update(self, values: Sequence[Value | list[Value]]) -> bool:
        changed = False
        if not self.accumulate:
            changed = bool(self.values)
            self.values = []
        incoming = _flat(values)
        if incoming:
            self.values.extend(incoming)
            changed = True
        return changed

    def get(self) -> Sequence[Value]:
        if not self.values:
            raise EmptyChannelError()
        return list(self.values)

    def is_available(self) -> bool:
        return bool(self.values)
