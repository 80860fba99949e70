"""Opt-in import alias: make `import langgraph...` resolve to warpgraph in this process.

For code the user cannot edit (libraries that import `langgraph` themselves, such as
langchain's agents or langgraph-supervisor)::

    import warpgraph.compat
    warpgraph.compat.install()
    import langgraph.graph          # is warpgraph.graph

or run a whole program under the alias: ``python -m warpgraph run SCRIPT [ARGS...]``.

What it answers:

* ``langgraph`` and every ``langgraph.X`` that warpgraph provides as ``warpgraph.X``: the
  very same module object, registered under both names (so classes, exceptions and
  `isinstance` checks agree whichever name imported them);
* a ``langgraph.X`` of another distribution sharing the namespace (``langgraph.prebuilt``,
  installed separately): loaded from its installed files and running on top of warpgraph
  (its own ``import langgraph...`` lines are answered by the alias);
* a module of LangGraph's own wheel that warpgraph does not provide: ModuleNotFoundError
  naming it (LangGraph's implementation is never mixed in), except ``langgraph.pregel.remote``
  and its ``_remote_run_stream`` (a client of LangGraph's hosted server), used from the installed files.

Limits: modules imported under the real name before `install()` stay what they were (call it
first, before the libraries are imported); `uninstall()` removes the finder and the aliases
it registered. warpgraph itself never ships a top-level ``langgraph`` package.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import Any

__all__ = ("install", "installed", "uninstall")

_OURS = "warpgraph"
_THEIRS = "langgraph"


class _Loader(importlib.abc.Loader):
    """Hands out an already imported warpgraph module under its langgraph name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module was executed when warpgraph imported it."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    """The meta path finder `install()` puts first on `sys.meta_path`."""

    def __init__(self) -> None:
        self.aliased: set[str] = set()

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != _THEIRS and not fullname.startswith(_THEIRS + "."):
            return None
        ours = _OURS + fullname[len(_THEIRS) :]
        module = self._ours(ours)
        if module is not None:
            self.aliased.add(fullname)
            spec = importlib.machinery.ModuleSpec(
                fullname, _Loader(module), is_package=hasattr(module, "__path__")
            )
            if hasattr(module, "__path__"):
                spec.submodule_search_locations = list(module.__path__)
            return spec
        if fullname in _core_modules() and not fullname.startswith(_CLIENTS):
            raise ModuleNotFoundError(
                f"{fullname} is part of LangGraph's own distribution and warpgraph does not "
                f"provide {ours} (the alias never mixes in LangGraph's implementation)",
                name=fullname,
            )
        return _real_spec(fullname)

    @staticmethod
    def _ours(name: str) -> ModuleType | None:
        if name in sys.modules:
            return sys.modules[name]
        parent = name.rpartition(".")[0]
        if parent and _AliasFinder._ours(parent) is None:
            return None
        try:
            if importlib.util.find_spec(name) is None:
                return None
        except (ImportError, ValueError):
            return None
        return importlib.import_module(name)


def _real_spec(fullname: str) -> Any:
    """The spec of `fullname` from the installed langgraph distribution's files, if any."""
    parts = fullname.split(".")
    locations = _real_roots()
    if not locations:
        return None
    for depth in range(1, len(parts)):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: depth + 1]), locations)
        if spec is None:
            return None
        if depth == len(parts) - 1:
            return spec
        locations = list(spec.submodule_search_locations or [])
        if not locations:
            return None
    return None


def _real_roots() -> list[str]:
    """The directories of the installed `langgraph` package (a namespace of distributions:
    langgraph, langgraph-prebuilt, the checkpoint libraries...)."""
    spec = importlib.machinery.PathFinder.find_spec(_THEIRS, sys.path)
    return list(spec.submodule_search_locations or []) if spec is not None else []


_CORE: frozenset[str] | None = None
# clients of LangGraph's hosted server, in LangGraph's wheel: used as they are, on top
_CLIENTS = ("langgraph.pregel.remote", "langgraph.pregel._remote_run_stream")


def _core_modules() -> frozenset[str]:
    """Modules of the `langgraph` wheel itself (not of langgraph-prebuilt, the checkpoint
    libraries or other distributions sharing the `langgraph` namespace)."""
    global _CORE
    if _CORE is None:
        from importlib import metadata

        names = set()
        try:
            files = metadata.distribution(_THEIRS).files or ()
        except metadata.PackageNotFoundError:
            files = ()
        for f in files:
            parts = f.parts
            if parts[:1] != (_THEIRS,) or f.suffix != ".py":
                continue
            mod = list(parts[:-1]) + ([] if f.stem == "__init__" else [f.stem])
            names.add(".".join(mod))
        _CORE = frozenset(names)
    return _CORE


_FINDER: _AliasFinder | None = None


def install() -> None:
    """Answer `import langgraph...` with warpgraph's modules in this process (idempotent).

    Raises RuntimeError if a real `langgraph` module was imported before: the two would mix.
    """
    global _FINDER
    if _FINDER is not None:
        return
    early = sorted(
        n
        for n, m in sys.modules.items()
        if (n == _THEIRS or n.startswith(_THEIRS + "."))
        and m is not None
        and not getattr(m, "__name__", "").startswith(_OURS)
    )
    if early:
        raise RuntimeError(
            "warpgraph.compat.install() must run before langgraph is imported; already "
            f"imported: {', '.join(early[:5])}{' ...' if len(early) > 5 else ''}"
        )
    _FINDER = _AliasFinder()
    sys.meta_path.insert(0, _FINDER)


def installed() -> bool:
    """Whether the alias is active."""
    return _FINDER is not None


def uninstall() -> None:
    """Remove the alias and the `langgraph.*` names it registered."""
    global _FINDER
    if _FINDER is None:
        return
    finder, _FINDER = _FINDER, None
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for name in list(sys.modules):
        if name == _THEIRS or name.startswith(_THEIRS + "."):
            del sys.modules[name]
