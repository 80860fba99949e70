"""LangGraph's free-standing helpers over warpgraph's engine, and small private names."""

import functools
import operator
from typing import Annotated, TypedDict

import pytest
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import START, StateGraph
from warpgraph.pregel._algo import prepare_next_tasks, task_path_str
from warpgraph.pregel._checkpoint import channels_from_checkpoint, empty_checkpoint


class S(TypedDict):
    n: int
    items: Annotated[list, operator.add]


def _paused() -> tuple:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"n": s["n"] + 1, "items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    app = g.compile(checkpointer=InMemorySaver())
    c = {"configurable": {"thread_id": "t"}}
    app.invoke({"n": 1, "items": []}, c, interrupt_before=["a", "b"])
    return app, c, app.checkpointer.get_tuple(c)


def test_empty_checkpoint_prepares_nothing() -> None:
    cp = empty_checkpoint()
    assert cp["channel_values"] == {} and cp["v"] == 4
    channels, managed = channels_from_checkpoint({}, cp)
    assert (channels, managed) == ({}, {})
    assert prepare_next_tasks(cp, [], {}, channels, managed, {}, 0, -1, for_execution=False) == {}
    assert prepare_next_tasks(cp, [], {}, channels, managed, {}, 0, -1, for_execution=True) == {}


def test_prepared_tasks_match_the_snapshot() -> None:
    app, c, saved = _paused()
    channels, _ = channels_from_checkpoint(app.channels, saved.checkpoint)
    assert channels["n"].get() == 1
    step = saved.metadata["step"] + 1

    def prepared(for_execution: bool) -> dict:
        return prepare_next_tasks(
            saved.checkpoint, saved.pending_writes, app.nodes, channels, {}, c, step, 10,
            for_execution=for_execution,
        )  # fmt: skip

    tasks = prepared(for_execution=False)
    snap = app.get_state(c)
    assert [(t.id, t.name, t.path) for t in tasks.values()] == [
        (t.id, t.name, t.path) for t in snap.tasks
    ]
    runnable = prepared(for_execution=True)
    a = next(t for t in runnable.values() if t.name == "a")
    assert a.input == {"n": 1, "items": []}
    a.proc.invoke(a.input, a.config)
    assert list(a.writes) == [("n", 2), ("items", ["a"])]
    assert a.config["metadata"]["langgraph_node"] == "a"


def test_task_path_str() -> None:
    assert task_path_str(("__pregel_push", 2)) == "~__pregel_push, 0000000002"


def test_partial_reducer_is_not_compared_with_itself() -> None:
    """A reducer without `__name__` (a partial) builds; only a clash compares reducers."""

    def merge(a: list, b: list, *, tag: str) -> list:
        return a + [f"{tag}:{x}" for x in b]

    class P(TypedDict):
        items: Annotated[list, functools.partial(merge, tag="t")]

    g = StateGraph(P)
    g.add_node("a", lambda s: {"items": ["x"]})
    g.add_edge(START, "a")
    assert g.compile().invoke({"items": []}) == {"items": ["t:x"]}


def test_push_message_writes_the_state_key() -> None:
    from langchain_core.messages import AIMessage
    from warpgraph.graph.message import MessagesState, push_message

    def chat(s: dict) -> None:
        with pytest.raises(ValueError, match="Message ID is required"):
            push_message(AIMessage("no id"))
        push_message(AIMessage("one", id="1"))
        push_message({"role": "user", "content": "two", "id": "2"})
        push_message(AIMessage("skipped", id="3"), state_key=None)

    g = StateGraph(MessagesState)
    g.add_node(chat)
    g.add_edge(START, "chat")
    out = g.compile().invoke({"messages": []})
    assert [(m.id, m.content) for m in out["messages"]] == [("1", "one"), ("2", "two")]


def test_field_defaults_and_optional_types() -> None:
    from dataclasses import dataclass, field
    from typing import Optional, TypeVar, Union

    from typing_extensions import NotRequired, Required
    from warpgraph._internal._fields import (
        _is_optional_type,
        get_enhanced_type_hints,
        get_field_default,
    )

    assert _is_optional_type(None) and not _is_optional_type(type(None))
    assert _is_optional_type(Optional[list[int]])  # noqa: UP045
    assert _is_optional_type(Union[str, None, int])  # noqa: UP007
    assert not _is_optional_type(list[int | None]) and not _is_optional_type(int)
    assert _is_optional_type(TypeVar("U", bound=int | None))

    class T(TypedDict):
        a: Required[str | None]
        b: NotRequired[str]
        c: str | None
        d: str

    class Loose(T, total=False):
        e: int
        f: Required[int]

    ann = Loose.__annotations__
    got = {k: get_field_default(k, ann[k], Loose) for k in "abcdef"}
    assert got == {"a": ..., "b": None, "c": None, "d": ..., "e": None, "f": ...}

    @dataclass
    class D:
        x: int
        y: int = 3
        z: list = field(default_factory=list)

    assert [get_field_default(k, int, D) for k in "xyz"] == [..., 3, []]
    assert list(get_enhanced_type_hints(D)) == [
        ("x", int, None, None),
        ("y", int, 3, None),
        ("z", list, None, None),
    ]


def test_ensure_config_inherits_langchain_ambient_config() -> None:
    from langchain_core.runnables.config import var_child_runnable_config
    from warpgraph.config import ensure_config

    token = var_child_runnable_config.set(
        {"configurable": {"thread_id": "parent", "checkpoint_ns": "p:task"}}
    )
    try:
        kept = ensure_config({"configurable": {"ls_agent_type": "sub"}})
        own = ensure_config({"configurable": {"thread_id": "child"}})
    finally:
        var_child_runnable_config.reset(token)
    assert kept["configurable"] == {
        "thread_id": "parent",
        "checkpoint_ns": "p:task",
        "ls_agent_type": "sub",
    }
    assert own["configurable"] == {"thread_id": "child"}
