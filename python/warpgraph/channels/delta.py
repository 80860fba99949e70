"""DeltaChannel: a reducer channel whose checkpoints store writes, not values.

A checkpoint stores nothing for the channel except, every `snapshot_frequency` updates (or
once the thread went `DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT` steps without one), a
`_DeltaSnapshot` of its whole value. Loading a checkpoint rebuilds the value from the nearest
snapshot (or a plain value a pre-delta channel stored) plus the writes saved on the
checkpoints between it and the one loaded (the saver's `get_delta_channel_history`), folded
with one reducer call. The loop's side of it lives in `warpgraph.pregel._delta`.

The reducer takes the value and a list of writes, `reducer(value, [w1, w2]) -> value`, and
must fold batches the same however they are split:
`reducer(reducer(v, xs), ys) == reducer(v, xs + ys)`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Generic

from warpgraph._internal._compat import Self
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import SameTypeChannel, Value
from warpgraph.channels.binop import _concrete_type, _same_operator, _unwrap_overwrite
from warpgraph.checkpoint.serde.types import _DeltaSnapshot
from warpgraph.errors import (
    EmptyChannelError,
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)

__all__ = ("DeltaChannel",)


class DeltaChannel(SameTypeChannel[Any, Any, Any], Generic[Value]):
    """Reducer channel stored as its writes (see the module doc).

    `reducer(value, writes) -> value`; `typ` is the value type (inferred from
    `Annotated[T, DeltaChannel(...)]` when built from a state schema; `list` otherwise);
    `snapshot_frequency`: every Nth update stores the full value (a positive int).
    """

    __slots__ = ("reducer", "snapshot_frequency", "value")

    def __init__(
        self,
        reducer: Callable[[Any, Sequence[Any]], Any],
        typ: type[Value] | None = None,
        *,
        snapshot_frequency: int = 100,
    ) -> None:
        if snapshot_frequency <= 0:
            raise ValueError(f"snapshot_frequency must be a positive int, got {snapshot_frequency}")
        base = _concrete_type(list if typ is None else typ)
        super().__init__(base)
        self.typ = base
        self.reducer = reducer
        self.snapshot_frequency = snapshot_frequency
        self.value: Any = MISSING

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DeltaChannel)
            and self.snapshot_frequency == other.snapshot_frequency
            and _same_operator(self.reducer, other.reducer)
        )

    def _twin(self, value: Any) -> Self:
        twin = self.__class__(self.reducer, self.typ, snapshot_frequency=self.snapshot_frequency)
        twin.key = self.key
        twin.value = value
        return twin

    def with_type(self, typ: Any) -> Self:
        """The same channel declared for values of `typ` (the schema's annotation)."""
        twin = self.__class__(self.reducer, typ, snapshot_frequency=self.snapshot_frequency)
        twin.key = self.key
        return twin

    def copy(self) -> Self:
        value = self.value
        return self._twin(value if value is MISSING else copy.copy(value))

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """Nothing stored (MISSING / None) -> an empty value of the type, to which the loader
        replays the writes; a `_DeltaSnapshot` -> its value; any other value (a thread written
        before the field was a DeltaChannel) -> that value."""
        if checkpoint is MISSING or checkpoint is None:
            return self._twin(self.typ())
        if isinstance(checkpoint, _DeltaSnapshot):
            return self._twin(checkpoint.value)
        return self._twin(checkpoint)

    def _reset_value(self, replacement: Any) -> Any:
        return self.typ() if replacement is None else copy.copy(replacement)

    def replay_writes(self, writes: Sequence[Any]) -> None:
        """Fold saved writes `(task_id, channel, value)`, oldest first, in one reducer call;
        the last Overwrite among them restarts the value from its own."""
        values = [w[2] for w in writes]
        if not values:
            return
        value, start = self.value, 0
        for i in range(len(values) - 1, -1, -1):
            hit, replacement = _unwrap_overwrite(values[i])
            if hit:
                value, start = self._reset_value(replacement), i + 1
                break
        rest = values[start:]
        self.value = self.reducer(value, rest) if rest else value

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        found = None
        for v in values:
            hit, replacement = _unwrap_overwrite(v)
            if hit:
                if found is not None:
                    raise InvalidUpdateError(
                        create_error_message(
                            message="Can receive only one Overwrite value per super-step.",
                            error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                        )
                    )
                found = (replacement,)
        if found is not None:
            self.value = self._reset_value(found[0])
        else:
            current = self.typ() if self.value is MISSING else self.value
            self.value = self.reducer(current, list(values))
        return True

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        """Always MISSING: the loop stores `_DeltaSnapshot`s itself when one is due."""
        return MISSING
