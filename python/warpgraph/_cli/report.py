"""Terminal output: tables and progress with `rich` (the `warpgraph[bench]` extra) when it
is installed, plain text otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

EXTRA_HINT = "install 'warpgraph[bench]' for progress bars and formatted tables (rich)"


def have_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def fmt_rate(value: float | None) -> str:
    if value is None:
        return "—"
    for scale, suffix in ((1e6, "M"), (1e3, "k")):
        if value >= scale * 0.9995:  # 999.7 is "1k", not "1e+03"
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def fmt_ratio(summary: dict[str, Any] | None) -> str:
    if not summary or summary.get("median") is None:
        return "—"
    return f"{summary['median']:.2f}× ({summary['min']:.2f}–{summary['max']:.2f})"


def fmt_side(summary: dict[str, Any] | None) -> str:
    if not summary or summary.get("median") is None:
        return "—"
    spread = summary.get("spread")
    return fmt_rate(summary["median"]) + (f" ±{spread * 50:.0f}%" if spread is not None else "")


def print_table(
    title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], out: Any = None
) -> None:
    out = out or sys.stdout
    if have_rich() and out is sys.stdout and out.isatty():  # piped: plain, nothing cut
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for i, h in enumerate(headers):
            table.add_column(h, justify="left" if i < 2 else "right")
        for row in rows:
            table.add_row(*row)
        Console().print(table)
        return
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]
    out.write(f"{title}\n")
    out.write("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip() + "\n")
    for row in rows:
        out.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")


def bench_rows(results: list[dict[str, Any]], compare: bool, floor: bool) -> tuple[list, list]:
    headers = ["workload (size)", "per second", "warpgraph"]
    if compare:
        headers += ["langgraph", "speedup"]
    if floor:
        headers += ["floor", "time vs floor"]
    rows = []
    for r in results:
        row = [f"{r['workload']} ({r['size']})", r["metric"], fmt_side(r["sides"].get("warpgraph"))]
        if compare:
            row += [
                fmt_side(r["sides"].get("langgraph")),
                fmt_ratio(r["ratios"].get("vs_langgraph")),
            ]
        if floor:
            row += [fmt_side(r["sides"].get("floor")), fmt_ratio(r["ratios"].get("vs_floor"))]
        rows.append(row)
    return headers, rows


@contextmanager
def progress(enabled: bool = True) -> Iterator[Callable[[str, int], Callable[[], None]]]:
    """`task(description, total)` returns a `tick()` advancing that workload's bar."""
    if enabled and have_rich() and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        with Progress(
            "{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=False,
            console=Console(stderr=True),  # stdout keeps only the report
        ) as bar:

            def task(description: str, total: int) -> Callable[[], None]:
                tid = bar.add_task(description, total=total)
                return lambda: bar.advance(tid)

            yield task
        return

    def plain(description: str, total: int) -> Callable[[], None]:
        done = [0]

        def tick() -> None:
            done[0] += 1
            if enabled:
                sys.stderr.write(f"  {description}: {done[0]}/{total}\n")
                sys.stderr.flush()

        return tick

    yield plain
