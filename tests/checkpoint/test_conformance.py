"""LangGraph's public checkpointer conformance suite run against warpgraph's InMemorySaver."""

from __future__ import annotations

import pytest

conformance = pytest.importorskip("langgraph.checkpoint.conformance")
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from warpgraph.checkpoint.memory import InMemorySaver

ALL = {
    "put",
    "put_writes",
    "get_tuple",
    "list",
    "delete_thread",
    "delete_for_runs",
    "copy_thread",
    "prune",
}


@conformance.checkpointer_test(name="warpgraph.InMemorySaver")
async def warpgraph_memory():
    yield InMemorySaver()


async def test_inmemory_saver_passes_full_conformance_suite() -> None:
    report = await conformance.validate(warpgraph_memory, progress=ProgressCallbacks.quiet())
    failures = {cap: res.failures for cap, res in report.results.items() if res.failures}
    assert failures == {}
    assert report.passed_all_base()
    # The optional capabilities are detected (overridden) and pass, not skipped.
    for cap in ALL:
        result = report.results[cap]
        assert result.detected, cap
        assert result.passed is True, cap
        assert result.tests_passed > 0, cap
    assert report.passed_all()


@conformance.checkpointer_test(name="as_langgraph_saver(warpgraph.InMemorySaver)")
async def adapted_memory():
    from warpgraph.checkpoint.base import as_langgraph_saver

    yield as_langgraph_saver(InMemorySaver())


async def test_langgraph_adapter_passes_full_conformance_suite() -> None:
    report = await conformance.validate(adapted_memory, progress=ProgressCallbacks.quiet())
    assert {cap: res.failures for cap, res in report.results.items() if res.failures} == {}
    assert all(report.results[cap].passed is True for cap in ALL)
