"""`warpgraph bench` argument handling: every bad input is one line and exit code 2."""

from __future__ import annotations

import os

import pytest


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("warpgraph bench: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--workload", "nope"], ["--workload", "nope", "saver-ops"]),
        (["--saver", "redis"], ["--saver", "redis", "sqlite"]),
        (["--size", "0"], ["--size must be at least 1"]),
        (["--repeat", "0"], ["--repeat must be at least 1"]),
        (["--size", "many"], ["--size", "many"]),
        (["--dsn", "postgresql://x/y"], ["--dsn is for --saver postgres"]),
        (["--saver", "memory", "--floor"], ["--floor needs a database"]),
        (["--plot", "out.svg"], [".png or .html"]),
        (["--compare", "other"], ["--compare", "other"]),
        (["--bogus"], ["unrecognized arguments: --bogus"]),
    ],
)
def test_bad_arguments(cli, args, needles):
    code, out, err = cli("bench", *args)
    _one_line_error(code, err, *needles)
    assert out == ""


def test_postgres_needs_a_dsn(cli, monkeypatch):
    monkeypatch.delenv("WARPGRAPH_PG_DSN", raising=False)
    code, _, err = cli("bench", "--saver", "postgres")
    _one_line_error(code, err, "--dsn", "WARPGRAPH_PG_DSN")


def test_unreachable_dsn(cli):
    code, _, err = cli("bench", "--saver", "postgres", "--dsn", "postgresql://127.0.0.1:1/none")
    _one_line_error(code, err, "cannot connect to Postgres")


def test_unreachable_dsn_from_the_environment(cli, monkeypatch):
    monkeypatch.setenv("WARPGRAPH_PG_DSN", "postgresql://127.0.0.1:1/none")
    code, _, err = cli("bench", "--saver", "postgres")
    _one_line_error(code, err, "cannot connect to Postgres")


@pytest.mark.parametrize("option", ["--json", "--plot"])
def test_unwritable_output_paths(cli, tmp_path, option):
    name = "r.json" if option == "--json" else "r.html"
    code, _, err = cli("bench", option, str(tmp_path / "missing-dir" / name))
    _one_line_error(code, err, "cannot write", "no such directory")
    code, _, err = cli("bench", option, str(tmp_path))
    _one_line_error(code, err, "cannot write", "is a directory")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        code, _, err = cli("bench", option, str(locked / name))
        _one_line_error(code, err, "not writable")


def test_png_plot_without_matplotlib(cli_proc, tmp_path):
    proc = cli_proc("bench", "--plot", str(tmp_path / "b.png"), hide=("matplotlib",))
    _one_line_error(proc.returncode, proc.stderr, "matplotlib", "warpgraph[bench]")
    assert not (tmp_path / "b.png").exists()


def test_compare_without_langgraph(cli_proc):
    proc = cli_proc("bench", "--compare", "langgraph", hide=("langgraph",))
    _one_line_error(proc.returncode, proc.stderr, "LangGraph", "pip install langgraph")


def test_without_rich_it_runs_plain_and_names_the_extra(cli_proc, tmp_path):
    proc = cli_proc(
        "bench",
        "--saver",
        "memory",
        "--workload",
        "loop",
        "--size",
        "3",
        "--repeat",
        "1",
        hide=("rich",),
    )
    assert proc.returncode == 0, proc.stderr
    assert "warpgraph[bench]" in proc.stderr
    assert "loop (3)" in proc.stdout and "┃" not in proc.stdout


def test_help(cli):
    with pytest.raises(SystemExit) as exc:
        cli("bench", "--help")
    assert exc.value.code == 0


def test_unknown_command(cli):
    code, _, err = cli("benchmark")
    assert code == 2 and "unknown command 'benchmark'" in err
