"""The README's main job (examples/quickstart.py) runs and prints the seed example's facts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "quickstart.py"


def assert_quickstart_output(out: list[str]) -> None:
    """The lines quickstart.py prints after its first (the updates, the checkpoints, the
    state, the second invoke); also checked on an installed wheel (tests/install)."""
    assert out[1:3] == ["update: {'a': {'n': 2}}", "update: {'b': {'n': 20}}"]
    assert out[3:7] == [
        "checkpoint step=-1 source=input next=('__start__',)",
        "checkpoint step= 0 source=loop  next=('a',)",
        "checkpoint step= 1 source=loop  next=('b',)",
        "checkpoint step= 2 source=loop  next=()",
    ]
    assert out[7:9] == ["state: {'n': 20}", "second invoke on the same thread: {'n': 30}"]


def test_quickstart_runs_on_sqlite(tmp_path) -> None:
    db = tmp_path / "threads.sqlite"
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), str(db)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert_quickstart_output(out)
    assert db.stat().st_size > 0
