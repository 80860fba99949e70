"""Managed values (computed per task by the runtime)."""

from warpgraph.managed.is_last_step import IsLastStep, RemainingSteps

__all__ = ("IsLastStep", "RemainingSteps")
