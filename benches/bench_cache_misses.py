"""Cache misses of interleaved runs: what a run costs when the other library's run has just
evicted its code and data, counted by valgrind's cachegrind rather than timed.

For each case of `graphs.CASES` and each library L, two child interpreters run under
`valgrind --tool=cachegrind` with the same warm-up: one runs N rounds of "the other
library's invoke, then L's invoke", the other only the other library's N invokes. The
difference, per unit (super-step, fan-out task, or invoke for small3), is L's cost in an
interleaved run: instructions, instruction-fetch misses and data misses. The simulated
first-level caches are set to 512 KB (8-way, 64-byte lines), the size of a core's L2 on
the machines this project runs on, so a "miss" here is a line the run had to fetch from
L3 or memory (valgrind takes its last-level cache from the host, whose shared L3 holds
both runs: its misses are not shown).

    PYTHONPATH=python:benches:tests .venv/bin/python benches/bench_cache_misses.py \
        [--case chain100 ...] [--saver none|memory] [--rounds N]

It needs valgrind on PATH; it prints a table and the LangGraph / warpgraph ratio of each
count. Counts are deterministic up to garbage-collection timing, unlike wall time on a
shared machine; a ratio of misses below the ratio of instructions is the cold-cache
penalty of issue 17 ("Cost that survives cold caches").
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import re
import shutil
import subprocess
import sys
from typing import Any

LIBS = ("warpgraph", "langgraph")
CACHE = "524288,8,64"
_COUNTS = {
    "Ir": r"I\s+refs:\s+([\d,]+)",
    "I miss": r"I1\s+misses:\s+([\d,]+)",
    "D miss": r"D1\s+misses:\s+([\d,]+)",
}


def _child(lib_name: str, other_name: str, case: str, saver: str, rounds: int, both: bool) -> None:
    """The measured process: warm both libraries' graphs, then N rounds of the other's
    invoke followed (when `both`) by `lib_name`'s."""
    from differential.libs import get_lib
    from graphs import CASES

    threads = itertools.count()

    def build(name: str) -> tuple[Any, Any, Any, Any]:
        lib = get_lib(name)
        sv = lib.InMemorySaver() if saver == "memory" else None
        graph, inp, expected, _units, _unit = CASES[case](lib, sv)
        return graph, inp, expected, sv

    def run(side: tuple[Any, Any, Any, Any]) -> None:
        graph, inp, expected, sv = side
        config: dict = {"recursion_limit": 5000}
        if sv is not None:
            config["configurable"] = {"thread_id": f"c{next(threads)}"}
        if graph.invoke(inp, config) != expected:
            raise SystemExit(f"{case}: unexpected output")

    mine, other = build(lib_name), build(other_name)
    for _ in range(3):
        run(other)
        run(mine)
    for _ in range(rounds):
        gc.collect()
        run(other)
        if both:
            run(mine)


def _measure(lib: str, other: str, case: str, saver: str, rounds: int, both: bool) -> dict:
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=yes",
        f"--I1={CACHE}",
        f"--D1={CACHE}",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        "-W",
        "ignore",
        __file__,
        "--child",
        lib,
        other,
        case,
        saver,
        str(rounds),
        "1" if both else "0",
    ]
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # (the same dict layouts in both children)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{case}/{lib}: the child failed:\n{out.stderr[-2000:]}")
    counts = {}
    for key, pattern in _COUNTS.items():
        match = re.search(pattern, out.stderr)
        if match is None:
            raise SystemExit(f"{case}/{lib}: no {key} in valgrind's output")
        counts[key] = int(match.group(1).replace(",", ""))
    return counts


def measure(
    case: str, saver: str, rounds: int, libs: tuple[str, ...] = LIBS
) -> dict[str, dict[str, float]]:
    """Per library: its interleaved per-unit counts (both-runs minus other-only)."""
    from differential.libs import get_lib
    from graphs import CASES

    units = CASES[case](get_lib("warpgraph"), None)[3]
    result = {}
    for lib in libs:
        other = LIBS[1 - LIBS.index(lib)]
        both = _measure(lib, other, case, saver, rounds, True)
        base = _measure(lib, other, case, saver, rounds, False)
        result[lib] = {k: (both[k] - base[k]) / rounds / units for k in _COUNTS}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="a case of graphs.CASES (repeatable)")
    parser.add_argument("--saver", choices=("none", "memory"), default="none")
    parser.add_argument("--rounds", type=int, default=4, help="measured rounds per child")
    parser.add_argument("--lib", action="append", choices=LIBS, help="measure only this side")
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        lib, other, case, saver, rounds, both = args.child
        _child(lib, other, case, saver, int(rounds), both == "1")
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_cache_misses: valgrind is not on PATH")
    from graphs import CASES

    cases = args.case or ["chain100", "loop1000", "wide100", "small3"]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        raise SystemExit(f"unknown case(s) {unknown}; known: {sorted(CASES)}")
    print(f"per unit, interleaved, simulated {CACHE.split(',')[0]}-byte caches; saver {args.saver}")
    print(f"{'case':<12}{'count':<8}{'warpgraph':>12}{'langgraph':>12}{'lg / wg':>9}")
    for case in cases:
        counts = measure(case, args.saver, args.rounds, tuple(args.lib or LIBS))
        for key in _COUNTS:
            wg, lg = (counts.get(lib, {}).get(key) for lib in LIBS)
            ratio = f"{lg / wg:8.1f}x" if wg and lg and wg > 0 else "      -"
            cells = "".join(f"{v:>12,.0f}" if v is not None else f"{'-':>12}" for v in (wg, lg))
            print(f"{case:<12}{key:<8}{cells}{ratio}")


if __name__ == "__main__":
    main()
