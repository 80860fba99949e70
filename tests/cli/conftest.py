"""Helpers for the command-line tests: the CLI in this process, or in a subprocess of this
tree (optionally with modules hidden, as if a package were not installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import warpgraph

# the warpgraph this process imported: the installed wheel in CI (the source tree has no
# compiled `_core` there), the tree with its built module in development
PYTHON_SRC = Path(warpgraph.__file__).resolve().parents[1]


@pytest.fixture
def cli(capsys):
    """cli(*args) -> (exit code, stdout, stderr), run in this process."""
    from warpgraph.__main__ import main

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def cli_proc(tmp_path):
    """cli_proc(*args, hide=(module, ...), cwd=...) -> CompletedProcess: `python -m
    warpgraph` in a child; each hidden module fails to import as if not installed."""

    def run(*args: str, hide: tuple[str, ...] = (), cwd: str | None = None, env=None):
        paths = [str(PYTHON_SRC)]
        if hide:
            shadow = tmp_path / "hidden-modules"
            shadow.mkdir(exist_ok=True)
            for name in hide:
                (shadow / f"{name}.py").write_text(
                    f"raise ModuleNotFoundError(\"No module named '{name}'\", name={name!r})\n"
                )
            paths.insert(0, str(shadow))
        full_env = {**os.environ, **(env or {})}
        full_env["PYTHONPATH"] = os.pathsep.join(
            paths + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        return subprocess.run(
            [sys.executable, "-m", "warpgraph", *args],
            capture_output=True,
            text=True,
            cwd=cwd or str(tmp_path),
            env=full_env,
            timeout=300,
            check=False,
        )

    return run
