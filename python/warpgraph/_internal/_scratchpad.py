"""Per-task scratchpad placed in config["configurable"]["__pregel_scratchpad"]."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass(kw_only=True, slots=True, frozen=True)
class PregelScratchpad:
    """Counters and resume values of one task (same fields as LangGraph's).

    `interrupt_counter()` returns the index of the next `interrupt()` call; `resume` holds the
    task's resume values in call order; `get_null_resume(consume)` returns the run-wide resume
    value (written under NULL_TASK_ID) or None, removing it when `consume` is true.
    """

    step: int
    stop: int
    call_counter: Callable[[], int]
    interrupt_counter: Callable[[], int]
    get_null_resume: Callable[[bool], Any]
    resume: list[Any]
    subgraph_counter: Callable[[], int]
