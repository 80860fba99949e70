"""The graph lifecycle events of `callbacks`: the same fields, order, repr, equality and
immutability as LangGraph's."""

from __future__ import annotations

import dataclasses
import importlib
from uuid import UUID

import pytest

RUN = UUID(int=7)


def _events(lib: str) -> tuple:
    cb = importlib.import_module(f"{lib}.callbacks")
    interrupt = cb.GraphInterruptEvent(RUN, "interrupt_before", "c1", ("sub",), ("why",))
    resume = cb.GraphResumeEvent(None, "input", "c2", ())
    return cb, interrupt, resume


@pytest.mark.parametrize("which", [1, 2], ids=["interrupt", "resume"])
def test_lifecycle_events_match_reference(which: int) -> None:
    ours, ref = _events("warpgraph")[which], _events("langgraph")[which]
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(ref)]
    assert repr(ours) == repr(ref)
    assert dataclasses.astuple(ours) == dataclasses.astuple(ref)
    assert ours == dataclasses.replace(ours) and hash(ours) == hash(dataclasses.replace(ours))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.status = "done"  # type: ignore[misc]


def test_the_two_events_are_never_equal() -> None:
    cb, _, _ = _events("warpgraph")
    interrupt = cb.GraphInterruptEvent(RUN, "done", "c", (), ())
    resume = cb.GraphResumeEvent(RUN, "done", "c", ())
    assert interrupt != resume and not isinstance(resume, cb.GraphInterruptEvent)
