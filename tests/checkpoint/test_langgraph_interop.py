"""A LangGraph graph runs on warpgraph's InMemorySaver (through `as_langgraph_saver`) exactly
as on LangGraph's own InMemorySaver: same results, state, history and interrupts."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest

pytest.importorskip("langgraph.graph")
from langgraph.checkpoint.base import BaseCheckpointSaver as LGBase
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, Send, interrupt
from typing_extensions import TypedDict
from warpgraph.checkpoint.base import as_langgraph_saver
from warpgraph.checkpoint.memory import InMemorySaver


class State(TypedDict):
    items: Annotated[list, operator.add]
    answer: str


def build():
    def fan_out(state: State) -> list[Send]:
        return [Send("work", {"items": [i], "answer": ""}) for i in range(3)]

    def work(state: State) -> dict[str, Any]:
        return {"items": [state["items"][0] * 10]}

    def ask(state: State) -> dict[str, Any]:
        return {"answer": interrupt({"question": "ok?", "n": len(state["items"])})}

    g = StateGraph(State)
    g.add_node("start", lambda s: {"items": ["s"]})
    g.add_node("work", work)
    g.add_node("ask", ask)
    g.add_edge(START, "start")
    g.add_conditional_edges("start", fan_out, ["work"])
    g.add_edge("work", "ask")
    g.add_edge("ask", END)
    return g


def _normalize_history(graph: Any, config: dict) -> list:
    out = []
    for snap in graph.get_state_history(config):
        out.append(
            (
                snap.values,
                snap.next,
                snap.metadata.get("source"),
                snap.metadata.get("step"),
                [(t.name, t.interrupts and [i.value for i in t.interrupts]) for t in snap.tasks],
            )
        )
    return out


def _strip_ids(value: Any) -> Any:
    """Interrupt ids hash the (random) checkpoint ids: compare values only."""
    if isinstance(value, dict):
        return {k: _strip_ids(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strip_ids(v) for v in value]
    if type(value).__name__ == "Interrupt":
        return ("Interrupt", _strip_ids(value.value))
    return value


def _run(saver: Any) -> tuple:
    graph = build().compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "t1"}}
    first = graph.invoke({"items": []}, config)
    state = graph.get_state(config)
    final = graph.invoke(Command(resume="yes"), config)
    history = _normalize_history(graph, config)
    return _strip_ids((first, state.next, [i.value for i in state.interrupts], final, history))


def test_langgraph_requires_its_base_class() -> None:
    with pytest.raises(TypeError, match="Invalid checkpointer"):
        build().compile(checkpointer=InMemorySaver())
    adapter = as_langgraph_saver(InMemorySaver())
    assert isinstance(adapter, LGBase)


def test_langgraph_graph_on_warpgraph_saver_matches_reference() -> None:
    ours = InMemorySaver()
    got = _run(as_langgraph_saver(ours))
    expected = _run(RefSaver())
    assert got == expected
    # the data really lives in the warpgraph saver
    assert (
        ours.get_tuple({"configurable": {"thread_id": "t1"}}).checkpoint["channel_values"]["answer"]
        == "yes"
    )


async def test_langgraph_graph_async_on_warpgraph_saver() -> None:
    graph = build().compile(checkpointer=as_langgraph_saver(InMemorySaver()))
    ref = build().compile(checkpointer=RefSaver())
    config = {"configurable": {"thread_id": "a"}}
    for g in (graph, ref):
        await g.ainvoke({"items": []}, config)
    assert (await graph.aget_state(config)).values == (await ref.aget_state(config)).values
    got = await graph.ainvoke(Command(resume="r"), config)
    assert got == await ref.ainvoke(Command(resume="r"), config)


def test_pending_sends_decode_to_langgraph_types_through_adapter() -> None:
    ours = InMemorySaver()
    adapter = as_langgraph_saver(ours)
    config = {"configurable": {"thread_id": "x", "checkpoint_ns": ""}}
    cp = {
        "v": 4,
        "id": "1",
        "ts": "",
        "channel_values": {"s": Send("n", 1)},
        "channel_versions": {"s": 1},
        "versions_seen": {},
        "updated_channels": None,
    }
    adapter.put(config, cp, {}, {"s": 1})
    assert type(adapter.get_tuple(config).checkpoint["channel_values"]["s"]) is Send
    import warpgraph.types as wt

    assert type(ours.get_tuple(config).checkpoint["channel_values"]["s"]) is wt.Send


@pytest.mark.parametrize("aio", [False, True])
async def test_update_state_sends_langgraphs_types_to_its_saver(aio: bool) -> None:
    """warpgraph's update_state on LangGraph's saver stores LangGraph's Send (as its runs do),
    so LangGraph's own engine then runs the pushed task from the thread."""
    import warpgraph.graph as wg
    from warpgraph.types import Command as WCommand
    from warpgraph.types import Send as WSend

    def builder(lib_graph: Any) -> Any:
        g = lib_graph.StateGraph(State)
        g.add_node("start", lambda s: {"items": ["s"]}, destinations=("work",))
        g.add_node("work", lambda s: {"items": [s["items"][0] * 10]})
        g.add_edge(lib_graph.START, "start")
        return g

    import langgraph.graph as lg

    saver = RefSaver()
    config = {"configurable": {"thread_id": "u"}}
    ours = builder(wg).compile(checkpointer=saver, interrupt_before=["work"])
    update = WCommand(goto=WSend("work", {"items": [4], "answer": ""}))
    if aio:
        await ours.ainvoke({"items": []}, config)
        await ours.aupdate_state(config, update, "start")
    else:
        ours.invoke({"items": []}, config)
        ours.update_state(config, update, "start")
    stored = saver.get_tuple(config).checkpoint["channel_values"]["__pregel_tasks"]
    assert [type(s) for s in stored] == [Send]
    theirs = builder(lg).compile(checkpointer=saver)
    assert theirs.get_state(config).next == ("work",)
    assert theirs.invoke(None, config) == {"items": ["s", 40]}
