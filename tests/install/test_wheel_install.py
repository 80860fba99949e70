"""The built wheel, not the tree: installed into a clean venv for each supported Python
(3.10-3.13) with its runtime dependencies only, it runs the seed example, an SQLite round
trip on the native writer and `python -m warpgraph --version`.

A missing interpreter or wheel is a skip naming what is missing (a failure under CI=true).
"""

from __future__ import annotations

import json

import pytest

from tests.install.wheel import (
    ROOT,
    VERSIONS,
    Venv,
    find_python,
    find_wheel,
    stale_files,
    wheel_version,
)
from tests.test_examples import assert_quickstart_output

RUNTIME_DEPS = {"warpgraph", "ormsgpack", "typing-extensions"}
INSTALLER = {"pip", "setuptools", "wheel"}

# Writes a thread through SqliteSaver (the native writer when the interpreter's SQLite
# is reachable), then, in a second process, reads it back.
WRITE = r"""
import _sqlite3, json, sys
from typing import Annotated, TypedDict
import operator
from warpgraph.checkpoint.sqlite import SqliteSaver
from warpgraph.checkpoint.sqlite._native import native_library
from warpgraph.graph import END, START, StateGraph

class S(TypedDict):
    n: int
    log: Annotated[list, operator.add]

g = StateGraph(S)
g.add_node("a", lambda s: {"n": s["n"] + 1, "log": ["a"]})
g.add_node("b", lambda s: {"n": s["n"] * 10, "log": ["b"]})
g.add_edge(START, "a")
g.add_edge("a", "b")
g.add_edge("b", END)
config = {"configurable": {"thread_id": "round-trip"}}
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    graph = g.compile(checkpointer=saver)
    first = graph.invoke({"n": 1, "log": []}, config)
    second = graph.invoke({"n": 2, "log": ["again"]}, config, durability="async")
print(json.dumps({"first": first, "second": second, "native": native_library(),
                  "sqlite3_module": getattr(_sqlite3, "__file__", None)}))
"""
READ = r"""
import json, sys
from warpgraph.checkpoint.sqlite import SqliteSaver
config = {"configurable": {"thread_id": "round-trip"}}
with SqliteSaver.from_conn_string(sys.argv[1]) as saver:
    latest = saver.get_tuple(config)
    history = list(saver.list(config))
print(json.dumps({"values": latest.checkpoint["channel_values"], "checkpoints": len(history),
                  "steps": sorted(c.metadata["step"] for c in history)}))
"""
WHERE = r"""
import importlib.util, json, warpgraph, warpgraph._core
print(json.dumps({"package": warpgraph.__file__, "core": warpgraph._core.__file__,
                  "langgraph": importlib.util.find_spec("langgraph") is not None}))
"""


@pytest.fixture(scope="module")
def wheel():
    path, why = find_wheel()
    if path is None:
        pytest.skip(f"no wheel to install: {why}")
    stale = stale_files(path)
    if stale:
        pytest.skip(
            f"{path.name} is older than the tree ({', '.join(stale[:3])}, ...): "
            "rebuild it with `make build`"
        )
    return path


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"py{v}")
def env(request, wheel, tmp_path_factory):
    python = find_python(request.param)
    if python is None:
        pytest.skip(f"no Python {request.param} interpreter (pythonX.Y on PATH or pyenv's)")
    return Venv(python, wheel, tmp_path_factory.mktemp(f"py{request.param}"))


def test_version(env, wheel) -> None:
    assert env.py("-m", "warpgraph", "--version") == f"warpgraph {wheel_version(wheel)}\n"


def test_only_the_runtime_dependencies_are_installed(env) -> None:
    installed = {
        d["name"].lower().replace("_", "-")
        for d in json.loads(env.py("-m", "pip", "list", "--format=json"))
    }
    version = env.py("-c", "import sys; print(sys.version_info[:2] >= (3, 13))").strip()
    want = RUNTIME_DEPS - ({"typing-extensions"} if version == "True" else set())
    assert installed - INSTALLER == want


def test_the_package_comes_from_the_venv(env) -> None:
    where = json.loads(env.py("-c", WHERE))
    venv = str(env.dir)
    assert where["package"].startswith(venv) and "site-packages" in where["package"]
    assert where["core"].startswith(venv) and where["core"].endswith("_core.abi3.so")
    assert where["langgraph"] is False


def test_seed_example(env) -> None:
    db = env.cwd / "quickstart.sqlite"
    out = env.py(str(ROOT / "examples" / "quickstart.py"), str(db)).splitlines()
    assert_quickstart_output(out)


def test_sqlite_round_trip_on_the_native_writer(env) -> None:
    db = str(env.cwd / "round-trip.sqlite")
    wrote = json.loads(env.py("-c", WRITE, db))
    assert wrote["first"] == {"n": 20, "log": ["a", "b"]}
    assert wrote["second"] == {"n": 30, "log": ["a", "b", "again", "a", "b"]}
    # the native writer found the very SQLite the interpreter's sqlite3 module loaded
    assert wrote["native"] == [wrote["sqlite3_module"]]
    read = json.loads(env.py("-c", READ, db))
    assert read["values"] == {"n": 30, "log": ["a", "b", "again", "a", "b"]}
    assert read["steps"] == [-1, 0, 1, 2, 3, 4, 5, 6]  # the second run continues the thread
    assert read["checkpoints"] == 8
