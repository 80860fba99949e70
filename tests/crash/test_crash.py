"""SIGKILL crash tests on real databases (see harness.py for the graph and the checks).

CI runs at least 50 kills per saver (WARPGRAPH_CRASH_KILLS, split between durability
"sync" and "async"); WARPGRAPH_CRASH_SEED replays a run (the seed is printed)."""

from __future__ import annotations

import os
import random

import pytest

from tests.crash.harness import Harness

KILLS = int(os.environ.get("WARPGRAPH_CRASH_KILLS", "50"))
SEED = int(os.environ.get("WARPGRAPH_CRASH_SEED") or random.randrange(2**32))


def _run(kind: str, target: str, workdir: str, durability: str) -> None:
    seed = SEED + (durability == "async")
    print(f"\ncrash test {kind}/{durability}: WARPGRAPH_CRASH_SEED={SEED} (this run: {seed})")
    report = Harness(kind, target, workdir, durability, seed).run((KILLS + 1) // 2)
    print(f"crash test {kind}/{durability}: {report.line()}")
    assert not report.problems, "\n".join(report.problems[:20])
    assert report.kills >= (KILLS + 1) // 2


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_sqlite(tmp_path, durability: str) -> None:
    _run("sqlite", str(tmp_path / "crash.db"), str(tmp_path), durability)


@pytest.mark.parametrize("durability", ["sync", "async"])
def test_postgres(pg_fresh_dsn: str, tmp_path, durability: str) -> None:
    _run("postgres", pg_fresh_dsn, str(tmp_path), durability)
