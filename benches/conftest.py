"""Benchmarks share the differential harness's library loader (tests/differential/libs.py)
and tests/'s rule that a skip under CI=true is a failure (tests/_ci.py)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
for p in (ROOT, ROOT.parent / "tests", ROOT.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from tests._ci import (  # (needs the path above; hooks: pytest finds them here)
    pytest_make_collect_report,  # noqa: F401
    pytest_runtest_makereport,  # noqa: F401
)
