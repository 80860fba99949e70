"""What the LangGraph-vs-warpgraph benchmarks share: a module's cache of sides (one per
library and saver / store), the per-case benchmark setup, the check that both libraries
gave the same answer, and the ratio summary of the A/B runs."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import pytest


def side_cache(label: str, make: Callable[[str, str, str], Any]) -> Any:
    """A module-scoped fixture giving `get(lib, kind)`: the side `make(lib, kind, db_path)`
    of that library and saver / store kind, made once per module (db files in a temp dir
    named after `label`)."""
    made: dict[tuple[str, str], Any] = {}

    @pytest.fixture(scope="module")
    def sides(tmp_path_factory: Any) -> Any:
        tmp = tmp_path_factory.mktemp(label)

        def get(lib: str, kind: str) -> Any:
            if (lib, kind) not in made:
                made[(lib, kind)] = make(lib, kind, str(tmp / f"{lib}.db"))
            return made[(lib, kind)]

        yield get
        made.clear()

    return sides


def case_side(benchmark: Any, sides: Any, case: str, kind: str, lib: str, kind_key: str) -> Any:
    """The side a parametrized case runs on (skipped when it has no such case), with the
    benchmark grouped by case/kind and labelled (`kind_key`: "saver" or "store")."""
    side = sides(lib, kind)
    if not side.has(case):
        pytest.skip(f"{lib} has no {case} on {kind}")
    benchmark.group = f"{case}/{kind}"
    benchmark.extra_info.update({"case": case, kind_key: kind, "lib": lib})
    return side


def same_answers(results: dict, key: Any, lib: str, got: Any) -> None:
    """Keep `got` under `key` for `lib`; once both libraries ran the case, they must agree."""
    seen = results.setdefault(key, {})
    seen[lib] = got
    if len(seen) == 2:
        assert seen["warpgraph"] == seen["langgraph"]


def speedup(ref: list[float], ours: list[float]) -> str:
    """The median (range) of the per-turn ratios reference / warpgraph, as `12.3x (4.5-67.8)`."""
    ratios = [r / o for r, o in zip(ref, ours, strict=True)]
    return f"{statistics.median(ratios):6.1f}x ({min(ratios):.1f}-{max(ratios):.1f})"
