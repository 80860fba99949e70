"""warpgraph.compat and `python -m warpgraph`: the opt-in langgraph import alias, each case in
a child interpreter (the alias changes the process's import system)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYTHON = sys.executable


def _env() -> dict:
    env = dict(os.environ)
    import warpgraph

    src = str(Path(warpgraph.__file__).parents[1])
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _proc(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, check=False, capture_output=True, text=True, env=env or _env(), timeout=120
    )


def _child(code: str, *args: str) -> subprocess.CompletedProcess:
    return _proc([PYTHON, "-c", textwrap.dedent(code), *args])


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_langgraph_names_are_warpgraph_modules_and_run_a_graph():
    out = _ok(
        _child(
            """
            import warpgraph.compat
            warpgraph.compat.install()
            import operator
            from typing import Annotated, TypedDict
            import langgraph.graph, langgraph.errors, langgraph.types
            import warpgraph.graph, warpgraph.errors, warpgraph.types
            from langgraph.graph import StateGraph, START, END
            from langgraph.checkpoint.memory import InMemorySaver
            assert langgraph.graph is warpgraph.graph
            assert langgraph.errors.GraphRecursionError is warpgraph.errors.GraphRecursionError
            assert langgraph.types.interrupt is warpgraph.types.interrupt
            assert type(InMemorySaver()).__module__.startswith("warpgraph.")

            class S(TypedDict):
                log: Annotated[list, operator.add]

            g = StateGraph(S)
            g.add_node("a", lambda s: {"log": ["a"]})
            g.add_edge(START, "a")
            g.add_edge("a", END)
            app = g.compile(checkpointer=InMemorySaver())
            cfg = {"configurable": {"thread_id": "1"}}
            print(app.invoke({"log": []}, cfg)["log"], type(app).__module__)
            real = [n for n, m in __import__("sys").modules.items()
                    if (n == "langgraph" or n.startswith("langgraph."))
                    and not m.__name__.startswith("warpgraph")]
            print("real", real)
            """
        )
    )
    assert "['a'] warpgraph.graph" in out
    assert "real []" in out


def test_other_distributions_in_the_namespace_load_from_their_files_on_top_of_warpgraph():
    """langgraph-checkpoint-conformance is not part of warpgraph: its module comes from its
    installed files, and what it imports from langgraph is warpgraph's."""
    pytest.importorskip("langgraph.checkpoint.conformance")
    out = _ok(
        _child(
            """
            import sys
            import warpgraph.compat
            warpgraph.compat.install()
            import langgraph.checkpoint.conformance as conf
            import warpgraph.checkpoint.base
            print(conf.__name__, "site-packages" in conf.__file__)
            print(sys.modules["langgraph.checkpoint.base"] is warpgraph.checkpoint.base)
            """
        )
    )
    assert out.split() == ["langgraph.checkpoint.conformance", "True", "True"]


def test_a_core_module_warpgraph_lacks_is_not_mixed_in():
    out = _ok(
        _child(
            """
            import warpgraph.compat
            warpgraph.compat.install()
            try:
                import langgraph.pregel.no_such_module
            except ModuleNotFoundError as e:
                print("MNF", e.name)
            """
        )
    )
    assert "MNF langgraph.pregel.no_such_module" in out


def test_install_refuses_after_the_real_langgraph_was_imported_and_uninstall_restores():
    pytest.importorskip("langgraph.graph")
    out = _ok(
        _child(
            """
            import sys
            import langgraph.constants
            import warpgraph.compat
            try:
                warpgraph.compat.install()
            except RuntimeError as e:
                print("refused", "langgraph.constants" in str(e))
            for n in [n for n in sys.modules if n.startswith("langgraph")]:
                del sys.modules[n]
            warpgraph.compat.install()
            warpgraph.compat.install()  # idempotent
            import langgraph.graph, warpgraph.graph
            print(langgraph.graph is warpgraph.graph, warpgraph.compat.installed())
            warpgraph.compat.uninstall()
            import langgraph.graph
            print(langgraph.graph.__name__, warpgraph.compat.installed())
            """
        )
    )
    assert out.split() == ["refused", "True", "True", "True", "langgraph.graph", "False"]


def test_python_m_warpgraph_run_script_and_module(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys
            import langgraph.graph, warpgraph.graph
            import helper_mod
            print(__name__, sys.argv[1:], langgraph.graph is warpgraph.graph, helper_mod.X)
            """
        )
    )
    (tmp_path / "helper_mod.py").write_text("X = 7\n")
    run = [PYTHON, "-m", "warpgraph", "run"]
    out = _proc([*run, str(script), "a", "--b"])
    assert _ok(out).split() == ["__main__", "['a',", "'--b']", "True", "7"]
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    out = _proc([*run, "-m", "prog", "x"], env)
    assert _ok(out).split() == ["__main__", "['x']", "True", "7"]
    bad = _proc([*run, str(tmp_path / "missing.py")])
    assert bad.returncode == 2 and "no such script" in bad.stderr
    unknown = _proc([PYTHON, "-m", "warpgraph", "frobnicate"])
    assert unknown.returncode == 2 and "unknown command 'frobnicate'" in unknown.stderr


def test_python_m_warpgraph_version():
    import warpgraph

    out = _proc([PYTHON, "-m", "warpgraph", "--version"])
    assert _ok(out).strip() == f"warpgraph {warpgraph.__version__}"


def test_the_distribution_ships_no_top_level_langgraph_package():
    """The installed warpgraph distribution's files (its wheel's RECORD) hold no `langgraph`
    package."""
    from importlib import metadata

    files = metadata.files("warpgraph") or []
    assert files, "warpgraph is not installed as a distribution"
    assert not [f for f in files if f.parts[0] in ("langgraph", "langgraph.py")]
    assert any(f.parts[0] == "warpgraph" for f in files)


def test_a_non_saver_is_refused_under_the_alias_with_langgraphs_error():
    """Under the alias `langgraph.checkpoint.base` is warpgraph's own module: the check
    that also accepts LangGraph's savers must not ask our class about itself (it
    recursed until RecursionError instead of compile's TypeError)."""
    out = _ok(
        _child(
            """
            import warpgraph.compat
            warpgraph.compat.install()
            from typing import TypedDict
            from langgraph.checkpoint.base import BaseCheckpointSaver
            from langgraph.checkpoint.memory import InMemorySaver
            from langgraph.graph import StateGraph

            class S(TypedDict):
                foo: str

            class NotACheckpointer:
                pass

            assert not isinstance(NotACheckpointer(), BaseCheckpointSaver)
            assert not issubclass(NotACheckpointer, BaseCheckpointSaver)
            assert isinstance(InMemorySaver(), BaseCheckpointSaver)
            g = StateGraph(S)
            g.add_node("start", lambda s: s)
            g.set_entry_point("start")
            g.set_finish_point("start")
            try:
                g.compile(checkpointer=NotACheckpointer())
            except TypeError as e:
                print("refused:", e)
            """
        )
    )
    assert "refused: Invalid checkpointer provided" in out
