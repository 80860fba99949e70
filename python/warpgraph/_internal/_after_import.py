"""Run a callback once a given module has been imported (now, or whenever it is).

warpgraph never imports langchain-core eagerly (it costs more than warpgraph itself), yet
some of its classes must become langchain-core types the moment langchain-core is in use:
the runnables become virtual `Runnable` subclasses, `Command` a `ToolOutputMixin`. Each such
link registers here; one `sys.meta_path` entry wraps the loader of the watched modules and
calls the callbacks right after the module body ran, before the importer sees the module.
The entry removes itself when nothing is left to watch.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ("after_import",)

logger = logging.getLogger("warpgraph")

_PENDING: dict[str, list[Callable[[ModuleType], None]]] = {}


def after_import(module: str, callback: Callable[[ModuleType], None]) -> None:
    """Call `callback(module)` now if `module` is loaded, else right after it is imported."""
    loaded = sys.modules.get(module)
    if loaded is not None and getattr(loaded, "__spec__", None) is not None:
        _call(callback, loaded)
        return
    _PENDING.setdefault(module, []).append(callback)
    if _WATCHER not in sys.meta_path:
        sys.meta_path.insert(0, _WATCHER)


def _call(callback: Callable[[ModuleType], None], module: ModuleType) -> None:
    try:
        callback(module)
    except Exception:  # a link that fails must not break the user's import
        logger.exception("warpgraph: linking to %s failed", module.__name__)


def _run(module: ModuleType) -> None:
    for callback in _PENDING.pop(module.__name__, ()):
        _call(callback, module)
    if not _PENDING and _WATCHER in sys.meta_path:
        sys.meta_path.remove(_WATCHER)


class _Loader:
    """The real loader of a watched module, running the callbacks after the module body."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _run(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)


class _Watcher:
    """A `sys.meta_path` entry that answers only for watched modules, through the finders
    after it, and wraps the loader they return."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _PENDING:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


_WATCHER = _Watcher()
