"""`IsLastStep` / `RemainingSteps`: how close a run is to its recursion limit."""

from __future__ import annotations

from typing import Annotated

from warpgraph._internal._scratchpad import PregelScratchpad
from warpgraph.managed.base import ManagedValue

__all__ = ("IsLastStep", "IsLastStepManager", "RemainingSteps", "RemainingStepsManager")


class IsLastStepManager(ManagedValue[bool]):
    """True in the last step the recursion limit allows."""

    @staticmethod
    def get(scratchpad: PregelScratchpad) -> bool:
        return scratchpad.step == scratchpad.stop - 1


class RemainingStepsManager(ManagedValue[int]):
    """How many steps the recursion limit still allows (this one included)."""

    @staticmethod
    def get(scratchpad: PregelScratchpad) -> int:
        return scratchpad.stop - scratchpad.step


IsLastStep = Annotated[bool, IsLastStepManager]
RemainingSteps = Annotated[int, RemainingStepsManager]
