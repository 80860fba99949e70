"""The package's layers import only downwards.

Every `import` / `from ... import` in warpgraph's modules, module-level or inside a
function, is read from the source (AST). The layers, lowest first:

1. the base: `_internal`, `channels`, `checkpoint`, `store`, `cache` and the top-level
   modules (`config`, `types`, `errors`, ...);
2. `pregel`, the engine;
3. `graph` and `func`, the builders on top of the engine;
4. `prebuilt`, `compat`, `_cli` and `__main__`, which use the builders.

A module may import its own layer and the layers below it, never one above (LangGraph's
pregel layer, likewise, imports nothing of its graph layer). The graph layer marks what the
engine must recognise (`pregel._write.register_config_free_writer`, `_timeout.NEVER_BLOCKS`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import warpgraph

ROOT = Path(warpgraph.__file__).parent
LAYERS = {"pregel": 2, "graph": 3, "func": 3, "prebuilt": 4, "compat": 4, "_cli": 4}
TOP_LEVEL_UPPER = {"__main__": 4}


def _layer(module: str) -> int:
    """The layer of a dotted module name inside warpgraph (`warpgraph.x.y` -> x's)."""
    parts = module.split(".")
    if parts[0] != "warpgraph" or len(parts) == 1:
        return 1
    return LAYERS.get(parts[1], TOP_LEVEL_UPPER.get(parts[1], 1))


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every warpgraph import in `path` (module `module`)."""
    tree = ast.parse(path.read_text(), str(path))
    package = module
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name == "warpgraph":  # `from warpgraph import graph` names modules too
                found += [(node.lineno, f"warpgraph.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, name))
    return [(line, name) for line, name in found if name.split(".")[0] == "warpgraph"]


def _violations(modules: list[tuple[Path, str]]) -> list[str]:
    out = []
    for path, here in modules:
        mine = _layer(here)
        for line, name in _imports(path, here):
            if _layer(name) > mine:
                out.append(f"{path.name}:{line} ({here}) imports {name}")
    return out


def test_no_module_imports_a_layer_above_its_own() -> None:
    modules = [(path, _module_name(path)) for path in sorted(ROOT.rglob("*.py"))]
    assert len(modules) > 100
    assert _violations(modules) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from warpgraph.graph.state import StateGraph\n", "warpgraph.graph.state"),
        ("def f():\n    import warpgraph.func\n", "warpgraph.func"),
        ("from warpgraph import graph\n", "warpgraph.graph"),
        ("from ..graph import _branch\n", "warpgraph.graph"),
    ],
)
def test_the_scanner_sees_each_kind_of_import(tmp_path: Path, source: str, expected: str) -> None:
    probe = tmp_path / "_probe.py"
    probe.write_text(source)
    module = "warpgraph.pregel._probe"
    assert expected in [name for _, name in _imports(probe, module)]
    (violation,) = _violations([(probe, module)])
    assert violation.endswith(f"({module}) imports {expected}")
