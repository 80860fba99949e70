"""Agent loops from libraries built on LangGraph, with a scripted chat model.

Run as a program: `python agents_prog.py CASE` prints one JSON line summarising the run
(messages, interrupts, final state). tests/ecosystem/test_agents.py runs each case on LangGraph
itself and under `python -m warpgraph run` and compares the lines.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool


class ScriptedChat(BaseChatModel):
    """Answers with the next message of its script (tool calls included); ignores tools."""

    script: list
    name_: str = "scripted"

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kw: Any) -> ChatResult:
        turn = sum(1 for m in messages if isinstance(m, AIMessage))
        reply = self.script[min(turn, len(self.script) - 1)]
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(self, tools: Any, **kw: Any) -> ScriptedChat:
        return self


def scripted_agent(name: str, tools: list, *script: AIMessage) -> Any:
    """A prebuilt ReAct agent called `name` whose model answers with `script`."""
    from langgraph.prebuilt import create_react_agent

    return create_react_agent(ScriptedChat(script=list(script)), tools, name=name)


@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def _call(name: str, args: dict, cid: str) -> dict:
    return {"name": name, "args": args, "id": cid, "type": "tool_call"}


def _summary(messages: list) -> list:
    return [
        (
            type(m).__name__,
            m.content if isinstance(m.content, str) else repr(m.content),
            [c["name"] for c in getattr(m, "tool_calls", []) or []],
        )
        for m in messages
    ]


def react() -> dict:
    """langgraph-prebuilt's create_react_agent: a tool call, paused before the tools node,
    resumed, answered."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import create_react_agent

    model = ScriptedChat(
        script=[
            AIMessage("", id="a1", tool_calls=[_call("add", {"a": 2, "b": 3}, "c1")]),
            AIMessage("the sum is 5", id="a2"),
        ]
    )
    agent = create_react_agent(
        model, [add], checkpointer=InMemorySaver(), interrupt_before=["tools"]
    )
    cfg = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("add 2 and 3", id="h1")]}, cfg)
    paused = agent.get_state(cfg)
    final = agent.invoke(None, cfg)
    history = [s.metadata.get("step") for s in agent.get_state_history(cfg)]
    return {
        "first": _summary(first["messages"]),
        "next": list(paused.next),
        "final": _summary(final["messages"]),
        "history": history,
    }


def create_agent_mw() -> dict:
    """langchain's create_agent with a middleware and human-in-the-loop interrupt."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    seen: list = []

    class Count(AgentMiddleware):
        def before_model(self, state: Any, runtime: Any) -> None:
            seen.append(len(state["messages"]))

    model = ScriptedChat(
        script=[
            AIMessage("", id="a1", tool_calls=[_call("add", {"a": 1, "b": 1}, "c1")]),
            AIMessage("two", id="a2"),
        ]
    )
    agent = create_agent(
        model,
        tools=[add],
        middleware=[Count(), HumanInTheLoopMiddleware(interrupt_on={"add": True})],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "t"}}
    first = agent.invoke({"messages": [HumanMessage("1+1?", id="h1")]}, cfg)
    interrupts = [i.value for i in first.get("__interrupt__", [])]
    final = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), cfg)
    return {
        "interrupts": json.loads(json.dumps(interrupts, default=repr)),
        "final": _summary(final["messages"]),
        "before_model": seen,
    }


def supervisor() -> dict:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_supervisor import create_supervisor

    worker = scripted_agent(
        "math",
        [add],
        AIMessage("", id="w1", tool_calls=[_call("add", {"a": 4, "b": 5}, "c1")]),
        AIMessage("9", id="w2"),
    )
    boss = ScriptedChat(
        script=[
            AIMessage("", id="s1", tool_calls=[_call("transfer_to_math", {}, "c0")]),
            AIMessage("math says 9", id="s2"),
        ]
    )
    app = create_supervisor([worker], model=boss).compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [HumanMessage("4+5", id="h1")]}, cfg)
    return {"final": _summary(out["messages"])}


def swarm() -> dict:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_swarm import create_handoff_tool, create_swarm

    alice = scripted_agent(
        "alice",
        [create_handoff_tool(agent_name="bob")],
        AIMessage("", id="x1", tool_calls=[_call("transfer_to_bob", {}, "c0")]),
        AIMessage("done", id="x2"),
    )
    bob = scripted_agent(
        "bob",
        [add],
        AIMessage("", id="b1", tool_calls=[_call("add", {"a": 1, "b": 2}, "c1")]),
        AIMessage("bob: 3", id="b2"),
    )
    app = create_swarm([alice, bob], default_active_agent="alice").compile(
        checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [HumanMessage("1+2", id="h1")]}, cfg)
    again = app.invoke({"messages": [HumanMessage("and again", id="h2")]}, cfg)
    return {
        "final": _summary(out["messages"]),
        "active": out.get("active_agent"),
        "again_active": again.get("active_agent"),
        "again": _summary(again["messages"]),
    }


CASES = {"react": react, "create_agent": create_agent_mw, "supervisor": supervisor, "swarm": swarm}

if __name__ == "__main__":
    result = CASES[sys.argv[1]]()
    import langgraph.graph

    result["engine"] = langgraph.graph.StateGraph.__module__.split(".")[0]
    print(json.dumps(result, default=repr))
