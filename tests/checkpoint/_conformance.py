"""What every warpgraph saver must achieve in LangGraph's public conformance suite."""

from __future__ import annotations

from typing import Any

# Base capabilities plus the optional ones warpgraph's savers all implement.
ALL = frozenset(
    {
        "put",
        "put_writes",
        "get_tuple",
        "list",
        "delete_thread",
        "delete_for_runs",
        "copy_thread",
        "prune",
    }
)


def assert_full_pass(report: Any) -> None:
    """Every base test passed and every capability in ALL was detected and passed."""
    failures = {cap: res.failures for cap, res in report.results.items() if res.failures}
    assert failures == {}
    assert report.passed_all_base()
    for cap in ALL:
        result = report.results[cap]
        assert result.detected, cap
        assert result.passed is True, cap
        assert result.tests_passed > 0, cap
    assert report.passed_all()
