"""Hot and cold: LangGraph's bench shapes (`graphs.CASES`) timed three ways, LangGraph
1.2.24 against warpgraph in one process.

* `hot`: each library's runs back to back (its code and data stay in the caches: the
  hot-loop number other benches give);
* `interleaved`: the two libraries' runs alternate, so each run starts with its code and
  data evicted by the other's, as a real agent's steps alternate with node bodies and I/O;
* `thrashed`: alternating, and before each run a node-body stand-in writes and reads a
  512 KB buffer (every cache line), so the data caches hold none of the engine's state.

A run is one whole `invoke` (a new thread per run with InMemorySaver); its time is reported
per unit (per super-step, per fan-out task, or per `invoke` for `small3`, whose per-request
setup is part of the run). Ratios: LangGraph's median / warpgraph's median, per mode, with
the range of the turn-by-turn ratios.

Run (A/B table):  PYTHONPATH=benches .venv/bin/python benches/bench_interleaved.py [--quick]
As a test:        pytest benches/bench_interleaved.py   (each case and mode once, outputs
                  compared with the expected value and the reference; no timed assertions)

Targets (the speed issue's, for the interleaved mode): chain, loop and wide >= 30x without a
saver and >= 15x with InMemorySaver; fan-out >= 20x per task; small3 >= 20x / >= 15x.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
from differential.libs import get_lib
from graphs import CASES

LIBS = ("langgraph", "warpgraph")
SAVERS = ("none", "memory")
MODES = ("hot", "interleaved", "thrashed")
TARGETS = {
    **{(c, "none"): 30 for c in ("chain100", "loop1000", "wide100")},
    **{(c, "memory"): 15 for c in ("chain100", "loop1000", "wide100")},
    ("fanout1000", "none"): 20,
    ("small3", "none"): 20,
    ("small3", "memory"): 15,
}

_BUFFER = bytearray(512 * 1024)
_LINE = 64
_threads = itertools.count()


def thrash() -> int:
    """Write every cache line of a 512 KB buffer, then read it back (a node body's data)."""
    _BUFFER[::_LINE] = bytes(len(_BUFFER) // _LINE)
    return sum(_BUFFER[::_LINE])


class Side:
    """One library's graph of one case on one saver kind, and its run."""

    def __init__(self, lib_name: str, case: str, saver: str) -> None:
        lib = get_lib(lib_name)
        self.saver = lib.InMemorySaver() if saver == "memory" else None
        self.graph, self.input, self.expected, self.units, self.unit = CASES[case](lib, self.saver)
        self.kind = saver

    def config(self) -> dict:
        cfg: dict[str, Any] = {"recursion_limit": 5000}
        if self.kind == "memory":
            cfg["configurable"] = {"thread_id": f"bench-{next(_threads)}"}
        return cfg

    def run(self) -> Any:
        return self.graph.invoke(self.input, self.config())

    def timed(self, before: Callable[[], Any] | None = None) -> float:
        """Seconds per unit of one run (`before` runs first, untimed)."""
        if before is not None:
            before()
        t0 = time.perf_counter()
        self.run()
        return (time.perf_counter() - t0) / self.units


def measure(case: str, saver: str, turns: int) -> dict[str, dict[str, list[float]]]:
    """Per mode, per library: the per-unit seconds of `turns` runs (after one warm-up)."""
    sides = {lib: Side(lib, case, saver) for lib in LIBS}
    for side in sides.values():
        side.run()
    out: dict[str, dict[str, list[float]]] = {m: {lib: [] for lib in LIBS} for m in MODES}
    gc.collect()
    for lib, side in sides.items():  # hot: one library's runs back to back
        out["hot"][lib] = [side.timed() for _ in range(turns)]
    for mode, before in (("interleaved", None), ("thrashed", thrash)):
        for _ in range(turns):
            for lib, side in sides.items():
                out[mode][lib].append(side.timed(before))
    return out


def ratios(times: dict[str, list[float]]) -> tuple[float, float, float]:
    """(median ratio, lowest and highest turn ratio) of LangGraph's time over warpgraph's."""
    ref, ours = times["langgraph"], times["warpgraph"]
    turn = [r / o for r, o in zip(ref, ours)]
    return statistics.median(ref) / statistics.median(ours), min(turn), max(turn)


def report(case: str, saver: str, result: dict[str, dict[str, list[float]]]) -> list[str]:
    unit = CASES[case](get_lib("warpgraph"), None)[4]
    target = TARGETS.get((case, saver))
    rows = []
    for mode in MODES:
        ref = statistics.median(result[mode]["langgraph"]) * 1e6
        ours = statistics.median(result[mode]["warpgraph"]) * 1e6
        mid, lo, hi = ratios(result[mode])
        goal = f"  target {target}x" if target and mode == "interleaved" else ""
        rows.append(
            f"{case:11} {saver:6} {mode:11} langgraph {ref:9.2f} µs/{unit:6} "
            f"warpgraph {ours:8.2f} µs  {mid:6.1f}x ({lo:.1f}-{hi:.1f}){goal}"
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 turns instead of 15")
    ap.add_argument("--case", action="append", choices=list(CASES), help="only these cases")
    args = ap.parse_args(argv)
    turns = 5 if args.quick else 15
    for case in args.case or list(CASES):
        for saver in SAVERS:
            for row in report(case, saver, measure(case, saver, turns)):
                print(row, flush=True)


# --- as a test: every case, saver and mode once, outputs checked ---------------------------
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("case", list(CASES))
def test_modes_run_and_agree(case: str, saver: str) -> None:
    sides = {lib: Side(lib, case, saver) for lib in LIBS}
    outputs = {}
    for lib, side in sides.items():
        thrash()
        outputs[lib] = side.run()
        assert outputs[lib] == side.expected
    assert outputs["warpgraph"] == outputs["langgraph"]
    result = measure(case, saver, turns=1)
    assert all(len(result[m][lib]) == 1 for m in MODES for lib in LIBS)
    assert len(report(case, saver, result)) == len(MODES)


def test_thrash_touches_every_line() -> None:
    _BUFFER[::_LINE] = b"\x01" * (len(_BUFFER) // _LINE)
    assert thrash() == 0  # (it zeroed every line it touched)


if __name__ == "__main__":
    main()
