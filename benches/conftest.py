"""Benchmarks share the differential harness's library loader (tests/differential/libs.py)
and tests/'s rule that a skip under CI=true is a failure (tests/_ci.py)."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
for p in (ROOT, ROOT.parent / "tests", ROOT.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from tests._ci import fail_skip_in_ci  # (needs the path above)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    fail_skip_in_ci(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    fail_skip_in_ci(outcome.get_result())
