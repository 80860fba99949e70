"""Run code written for LangGraph on warpgraph, in this process: `install()`.

After `install()`, `import langgraph.X` gives warpgraph's module `warpgraph.X` (the same
module object) for every module warpgraph provides. Any other `langgraph.*` module
(langgraph-prebuilt's `langgraph.prebuilt`, say) is imported from the separately installed
distributions as usual and runs on top of warpgraph. warpgraph ships no `langgraph`
package: `langgraph` becomes a namespace whose portions are the installed ones.

`python -m warpgraph run SCRIPT [ARGS...]` runs a script with the alias installed.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

__all__ = ("install", "installed", "uninstall")

_ALIAS = "langgraph"
_TARGET = "warpgraph"


class _ExistingModule(importlib.abc.Loader):
    """Loads `langgraph.X` as the already importable module `warpgraph.X`."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> Any:
        return importlib.import_module(self.target)

    def exec_module(self, module: Any) -> None:
        return None  # (the warpgraph module ran when it was imported)


class _Namespace(importlib.abc.Loader):
    """The `langgraph` package itself: an empty namespace over the installed portions."""

    def __init__(self, portions: list[str]) -> None:
        self.portions = portions

    def create_module(self, spec: Any) -> Any:
        module = types.ModuleType(_ALIAS, "langgraph names, answered by warpgraph")
        module.__path__ = list(self.portions)
        return module

    def exec_module(self, module: Any) -> None:
        return None


def _portions() -> list[str]:
    """Directories named `langgraph` on sys.path (other distributions' parts of it)."""
    found = []
    for entry in sys.path:
        d = os.path.join(entry or os.getcwd(), _ALIAS)
        if os.path.isdir(d) and d not in found:
            found.append(d)
    return found


class AliasFinder(importlib.abc.MetaPathFinder):
    """Answers `langgraph` and the `langgraph.*` modules warpgraph has; nothing else."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname == _ALIAS:
            portions = _portions()
            spec = importlib.machinery.ModuleSpec(_ALIAS, _Namespace(portions), is_package=True)
            spec.submodule_search_locations = portions
            return spec
        if not fullname.startswith(_ALIAS + "."):
            return None
        mirrored = _TARGET + fullname[len(_ALIAS) :]
        try:
            found = importlib.util.find_spec(mirrored)
        except (ImportError, ValueError):
            return None
        if found is None:
            return None
        is_package = found.submodule_search_locations is not None
        return importlib.machinery.ModuleSpec(
            fullname, _ExistingModule(mirrored), is_package=is_package
        )


_FINDER: AliasFinder | None = None


def installed() -> bool:
    """Whether the alias is installed in this process."""
    return _FINDER is not None and _FINDER in sys.meta_path


def install() -> None:
    """Make `import langgraph...` resolve to warpgraph (idempotent). Raises RuntimeError when
    LangGraph's own modules were imported already (they would mix with warpgraph's)."""
    global _FINDER
    if installed():
        return
    loaded = sorted(
        m
        for m, mod in sys.modules.items()
        if (m == _ALIAS or m.startswith(_ALIAS + "."))
        and not getattr(mod, "__name__", "").startswith(_TARGET)
    )
    real = [
        m for m in loaded if m != _ALIAS or not isinstance(sys.modules[m].__loader__, _Namespace)
    ]
    if real:
        raise RuntimeError(
            "warpgraph.compat.install() must run before langgraph is imported; "
            f"already imported: {', '.join(real[:5])}"
        )
    _FINDER = AliasFinder()
    sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Remove the alias (modules already imported through it stay imported)."""
    global _FINDER
    if _FINDER is not None and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _FINDER = None


def run(argv: list[str]) -> int:
    """`python -m warpgraph run SCRIPT [ARGS...]`: run SCRIPT as __main__ with the alias."""
    import runpy

    if len(argv) < 1:
        print("usage: python -m warpgraph run SCRIPT [ARGS...]", file=sys.stderr)
        return 2
    script = argv[0]
    install()
    sys.argv = [script, *argv[1:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0
