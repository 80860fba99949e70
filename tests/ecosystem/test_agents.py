"""Libraries built on LangGraph (langgraph-prebuilt, langchain's create_agent,
langgraph-supervisor, langgraph-swarm) run unchanged on warpgraph through
`python -m warpgraph run`: each agent loop of agents_prog.py (a scripted chat model, a
checkpointer, interrupts and resumes) gives the same summary as on LangGraph itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROG = Path(__file__).with_name("agents_prog.py")
CASES = ("react", "create_agent", "supervisor", "swarm")
NEEDS = {
    "react": "langgraph.prebuilt",
    "create_agent": "langchain.agents",
    "supervisor": "langgraph_supervisor",
    "swarm": "langgraph_swarm",
}


def _env() -> dict:
    import warpgraph

    env = dict(os.environ)
    src = str(Path(warpgraph.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def _run(argv: list[str]) -> dict:
    proc = subprocess.run(
        argv, check=False, capture_output=True, text=True, env=_env(), timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES)
def test_agent_loop_matches_langgraph(case):
    pytest.importorskip(NEEDS[case])
    ref = _run([sys.executable, str(PROG), case])
    got = _run([sys.executable, "-m", "warpgraph", "run", str(PROG), case])
    assert (ref.pop("engine"), got.pop("engine")) == ("langgraph", "warpgraph")
    assert got == ref
