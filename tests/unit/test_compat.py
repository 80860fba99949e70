"""warpgraph.compat: `import langgraph...` answered by warpgraph in a child interpreter, with
langgraph-prebuilt's agent on top (a fake chat model's tool loop, a checkpointer, an
interrupt and its resume), and `python -m warpgraph run SCRIPT`."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._subproc import child_env, run_python

pytest.importorskip("langchain_core")

AGENT = textwrap.dedent(
    """
    import sys
    import warnings

    warnings.simplefilter("ignore")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolCall
    from langchain_core.tools import tool
    import langgraph.graph
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command, interrupt

    try:
        from langgraph.prebuilt import create_react_agent
    except ImportError:  # no langgraph-prebuilt installed: a hand-made agent loop
        create_react_agent = None


    @tool
    def ask_human(question: str) -> str:
        \"\"\"Ask the human a question.\"\"\"
        return interrupt(question)


    class Model(GenericFakeChatModel):
        def bind_tools(self, tools, **kwargs):
            return self


    model = Model(
        messages=iter(
            [
                AIMessage(
                    "", tool_calls=[ToolCall(name="ask_human", args={"question": "color?"}, id="c1")]
                ),
                AIMessage("you said blue"),
            ]
        )
    )
    if create_react_agent is not None:
        agent = create_react_agent(model, [ask_human], checkpointer=InMemorySaver())
    else:
        from langchain_core.messages import ToolMessage

        def call_model(state):
            return {"messages": [model.invoke(state["messages"])]}

        def tools(state):
            call = state["messages"][-1].tool_calls[0]
            return {"messages": [ToolMessage(ask_human.invoke(call["args"]), tool_call_id=call["id"])]}

        def route(state):
            return "tools" if state["messages"][-1].tool_calls else "__end__"

        b = langgraph.graph.StateGraph(langgraph.graph.MessagesState)
        b.add_node("agent", call_model)
        b.add_node("tools", tools)
        b.add_edge("__start__", "agent")
        b.add_conditional_edges("agent", route, ["tools", "__end__"])
        b.add_edge("tools", "agent")
        agent = b.compile(checkpointer=InMemorySaver())

    config = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [("user", "hi")]}, config)
    print("interrupt", first["__interrupt__"][0].value)
    final = agent.invoke(Command(resume="blue"), config)
    print("final", final["messages"][-1].content, [m.type for m in final["messages"]])
    print("engine", langgraph.graph.__name__, type(agent).__module__.split(".")[0])
    """
)


def _check(out: str) -> None:
    lines = out.strip().splitlines()
    assert lines[-3] == "interrupt color?"
    assert lines[-2] == "final you said blue ['human', 'ai', 'tool', 'ai']"
    assert lines[-1] == "engine warpgraph.graph warpgraph"


def test_install_answers_langgraph_imports_with_warpgraph() -> None:
    proc = run_python("from warpgraph import compat\ncompat.install()\n" + AGENT)
    assert proc.returncode == 0, proc.stderr
    _check(proc.stdout)


def test_module_run_command(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    proc = subprocess.run(
        [sys.executable, "-m", "warpgraph", "run", str(script)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    _check(proc.stdout)


def test_alias_rules() -> None:
    code = textwrap.dedent(
        """
        import sys
        from warpgraph import compat
        compat.install()
        compat.install()  # idempotent
        import langgraph.types, warpgraph.types
        assert langgraph.types is warpgraph.types
        import langgraph.graph.state
        assert sys.modules["langgraph.graph.state"] is sys.modules["warpgraph.graph.state"]
        try:
            import langgraph.no_such_module
        except ImportError:
            pass
        else:
            raise AssertionError("unknown module answered")
        compat.uninstall()
        assert not compat.installed()
        print("ok")
        """
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_install_after_langgraph_was_imported_is_refused() -> None:
    code = textwrap.dedent(
        """
        import importlib.util
        if importlib.util.find_spec("langgraph.graph") is None:
            print("skip")
            raise SystemExit(0)
        import langgraph.graph
        from warpgraph import compat
        try:
            compat.install()
        except RuntimeError as e:
            print("refused" if "before langgraph is imported" in str(e) else e)
        """
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("refused", "skip")


def test_no_top_level_langgraph_package_is_shipped() -> None:
    source = Path(__file__).resolve().parents[2] / "python"
    assert (source / "warpgraph").is_dir()
    assert not (source / "langgraph").exists()
