"""BinaryOperatorAggregate: folds every write into the value with a reducer."""

from __future__ import annotations

import collections.abc
from collections.abc import Callable, Sequence
from typing import Any, Generic

from warpgraph._internal._compat import NotRequired, Required, Self
from warpgraph._internal._constants import OVERWRITE
from warpgraph._internal._typing import MISSING
from warpgraph.channels._single import SingleValueChannel
from warpgraph.channels.base import BaseChannel, Value
from warpgraph.errors import (
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
)
from warpgraph.types import Overwrite

__all__ = ("BinaryOperatorAggregate",)

# Abstract collection types that cannot be instantiated, and the concrete type used instead.
_CONCRETE = {
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
    collections.abc.Mapping: dict,
    collections.abc.MutableMapping: dict,
}


def _bare_type(typ: Any) -> Any:
    """`typ` without Annotated / Required / NotRequired wrappers and generic parameters."""
    while hasattr(typ, "__origin__"):
        origin = typ.__origin__
        unwrapped = typ.__args__[0] if origin in (Required, NotRequired) else origin
        if unwrapped is typ:  # self-referential __origin__: stop instead of looping forever
            break
        typ = unwrapped
    return typ


def _concrete_type(typ: Any) -> Any:
    """The bare type of `typ`, an abstract collection replaced by its concrete type."""
    bare = _bare_type(typ)
    try:
        return _CONCRETE.get(bare, bare)
    except TypeError:  # an unhashable type object
        return bare


def _initial_value(typ: Any) -> Any:
    """`typ()` for the bare type (abstract collections made concrete), MISSING if that fails."""
    concrete = _concrete_type(typ)
    try:
        return concrete()
    except Exception:  # noqa: BLE001 - any failure means "no initial value"
        return MISSING


def _unwrap_overwrite(value: Any) -> tuple[bool, Any]:
    """(True, v) when `value` is Overwrite(v), {"__overwrite__": v} or
    {"type": "__overwrite__", "value": v} (a JSON-erased Overwrite); else (False, None)."""
    if isinstance(value, Overwrite):
        return True, value.value
    if not isinstance(value, dict):
        return False, None
    if OVERWRITE in value and len(value) == 1:  # {"__overwrite__": v}
        return True, value[OVERWRITE]
    if "value" in value and value.get("type") == OVERWRITE:  # JSON-erased Overwrite(v)
        return True, value["value"]
    return False, None


def _same_operator(a: Callable, b: Callable) -> bool:
    """Reducers compare equal by identity, except that any lambda matches anything.

    Like LangGraph, this reads `__name__` unguarded (a reducer without one raises).
    """
    if a.__name__ == "<lambda>" or b.__name__ == "<lambda>":
        return True
    return a is b


# LangGraph's private names for the three helpers above (its DeltaChannel imports them)
_strip_extras = _bare_type
_get_overwrite = _unwrap_overwrite
_operators_equal = _same_operator


def _is_delta_snapshot(value: Any) -> bool:
    """A `_DeltaSnapshot` blob (stored by a DeltaChannel in an older version of the thread)."""
    return type(value).__name__ == "_DeltaSnapshot" and hasattr(value, "value")


class BinaryOperatorAggregate(SingleValueChannel[Value], Generic[Value]):
    """Holds `operator(...operator(initial, w1)..., wn)` over all writes.

    The initial value is `typ()` when that is constructible, so the channel is available
    before any write. An `Overwrite` write replaces the value (once per step).
    """

    __slots__ = ("operator",)

    def __init__(self, typ: type[Value], operator: Callable[[Value, Value], Value]) -> None:
        # BaseChannel's constructor directly: `value` is set below, so SingleValueChannel's
        # MISSING would only be overwritten (a channel is built on every copy and restore)
        BaseChannel.__init__(self, typ)
        self.operator = operator
        self.value = _initial_value(typ)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BinaryOperatorAggregate) and _same_operator(
            self.operator, other.operator
        )

    def _blank(self) -> Self:
        twin = self.__class__(self.typ, self.operator)
        twin.key = self.key
        return twin

    def from_checkpoint(self, checkpoint: Any) -> Self:
        if _is_delta_snapshot(checkpoint):
            checkpoint = checkpoint.value
        return super().from_checkpoint(checkpoint)

    def update(self, values: Sequence[Value]) -> bool:
        if not values:
            return False
        start = 0
        if self.value is MISSING:
            # The first write becomes the value as is (not folded, not unwrapped).
            self.value = values[0]
            start = 1
        overwritten = False
        for i in range(start, len(values)):
            is_overwrite, replacement = _unwrap_overwrite(values[i])
            if is_overwrite:
                if overwritten:
                    raise InvalidUpdateError(
                        create_error_message(
                            message="Can receive only one Overwrite value per super-step.",
                            error_code=ErrorCode.INVALID_CONCURRENT_GRAPH_UPDATE,
                        )
                    )
                self.value = replacement
                overwritten = True
            elif not overwritten:
                self.value = self.operator(self.value, values[i])
        return True
