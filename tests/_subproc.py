"""Environment for child Python processes started by tests.

Children must import the same warpgraph as the test process: the installed wheel in CI, the
editable build in development. Pointing PYTHONPATH at the source tree would shadow a wheel
with a package that has no compiled `_core`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import warpgraph


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    root = str(Path(warpgraph.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -c code *args` with `child_env()`; text output, no check."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
