"""The `warpgraph` console script of the installed wheel (`make test` installs it into the
venv before running the suite)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest


def _script() -> str:
    eps = [e for e in metadata.entry_points(group="console_scripts") if e.name == "warpgraph"]
    if not eps:
        pytest.fail(
            "the installed warpgraph distribution declares no `warpgraph` script "
            "(rebuild and install the wheel: make build)"
        )
    assert eps[0].value == "warpgraph.__main__:main"
    found = shutil.which("warpgraph", path=str(Path(sys.executable).parent)) or shutil.which(
        "warpgraph"
    )
    assert found, "the warpgraph console script is not on PATH next to this interpreter"
    return found


def test_console_script_runs_bench_and_inspector(tmp_path):
    script = _script()
    env = dict(os.environ)
    out = subprocess.run(
        [script, "--version"], capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert out.returncode == 0 and out.stdout.startswith("warpgraph ")
    report = tmp_path / "r.json"
    proc = subprocess.run(
        [
            script,
            "bench",
            "--workload",
            "loop",
            "--size",
            "3",
            "--repeat",
            "1",
            "--quiet",
            "--json",
            str(report),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(report.read_text())["results"][0]["workload"] == "loop"
    bad = subprocess.run(
        [script, "bench", "--saver", "nope"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    missing = subprocess.run(
        [script, "threads", str(tmp_path / "x.db")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert missing.returncode == 2 and "no such database file" in missing.stderr
