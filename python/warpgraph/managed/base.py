"""Managed values: state keys whose value the runtime computes for each task (from the
task's scratchpad) instead of reading a channel."""

from __future__ import annotations

from abc import ABC, abstractmethod
from inspect import isclass
from typing import Any, Generic, TypeVar

from warpgraph._internal._scratchpad import PregelScratchpad

__all__ = ("ManagedValue", "ManagedValueMapping", "ManagedValueSpec", "is_managed_value")

V = TypeVar("V")


class ManagedValue(ABC, Generic[V]):
    """A managed value: `get(scratchpad)` gives a task its value."""

    @staticmethod
    @abstractmethod
    def get(scratchpad: PregelScratchpad) -> V: ...


ManagedValueSpec = type[ManagedValue]
ManagedValueMapping = dict[str, ManagedValueSpec]


def is_managed_value(value: Any) -> bool:
    """`value` is a ManagedValue subclass."""
    return isclass(value) and issubclass(value, ManagedValue)
