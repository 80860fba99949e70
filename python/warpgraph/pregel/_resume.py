"""Resume / human-in-the-loop pieces of the loop that only run when a run resumes or
addresses a checkpoint (kept out of the per-step path).

How a `Command(resume=...)` meets the interrupts pending on the thread (LangGraph 1.2.24):

- a map `{interrupt_id: value}` answers the interrupts it names; ids that are not pending
  are ignored, an empty map answers nothing;
- a single value answers the one pending interrupt (with several pending it is refused);
  with none pending it resumes a static breakpoint (`interrupt_before` / `_after`), and on
  a thread without checkpoints the run starts from the beginning;
- with `configurable["__pregel_strict_resume"]` (root runs, at the thread's latest
  checkpoint) a map naming no interrupt or one that is not pending, and an ambiguous single
  value, raise `UnknownInterruptError` before anything is written.
"""

from __future__ import annotations

from typing import Any

from warpgraph._internal._constants import (
    CONFIG_KEY_STRICT_RESUME,
)
from warpgraph.errors import EmptyInputError, UnknownInterruptError

__all__ = ("EmptyCommandError", "check_resume")

AMBIGUOUS_RESUME = (
    "When there are multiple pending interrupts, you must specify the interrupt id when "
    "resuming. Docs: https://docs.langchain.com/oss/python/langgraph/interrupts"
    "#handling-multiple-interrupts."
)


class EmptyCommandError(EmptyInputError, UnboundLocalError):
    """A `Command` with nothing to do (no resume, update, goto). LangGraph 1.2.24 fails
    there with an `UnboundLocalError` of its own internals; this error is one too, so code
    catching that keeps working, and an `EmptyInputError` that says what is wrong."""


def check_resume(loop: Any, resume: Any, is_map: bool) -> None:
    """Refuse a resume that does not fit the pending interrupts (see module doc)."""
    strict = (
        bool(loop.conf.get(CONFIG_KEY_STRICT_RESUME, False))
        and not loop.is_nested
        and not loop._superseded
    )
    if is_map:
        if not strict:
            return
        pending = loop._pending_interrupts()
        if not resume:
            raise UnknownInterruptError(
                "The resume map names no interrupt",
                reason="empty_map",
                pending_ids=sorted(pending),
            )
        unknown = sorted(resume.keys() - pending)
        if unknown:
            raise UnknownInterruptError(
                f"Unknown or already-consumed interrupt: {unknown[0]}",
                reason="not_pending",
                interrupt_ids=unknown,
                pending_ids=sorted(pending),
            )
        return
    pending = loop._pending_interrupts()
    if len(pending) > 1:
        if strict:
            raise UnknownInterruptError(
                AMBIGUOUS_RESUME, reason="ambiguous", pending_ids=sorted(pending)
            )
        raise RuntimeError(AMBIGUOUS_RESUME)
