"""Runs the selected workloads on each side, turn by turn, and collects the results.

Every workload: each side prepares it (graph built, saver opened) and runs it once
untimed (warm-up; the floor replays warpgraph's warm-up payloads), then `repeat` turns
in which every side runs once on a fresh thread. The order of the sides rotates from turn
to turn, and ratios are taken within a turn, so machine drift hits both sides of a ratio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from warpgraph._cli.bench.stats import pairwise, summary, throughput
from warpgraph._cli.bench.workloads import WORKLOADS


@dataclass
class Options:
    saver: str = "sqlite"
    workloads: list[str] = field(default_factory=list)
    size: int | None = None
    durability: str = "sync"
    repeat: int = 3
    full: bool = False
    compare: bool = False
    floor: bool = False
    dsn: str | None = None

    def size_of(self, workload: str) -> int:
        if self.size is not None:
            return max(self.size, WORKLOADS[workload].min_size)
        spec = WORKLOADS[workload]
        return spec.full_size if self.full else spec.quick_size


def run_workload(
    workload: str, size: int, sides: list[Any], floor: Any, repeat: int, tick: Any
) -> dict[str, Any]:
    """{metric: {side: [throughput per turn]}} plus the storage series of the last turn."""
    runs: dict[str, dict[str, list[float]]] = {}
    series: dict[str, list] = {}
    active = [s for s in sides]
    try:
        for side in sides:
            side.prepare(workload, size)
            side.run(f"{workload}-warmup")
        if floor is not None:
            checkpoints, payloads = sides[0].handle.thread_payloads(f"{workload}-warmup")
            floor.load(workload, size, checkpoints, payloads)
            active.append(floor)
        for turn in range(repeat):
            k = turn % len(active)
            for side in active[k:] + active[:k]:
                result = side.run(f"{workload}-{turn}")
                for metric, (units, seconds) in result.metrics.items():
                    runs.setdefault(metric, {}).setdefault(side.name, []).append(
                        throughput(units, seconds)
                    )
                if result.series is not None:
                    series[side.name] = [list(p) for p in result.series]
                tick()
    finally:
        for side in sides:
            side.close()
    return {"runs": runs, "series": series}


def result_rows(workload: str, size: int, unit: str, collected: dict[str, Any]) -> list[dict]:
    """The JSON `results` entries of one workload (see schema.py)."""
    rows = []
    for metric, by_side in collected["runs"].items():
        wg = by_side.get("warpgraph", [])
        row: dict[str, Any] = {
            "workload": workload,
            "metric": metric,
            "unit": f"{unit}/s",
            "size": size,
            "sides": {name: summary(vals) for name, vals in by_side.items()},
            "ratios": {},
        }
        if "langgraph" in by_side:
            row["ratios"]["vs_langgraph"] = pairwise(wg, by_side["langgraph"])
        if "floor" in by_side:
            # time relative to the floor's: floor throughput / warpgraph throughput
            row["ratios"]["vs_floor"] = pairwise(by_side["floor"], wg)
        rows.append(row)
    return rows
