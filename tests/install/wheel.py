"""Find the built wheel and the interpreters for the install test, and make its venvs.

The wheel is the x86_64 (the machine's architecture) manylinux2014 wheel in dist/ that
`make build` or `make wheels` writes (WARPGRAPH_WHEEL names another file). It must hold the
tree's Python files as they are now: a wheel older than the tree is not the code under test.
"""

from __future__ import annotations

import base64
import csv
import glob
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSIONS = ("3.10", "3.11", "3.12", "3.13")


def find_wheel() -> tuple[Path | None, str]:
    """(the wheel, "") or (None, why not)."""
    named = os.environ.get("WARPGRAPH_WHEEL")
    if named:
        path = Path(named)
        return (path, "") if path.is_file() else (None, f"WARPGRAPH_WHEEL={named} is no file")
    pattern = f"warpgraph-*-manylinux2014_{platform.machine()}*.whl"
    found = sorted((ROOT / "dist").glob(pattern))
    if len(found) != 1:
        return (
            None,
            f"want one dist/{pattern}, found {len(found)}: run `make build` or `make wheels`",
        )
    return found[0], ""


def stale_files(wheel: Path) -> list[str]:
    """The package's .py/.pyi files whose content in the wheel differs from the tree's."""
    with zipfile.ZipFile(wheel) as zf:
        record = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
        rows = csv.reader(io.StringIO(zf.read(record).decode()))
        hashes = {path: digest for path, digest, *_ in rows if digest}
    stale = []
    for file in sorted((ROOT / "python").rglob("*.py*")):
        if file.suffix not in (".py", ".pyi"):
            continue
        rel = file.relative_to(ROOT / "python").as_posix()
        digest = hashlib.sha256(file.read_bytes()).digest()
        want = "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        if hashes.get(rel) != want:
            stale.append(rel)
    return stale


def find_python(version: str) -> Path | None:
    """An interpreter for `version` ("3.10"): pythonX.Y on PATH, else pyenv's."""
    candidates = [shutil.which(f"python{version}")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(glob.glob(str(pyenv / "versions" / f"{version}.*" / "bin" / "python3")))
    for candidate in filter(None, candidates):
        out = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            check=False,
            capture_output=True,
            text=True,
        )
        if out.returncode == 0 and out.stdout.strip() == version:
            return Path(candidate)
    return None


def clean_env() -> dict[str, str]:
    """The environment minus whatever would put another warpgraph on the path."""
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONUSERBASE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


class Venv:
    """A fresh venv made by `python` with the wheel and its runtime dependencies."""

    def __init__(self, python: Path, wheel: Path, where: Path) -> None:
        self.dir = where / "venv"
        self.cwd = where
        self.run_checked(str(python), "-m", "venv", str(self.dir))
        self.python = str(self.dir / "bin" / "python")
        self.run_checked(self.python, "-m", "pip", "install", "-q", "--no-input", str(wheel))

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(args),
            check=False,
            cwd=self.cwd,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def run_checked(self, *args: str) -> subprocess.CompletedProcess:
        out = self.run(*args)
        if out.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
            )
        return out

    def py(self, *args: str) -> str:
        return self.run_checked(self.python, *args).stdout


def wheel_version(wheel: Path) -> str:
    m = re.match(r"warpgraph-([^-]+)-", wheel.name)
    assert m, wheel.name
    return m.group(1)
