"""Terminal output with rich on a terminal (tables, progress bars), plain text otherwise."""

from __future__ import annotations

import io
import sys

from warpgraph._cli import report


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rich_table_on_a_terminal_plain_when_piped(monkeypatch):
    rows = [["loop (3)", "steps", "1.2k ±3%"]]
    tty = _Tty()
    monkeypatch.setattr(sys, "stdout", tty)
    report.print_table("title", ["workload", "per second", "warpgraph"], rows)
    assert "┃" in tty.getvalue() and "1.2k ±3%" in tty.getvalue()
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stdout", piped)
    report.print_table("title", ["workload", "per second", "warpgraph"], rows)
    assert piped.getvalue().splitlines() == [
        "title",
        "workload  per second  warpgraph",
        "loop (3)  steps       1.2k ±3%",
    ]


def test_progress_bar_on_a_terminal_lines_when_piped(monkeypatch):
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    with report.progress() as task:
        tick = task("loop (3)", 2)
        tick()
        tick()
    assert "loop (3)" in tty.getvalue() and "2/2" in tty.getvalue()
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    with report.progress() as task:
        tick = task("chain (3)", 2)
        tick()
        tick()
    assert piped.getvalue().splitlines() == ["  chain (3): 1/2", "  chain (3): 2/2"]
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with report.progress(False) as task:
        task("x", 1)()
    assert quiet.getvalue() == ""


def test_number_formats():
    assert [report.fmt_rate(v) for v in (0.5, 950, 1234, 2_500_000)] == [
        "0.5",
        "950",
        "1.23k",
        "2.5M",
    ]
    summary = {"median": 2.0, "min": 1.5, "max": 3.25, "spread": 0.875, "runs": []}
    assert report.fmt_ratio(summary) == "2.00× (1.50–3.25)"
    assert report.fmt_side({"median": 1000.0, "spread": 0.1}) == "1k ±5%"
    assert report.fmt_rate(999.8) == "1k" and report.fmt_rate(999_900) == "1M"
