"""Medians, spreads and pair-by-pair ratios of the repeats."""

from __future__ import annotations

import statistics
from typing import Any


def summary(values: list[float]) -> dict[str, Any]:
    """{runs, median, min, max, spread}: spread is (max - min) / median."""
    if not values:
        return {"runs": [], "median": None, "min": None, "max": None, "spread": None}
    med = statistics.median(values)
    lo, hi = min(values), max(values)
    return {
        "runs": values,
        "median": med,
        "min": lo,
        "max": hi,
        "spread": (hi - lo) / med if med else None,
    }


def pairwise(num: list[float], den: list[float]) -> dict[str, Any]:
    """Ratios num[i] / den[i] of the runs made in the same turn, summarised."""
    return summary([a / b for a, b in zip(num, den) if b])


def throughput(units: int, seconds: float) -> float:
    return units / max(seconds, 1e-9)  # finite: JSON has no infinity
