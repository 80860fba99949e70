"""Markdown table of benchmark medians and warpgraph speedups for the README.

Usage:
  python benches/report.py                 # runs the benches (timed) and prints the table
  python benches/report.py results.json    # reads an existing --benchmark-json file
Speedup = reference (langgraph) median / warpgraph median, per case and saver.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graphs import CASES, TARGETS


def run_benches(out: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(Path(__file__).parent / "test_bench_graphs.py"),
        "-q",
        "--benchmark-enable",
        f"--benchmark-json={out}",
    ]
    subprocess.run(cmd, check=True)


def _fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def table(data: dict) -> str:
    rows: dict[tuple[str, str], dict] = {}
    for b in data["benchmarks"]:
        info = b.get("extra_info", {})
        key = (info["case"], info["saver"])
        rows.setdefault(key, {"units": info["units"], "unit": info["unit_name"]})
        rows[key][info["lib"]] = b["stats"]["median"]
    lines = [
        "| case | checkpointer | langgraph | warpgraph | per unit (lg → wg) | speedup | target |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    order = {c: i for i, c in enumerate(CASES)}
    for (case, saver), r in sorted(
        rows.items(), key=lambda kv: (order[kv[0][0]], kv[0][1] != "none")
    ):
        ref, wg = r.get("langgraph"), r.get("warpgraph")
        per = (
            f"{_fmt_time(ref / r['units'])} → {_fmt_time(wg / r['units'])} per {r['unit']}"
            if ref and wg
            else ""
        )
        speed = f"{ref / wg:.1f}×" if ref and wg else "n/a"
        target = TARGETS.get((case, saver))
        lines.append(
            f"| {case} | {'InMemorySaver' if saver == 'memory' else 'none'} | "
            f"{_fmt_time(ref) if ref else 'n/a'} | {_fmt_time(wg) if wg else 'n/a'} | {per} | "
            f"{speed} | {f'≥{target}×' if target else '—'} |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        path = Path(argv[1])
        if not path.is_file():
            print(f"report.py: no such benchmark JSON file: {path}", file=sys.stderr)
            return 2
        data = json.loads(path.read_text())
    else:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "bench.json"
            run_benches(out)
            data = json.loads(out.read_text())
    print(table(data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
