"""Each workload at a tiny size on memory, SQLite and Postgres, through the command; the
LangGraph comparison and the floor; the JSON report against its schema."""

from __future__ import annotations

import json

import pytest
from warpgraph._cli.bench.schema import JSON_SCHEMA, SCHEMA_VERSION
from warpgraph._cli.bench.workloads import WORKLOADS

from tests.cli.schema_check import validate

TINY = "3"


def _bench(cli, tmp_path, *args):
    path = tmp_path / "report.json"
    code, out, err = cli(
        "bench", "--quiet", "--repeat", "1", "--size", TINY, "--json", str(path), *args
    )
    assert code == 0, err
    report = json.loads(path.read_text())
    validate(report, JSON_SCHEMA)
    return report, out


def _check_workload(report, workload):
    rows = [r for r in report["results"] if r["workload"] == workload]
    assert {r["metric"] for r in rows} == set(WORKLOADS[workload].metrics)
    for r in rows:
        assert r["sides"]["warpgraph"]["median"] > 0
        assert len(r["sides"]["warpgraph"]["runs"]) == 1


@pytest.mark.parametrize("saver", ["memory", "sqlite"])
@pytest.mark.parametrize("workload", list(WORKLOADS))
def test_each_workload(cli, tmp_path, saver, workload):
    report, out = _bench(cli, tmp_path, "--saver", saver, "--workload", workload)
    _check_workload(report, workload)
    assert report["config"]["saver"] == saver
    assert workload in out
    if workload == "storage-growth":
        (entry,) = report["storage"]
        points = entry["series"]["warpgraph"]
        assert len(points) == 10
        assert [p[0] for p in points] == sorted(p[0] for p in points)
        assert points[-1][1] > points[0][1] > 0


def test_every_workload_on_postgres_in_its_own_schema(cli, tmp_path, pg_dsn):
    import psycopg

    public_tables = (
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_name LIKE '%checkpoint%' AND table_schema = 'public' ORDER BY 1"
    )
    with psycopg.connect(pg_dsn) as conn:  # (other tests of the session share the server)
        tables_before = conn.execute(public_tables).fetchall()
    report, _ = _bench(
        cli, tmp_path, "--saver", "postgres", "--dsn", pg_dsn, "--floor", "--durability", "async"
    )
    for workload in WORKLOADS:
        _check_workload(report, workload)
    assert report["machine"]["postgres"]
    floor_rows = [r for r in report["results"] if "floor" in r["sides"]]
    assert len(floor_rows) == len(report["results"])
    with psycopg.connect(pg_dsn) as conn:
        left = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'wg_bench_%'"
        ).fetchall()
        tables = conn.execute(public_tables).fetchall()
    assert left == [] and tables == tables_before


def test_compare_langgraph_on_postgres(cli, tmp_path, pg_dsn):
    report, _ = _bench(
        cli,
        tmp_path,
        "--saver",
        "postgres",
        "--dsn",
        pg_dsn,
        "--compare",
        "langgraph",
        "--workload",
        "saver-ops",
        "--workload",
        "storage-growth",
    )
    for r in report["results"]:
        assert set(r["sides"]) == {"warpgraph", "langgraph"}
    (entry,) = report["storage"]
    assert all(points[-1][1] > 0 for points in entry["series"].values())


def test_compare_langgraph_and_floor_on_sqlite(cli, tmp_path):
    report, out = _bench(
        cli,
        tmp_path,
        "--compare",
        "langgraph",
        "--floor",
        "--repeat",
        "2",
        "--workload",
        "chain",
        "--workload",
        "saver-ops",
        "--workload",
        "storage-growth",
    )
    assert report["config"]["compare"] == "langgraph" and report["config"]["floor"]
    for r in report["results"]:
        assert set(r["sides"]) == {"warpgraph", "langgraph", "floor"}
        for side in r["sides"].values():
            assert len(side["runs"]) == 2
        ratio = r["ratios"]["vs_langgraph"]
        wg, lg = r["sides"]["warpgraph"]["runs"], r["sides"]["langgraph"]["runs"]
        assert ratio["runs"] == pytest.approx([a / b for a, b in zip(wg, lg)])
        assert "vs_floor" in r["ratios"]
    (entry,) = report["storage"]
    assert set(entry["series"]) == {"warpgraph", "langgraph"}
    assert "speedup" in out


def test_json_schema_version_and_rejects_a_bad_report(cli, tmp_path):
    report, _ = _bench(cli, tmp_path, "--saver", "memory", "--workload", "loop")
    assert report["schema"] == "warpgraph-bench" and report["version"] == SCHEMA_VERSION
    broken = dict(report, results=[{"workload": "loop"}])
    with pytest.raises(AssertionError, match="missing"):
        validate(broken, JSON_SCHEMA)


def test_writes_nothing_outside_its_temp_dir(cli_proc, tmp_path):
    work, home, tmp = tmp_path / "cwd", tmp_path / "home", tmp_path / "tmp"
    for d in (work, home, tmp):
        d.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp), "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": ""}
    proc = cli_proc(
        "bench",
        "--workload",
        "chain",
        "--workload",
        "storage-growth",
        "--size",
        TINY,
        "--repeat",
        "1",
        "--quiet",
        "--compare",
        "langgraph",
        "--floor",
        "--json",
        "r.json",
        "--plot",
        "b.png",
        cwd=str(work),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in work.iterdir()) == ["b.png", "r.json"]
    assert list(home.iterdir()) == [] and list(tmp.iterdir()) == []  # temp dirs removed


@pytest.mark.parametrize("durability", ["async", "exit"])
def test_durability_modes(cli, tmp_path, durability):
    report, _ = _bench(
        cli,
        tmp_path,
        "--durability",
        durability,
        "--floor",
        "--workload",
        "chain",
        "--workload",
        "storage-growth",
    )
    assert report["config"]["durability"] == durability
    _check_workload(report, "chain")
    (entry,) = report["storage"]
    counts = [p[0] for p in entry["series"]["warpgraph"]]
    # "exit" stores one checkpoint per invocation, the others one per step as well
    if durability == "exit":
        assert counts == list(range(1, 11))
    else:
        assert counts[-1] > 10 and counts == sorted(counts)
