"""Skips under CI: CI runs every test, so there a skip is a failure, except the opt-in
variants named here. Shared by the conftests of tests/ and benches/, which import its two
hooks."""

from __future__ import annotations

import os

import pytest

LONG_SKIP = "long variant; set WARPGRAPH_LONG_TESTS=1"
FAST_PATHS_SKIP = "tests a fast path, off with WARPGRAPH_FAST_PATHS=0"
PY310_REFERENCE_SKIP = (
    "the reference LangGraph needs Python >= 3.11 to carry a run's context into async code"
)
# the only skips CI accepts: opt-in variants, not something missing or not ready
CI_ALLOWED_SKIPS = (LONG_SKIP, FAST_PATHS_SKIP, PY310_REFERENCE_SKIP)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _skip_reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def fail_skip_in_ci(report) -> None:
    """Under CI=true a skip is a failure (a missing dependency, a module that does not
    import, a server that does not start), except the opt-in variants above."""
    if not (in_ci() and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report.longrepr)
    if any(allowed in reason for allowed in CI_ALLOWED_SKIPS):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped under CI=true (CI runs every test): {reason}"


# the two hooks a conftest imports (pytest finds them in its namespace) to apply the rule
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    fail_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    fail_skip_in_ci(outcome.get_result())
