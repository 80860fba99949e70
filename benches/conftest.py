"""Benchmarks share the differential harness's library loader (tests/differential/libs.py)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
for p in (ROOT, ROOT.parent / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
