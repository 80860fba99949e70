"""LangGraph's public checkpointer conformance suite run against warpgraph's InMemorySaver."""

from __future__ import annotations

import pytest

conformance = pytest.importorskip("langgraph.checkpoint.conformance")
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from warpgraph.checkpoint.memory import InMemorySaver

from ._conformance import assert_full_pass


@conformance.checkpointer_test(name="warpgraph.InMemorySaver")
async def warpgraph_memory():
    yield InMemorySaver()


async def test_inmemory_saver_passes_full_conformance_suite() -> None:
    report = await conformance.validate(warpgraph_memory, progress=ProgressCallbacks.quiet())
    assert_full_pass(report)  # the optional capabilities are detected and pass too


@conformance.checkpointer_test(name="as_langgraph_saver(warpgraph.InMemorySaver)")
async def adapted_memory():
    from warpgraph.checkpoint.base import as_langgraph_saver

    yield as_langgraph_saver(InMemorySaver())


async def test_langgraph_adapter_passes_full_conformance_suite() -> None:
    report = await conformance.validate(adapted_memory, progress=ProgressCallbacks.quiet())
    assert_full_pass(report)
