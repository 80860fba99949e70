"""Loop mechanics, run on langgraph and warpgraph and compared (ids/timestamps normalised):
outputs, stream chunks per mode, checkpoint sequences, resume, interrupts, durability,
recursion, errors, subgraphs."""

from __future__ import annotations

import asyncio
import operator
import re
import time
from typing import Annotated

import pytest

pytest.importorskip("langgraph")

from _pregel_diff import history, run_both

MODES = ["values", "updates", "debug", "tasks", "checkpoints", ["values", "updates", "custom"]]


def chain(L, saver=True, **kw):
    n1 = L.NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b", log=lambda v: [v])
    n2 = L.NodeBuilder().subscribe_only("b").do(lambda x: x + "!").write_to("c")
    return L.Pregel(
        nodes={"n1": n1, "n2": n2},
        channels={
            "a": L.EphemeralValue(str),
            "b": L.EphemeralValue(str),
            "c": L.LastValue(str),
            "log": L.BinaryOperatorAggregate(list, operator.add),
        },
        input_channels=["a"],
        output_channels=["b", "c", "log"],
        checkpointer=L.InMemorySaver() if saver else None,
        **kw,
    )


def loop_graph(L, saver=False):
    """One node re-triggering itself until the counter reaches 5."""

    def step(x):
        return x + 1

    inc = (
        L.NodeBuilder()
        .subscribe_only("n")
        .do(step)
        .write_to(
            L.ChannelWriteEntry("n", mapper=lambda v: v if v < 5 else None, skip_none=True), "total"
        )
    )
    return L.Pregel(
        nodes={"inc": inc},
        channels={"n": L.EphemeralValue(int), "total": L.LastValue(int)},
        input_channels="n",
        output_channels="total",
        checkpointer=L.InMemorySaver() if saver else None,
    )


CFG = {"configurable": {"thread_id": "t1"}}


def _saver(g):
    return g.checkpointer


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_chain_stream_modes_and_checkpoints(mode) -> None:
    def scenario(L, g):
        first = list(g.stream({"a": "x"}, CFG, stream_mode=mode))
        second = list(g.stream({"a": "y"}, CFG, stream_mode=mode))
        return first, second, history(_saver(g))

    lg, wg = run_both(chain, scenario)
    assert lg == wg


@pytest.mark.parametrize("saver", [False, True])
def test_invoke_and_state(saver) -> None:
    def scenario(L, g):
        out = [g.invoke({"a": "x"}, CFG), g.invoke({"a": "y"}, CFG)]
        if saver:
            st = g.get_state(CFG)
            out.append((st.values, st.next, st.metadata, st.config, st.parent_config, st.tasks))
            out.append([(s.values, s.next, s.metadata, s.tasks) for s in g.get_state_history(CFG)])
        return out

    lg, wg = run_both(lambda L: chain(L, saver=saver), scenario)
    assert lg == wg


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_durability_checkpoint_sequences(durability) -> None:
    def scenario(L, g):
        out = list(g.stream({"a": "x"}, CFG, stream_mode="updates", durability=durability))
        return out, history(_saver(g))

    lg, wg = run_both(chain, scenario)
    assert lg == wg


@pytest.mark.parametrize("where", ["compile_before", "compile_after", "call_before", "call_after"])
def test_interrupt_before_after_and_resume(where) -> None:
    kind, side = where.split("_")

    def build(L):
        kw = {f"interrupt_{side}_nodes": ["n2"]} if kind == "compile" else {}
        return chain(L, **kw)

    def scenario(L, g):
        kw = {f"interrupt_{side}": ["n2"]} if kind == "call" else {}
        a = list(g.stream({"a": "x"}, CFG, stream_mode=["values", "updates"], **kw))
        st = g.get_state(CFG)
        b = g.invoke(None, CFG, **kw)
        return a, (st.values, st.next), b, history(_saver(g))

    lg, wg = run_both(build, scenario)
    assert lg == wg


def interrupting(L):
    def ask(x):
        answer = L.interrupt(f"question about {x}")
        return f"{x}:{answer}"

    n1 = L.NodeBuilder().subscribe_only("a").do(ask).write_to("b")
    return L.Pregel(
        nodes={"n1": n1},
        channels={"a": L.LastValue(str), "b": L.LastValue(str)},
        input_channels=["a"],
        output_channels=["a", "b"],
        checkpointer=L.InMemorySaver(),
    )


@pytest.mark.parametrize("mode", ["values", "updates", ["values", "updates"], "debug"], ids=str)
def test_interrupt_and_command_resume(mode) -> None:
    def scenario(L, g):
        a = list(g.stream({"a": "x"}, CFG, stream_mode=mode))
        st = g.get_state(CFG)
        b = list(g.stream(L.Command(resume="yes"), CFG, stream_mode=mode))
        return a, (st.values, st.next, st.tasks, st.interrupts), b, history(_saver(g))

    lg, wg = run_both(interrupting, scenario)
    assert lg == wg


def test_interrupt_invoke_returns_interrupt_key() -> None:
    def scenario(L, g):
        return g.invoke({"a": "x"}, CFG), g.invoke(L.Command(resume="ok"), CFG)

    lg, wg = run_both(interrupting, scenario)
    assert lg == wg


def test_resume_without_checkpointer_and_missing_thread_errors() -> None:
    def scenario(L, g):
        out = []
        for call in (
            lambda: g.invoke(L.Command(resume=1)),
            lambda: chain(L).invoke({"a": "x"}),
            lambda: chain(L).invoke({"a": "x"}, {"configurable": {}}),
        ):
            try:
                out.append(call())
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        return out

    lg, wg = run_both(lambda L: chain(L, saver=False), scenario)
    assert lg == wg


@pytest.mark.parametrize("limit", [1, 3, 4, 10])
def test_recursion_limit(limit) -> None:
    def scenario(L, g):
        chunks = []
        try:
            for c in g.stream(0, {"recursion_limit": limit}, stream_mode="updates"):
                chunks.append(c)  # noqa: PERF402 - keep chunks seen before the error
        except L.errors.GraphRecursionError as e:
            chunks.append(("GraphRecursionError", str(e)))
        return chunks

    lg, wg = run_both(loop_graph, scenario)
    assert lg == wg


def fanout(L, fail_on=None):
    """A dispatcher sends one task per item; workers append to a list; one may fail once."""
    from importlib import import_module

    W = import_module(("langgraph" if L.name == "lg" else "warpgraph") + ".pregel._write")
    calls = []

    def dispatch(items):
        return [L.Send("work", i) for i in items]

    def work(i):
        calls.append(i)
        if i == fail_on and calls.count(i) == 1:
            time.sleep(0.05)  # let the other tasks of the step start (scheduling aid only)
            raise ValueError(f"boom {i}")
        return [i * 10]

    d = L.NodeBuilder().subscribe_only("items").do(dispatch).build()
    d = d.copy(
        {
            "writers": [
                W.ChannelWrite(
                    [
                        W.ChannelWriteTupleEntry(
                            mapper=lambda sends: [("__pregel_tasks", s) for s in sends]
                        )
                    ]
                )
            ]
        }
    )
    g = L.Pregel(
        nodes={
            "dispatch": d,
            "work": L.NodeBuilder()
            .subscribe_to("never", read=False)
            .do(work)
            .write_to("out")
            .build(),
        },
        channels={
            "items": L.LastValue(list),
            "never": L.EphemeralValue(object),
            "out": L.BinaryOperatorAggregate(list, operator.add),
        },
        input_channels="items",
        output_channels=["out"],
        checkpointer=L.InMemorySaver(),
    )
    g.calls = calls
    return g


def test_fanout_sends() -> None:
    def scenario(L, g):
        chunks = list(g.stream([1, 2, 3], CFG, stream_mode=["updates", "values"]))
        # parallel tasks finish in any order: compare their update chunks as a multiset
        return sorted(map(repr, chunks)), chunks[-1], history(_saver(g))

    lg, wg = run_both(fanout, scenario)
    assert lg == wg


def test_error_saves_successful_writes_and_resume_reruns_only_failed() -> None:
    def scenario(L, g):
        try:
            g.invoke([2, 1, 3], CFG)
        except ValueError as e:
            err = str(e).split("\n")[0]
        hist = history(_saver(g))
        out = g.invoke(None, CFG)
        return err, hist, out, sorted(g.calls)

    lg, wg = run_both(lambda L: fanout(L, fail_on=2), scenario)
    assert lg == wg


def nested(L):
    inner = L.Pregel(
        nodes={
            "inner": L.NodeBuilder()
            .subscribe_only("x")
            .do(lambda v: v + "-inner")
            .write_to("y")
            .build()
        },
        channels={"x": L.LastValue(str), "y": L.LastValue(str)},
        input_channels="x",
        output_channels="y",
    )
    outer_node = L.NodeBuilder().subscribe_only("a").do(inner).write_to("b").build()
    return L.Pregel(
        nodes={"sub": outer_node},
        channels={"a": L.LastValue(str), "b": L.LastValue(str)},
        input_channels="a",
        output_channels=["a", "b"],
        checkpointer=L.InMemorySaver(),
    )


@pytest.mark.parametrize("subgraphs", [False, True])
def test_subgraph_streams_and_checkpoints(subgraphs) -> None:
    def scenario(L, g):
        chunks = list(g.stream("hi", CFG, stream_mode=["values", "updates"], subgraphs=subgraphs))
        saver = _saver(g)
        nss = sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)})
        return chunks, history(saver), [history(saver, ns=n) for n in nss]

    lg, wg = run_both(nested, scenario)
    assert lg == wg


def test_async_matches_sync_langgraph() -> None:
    def scenario(L, g):
        async def go():
            a = [c async for c in g.astream({"a": "x"}, CFG, stream_mode=["values", "updates"])]
            b = await g.ainvoke({"a": "y"}, CFG)
            return a, b, history(_saver(g))

        return asyncio.run(go())

    lg, wg = run_both(chain, scenario)
    assert lg == wg


def test_seed_example_stategraph() -> None:
    from _pregel_diff import lib

    if lib("wg").StateGraph is None:
        pytest.skip("warpgraph.graph.StateGraph not available yet")
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int

    def build(L):
        b = L.StateGraph(S)
        b.add_node("a", lambda s: {"n": s["n"] + 1})
        b.add_node("b", lambda s: {"n": s["n"] * 10})
        b.add_edge(L.START, "a")
        b.add_edge("a", "b")
        b.add_edge("b", L.END)
        return b.compile(checkpointer=L.InMemorySaver())

    def scenario(L, g):
        ups = list(g.stream({"n": 1}, CFG, stream_mode="updates"))
        hist = [
            (s.metadata["step"], s.metadata["source"], s.next) for s in g.get_state_history(CFG)
        ]
        again = g.invoke({"n": 2}, CFG)
        return ups, hist, again, history(_saver(g))

    lg, wg = run_both(build, scenario)
    assert lg == wg
    assert wg[0] == [{"a": {"n": 2}}, {"b": {"n": 20}}]
    assert wg[1] == [
        (2, "loop", ()),
        (1, "loop", ("b",)),
        (0, "loop", ("a",)),
        (-1, "input", ("__start__",)),
    ]


# ---------------------------------------------------------------- StateGraph scenarios


def _needs_stategraph():
    from _pregel_diff import lib

    if lib("wg").StateGraph is None:
        pytest.skip("warpgraph.graph.StateGraph not available yet")


def _two_nodes(L, S, first, second, checkpointer=None):
    """START -> first -> second: `first` and `second` are (name, node) pairs."""
    b = L.StateGraph(S)
    b.add_node(*first)
    b.add_node(*second)
    b.add_edge(L.START, first[0])
    b.add_edge(first[0], second[0])
    return b.compile(checkpointer=checkpointer)


def sg_interrupt(L):
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int
        answers: list

    def ask(s):
        a = L.interrupt({"q": s["n"]})
        b = L.interrupt("second")
        return {"answers": [a, b]}

    start = ("start", lambda s: {"n": s["n"] + 1})
    return _two_nodes(L, S, start, ("ask", ask), L.InMemorySaver())


def sg_subgraph(L):
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int

    def child_node(s):
        v = L.interrupt("inner?")
        return {"n": s["n"] + v}

    child = _two_nodes(L, S, ("c1", lambda s: {"n": s["n"] * 2}), ("c2", child_node))
    p1 = ("p1", lambda s: {"n": s["n"] + 1})
    return _two_nodes(L, S, p1, ("sub", child), L.InMemorySaver())


def sg_goto(L):
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int

    def router(s):
        return L.Command(update={"n": s["n"] + 100}, goto="b" if s["n"] % 2 else "c")

    b = L.StateGraph(S)
    b.add_node("a", router)
    b.add_node("b", lambda s: {"n": s["n"] + 1})
    b.add_node("c", lambda s: {"n": s["n"] - 1})
    b.add_edge(L.START, "a")
    return b.compile(checkpointer=L.InMemorySaver())


@pytest.mark.parametrize(
    "mode", ["values", "updates", ["values", "updates", "tasks"], "debug", "checkpoints"], ids=str
)
def test_stategraph_double_interrupt_resume(mode) -> None:
    _needs_stategraph()

    def scenario(L, g):
        a = list(g.stream({"n": 1, "answers": []}, CFG, stream_mode=mode))
        b = list(g.stream(L.Command(resume="A"), CFG, stream_mode=mode))
        st = g.get_state(CFG)
        c = list(g.stream(L.Command(resume="B"), CFG, stream_mode=mode))
        return a, b, (st.values, st.next, st.tasks, st.interrupts), c, history(_saver(g))

    lg, wg = run_both(sg_interrupt, scenario)
    assert lg == wg


@pytest.mark.parametrize("subgraphs", [False, True])
def test_stategraph_subgraph_interrupt_resume(subgraphs) -> None:
    _needs_stategraph()

    def scenario(L, g):
        a = list(g.stream({"n": 1}, CFG, stream_mode=["values", "updates"], subgraphs=subgraphs))
        st = g.get_state(CFG)
        b = list(
            g.stream(
                L.Command(resume=5), CFG, stream_mode=["values", "updates"], subgraphs=subgraphs
            )
        )
        saver = _saver(g)
        nss = sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)})
        return (
            a,
            (st.values, st.next, st.tasks),
            b,
            history(saver),
            [history(saver, ns=n) for n in nss],
        )

    lg, wg = run_both(sg_subgraph, scenario)
    assert lg == wg


@pytest.mark.parametrize("start", [1, 2])
def test_stategraph_command_goto_and_command_input(start) -> None:
    _needs_stategraph()

    def scenario(L, g):
        a = list(g.stream({"n": start}, CFG, stream_mode="updates"))
        b = list(g.stream(L.Command(goto="b", update={"n": 7}), CFG, stream_mode="updates"))
        return a, b, history(_saver(g))

    lg, wg = run_both(sg_goto, scenario)
    assert lg == wg


@pytest.mark.parametrize("builder", [sg_interrupt, sg_subgraph, sg_goto], ids=lambda b: b.__name__)
def test_stategraph_async_paths(builder) -> None:
    _needs_stategraph()
    first = {"n": 1, "answers": []} if builder is sg_interrupt else {"n": 1}

    def scenario(L, g):
        async def go():
            a = [
                c
                async for c in g.astream(
                    first, CFG, stream_mode=["values", "updates"], subgraphs=True
                )
            ]
            b = await g.ainvoke(L.Command(resume=3), CFG) if builder is not sg_goto else None
            st = await g.aget_state(CFG)
            hist = [s.metadata async for s in g.aget_state_history(CFG)]
            return a, b, (st.values, st.next, st.tasks), hist, history(_saver(g))

        return asyncio.run(go())

    lg, wg = run_both(builder, scenario)
    assert lg == wg


def test_node_error_propagates_with_same_type_and_checkpoints() -> None:
    _needs_stategraph()
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int

    def build(L):
        def bad(s):
            raise KeyError("nope")

        b = L.StateGraph(S)
        b.add_node("ok", lambda s: {"n": 1})
        b.add_node("bad", bad)
        b.add_edge(L.START, "ok")
        b.add_edge("ok", "bad")
        return b.compile(checkpointer=L.InMemorySaver())

    def scenario(L, g):
        chunks = []
        try:
            for c in g.stream({"n": 0}, CFG, stream_mode=["updates", "tasks"]):
                chunks.append(c)  # noqa: PERF402 - keep chunks seen before the error
        except KeyError as e:
            chunks.append(("raised", repr(e)))
        st = g.get_state(CFG)
        return chunks, (st.values, st.next, st.tasks), history(_saver(g))

    lg, wg = run_both(build, scenario)
    assert lg == wg


@pytest.mark.parametrize("recurse", [False, True])
def test_get_state_subgraphs_and_namespaced_config(recurse) -> None:
    _needs_stategraph()

    def scenario(L, g):
        list(g.stream({"n": 1}, CFG))
        st = g.get_state(CFG, subgraphs=recurse)
        sub_cfg = st.tasks[0].state if not recurse else st.tasks[0].state.config
        sub = g.get_state(sub_cfg)
        hist = [(s.metadata, s.next) for s in g.get_state_history(sub_cfg)]
        # the lent saver object itself shows up in recursed configs; compare the rest
        strip = lambda c: {
            k: v for k, v in c["configurable"].items() if k != "__pregel_checkpointer"
        }
        return st, (sub.values, sub.next, strip(sub.config), sub.metadata, sub.tasks), hist

    lg, wg = run_both(sg_subgraph, scenario)
    assert lg == wg


def sg_parallel_interrupts(L):
    from typing_extensions import TypedDict

    class S(TypedDict):
        out: Annotated[list, operator.add]

    def ask(name):
        return lambda s: {"out": [f"{name}={L.interrupt(name)}"]}

    b = L.StateGraph(S)
    b.add_node("x", ask("x"))
    b.add_node("y", ask("y"))
    b.add_edge(L.START, "x")
    b.add_edge(L.START, "y")
    return b.compile(checkpointer=L.InMemorySaver(), interrupt_before=None)


def test_parallel_interrupts_resume_map_and_errors() -> None:
    _needs_stategraph()

    def scenario(L, g):
        out = [g.invoke({"out": []}, CFG)]
        try:
            g.invoke(L.Command(resume="ambiguous"), CFG)
        except RuntimeError as e:
            out.append(("RuntimeError", str(e)))
        st = g.get_state(CFG)
        x_id = next(i.id for i in st.interrupts if i.value == "x")
        out.append((st.next, len(st.interrupts)))
        out.append(g.invoke(L.Command(resume={x_id: "A"}), CFG))
        st2 = g.get_state(CFG)
        out.append(g.invoke(L.Command(resume={i.id: "B" for i in st2.interrupts}), CFG))
        out.append(history(_saver(g)))
        return out

    lg, wg = run_both(sg_parallel_interrupts, scenario)
    assert lg == wg


def test_empty_inputs_and_star_interrupts() -> None:
    _needs_stategraph()

    def scenario(L, g):
        out = []
        for call in (
            lambda: g.invoke(None, {"configurable": {"thread_id": "fresh"}}),
            # (an empty Command on a fresh thread: langgraph 1.2.24 fails with an
            # UnboundLocalError there, warpgraph with EmptyInputError; not compared)
            lambda: list(g.stream({"n": 1}, CFG, interrupt_before="*", stream_mode="updates")),
            lambda: list(g.stream(None, CFG, interrupt_after="*", stream_mode="updates")),
            lambda: g.invoke({"n": 1}, {"configurable": {"thread_id": "r"}, "recursion_limit": 0}),
        ):
            try:
                out.append(call())
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e).split("\n")[0]))
        return out, history(_saver(g))

    lg, wg = run_both(sg_goto, scenario)
    assert lg == wg


def test_resume_with_update_keeps_loaded_trigger_hint() -> None:
    """Command(resume=, update=) applies null writes before the first tick; the interrupted
    node must still be scheduled (LangGraph unions the loaded updated_channels with them)."""
    _needs_stategraph()

    def scenario(L, g):
        a = g.invoke({"n": 1, "answers": []}, CFG)
        b = list(g.stream(L.Command(resume="A", update={"n": 50}), CFG, stream_mode="updates"))
        c = list(g.stream(L.Command(resume="B"), CFG, stream_mode="values"))
        return a, b, c, history(_saver(g))

    lg, wg = run_both(sg_interrupt, scenario)
    assert lg == wg


def test_stopping_iteration_early_is_clean() -> None:
    def scenario(L, g):
        it = g.stream({"a": "x"}, CFG, stream_mode="updates")
        first = next(it)
        it.close()
        return first, [s.metadata for s in g.get_state_history(CFG)]

    lg, wg = run_both(chain, scenario)
    assert lg == wg


def test_async_nodes_fanout_and_interrupt() -> None:
    _needs_stategraph()
    from typing_extensions import TypedDict

    class S(TypedDict):
        out: Annotated[list, operator.add]

    def build(L):
        async def work(x):
            await asyncio.sleep(0)
            return {"out": [x * 2]}

        async def gate(s):
            return {"out": [L.interrupt("go?")]}

        b = L.StateGraph(S)
        b.add_node("work", work)
        b.add_node("gate", gate)
        b.add_conditional_edges(L.START, lambda s: [L.Send("work", i) for i in range(5)])
        b.add_edge("work", "gate")
        return b.compile(checkpointer=L.InMemorySaver())

    def scenario(L, g):
        async def go():
            a = [c async for c in g.astream({"out": []}, CFG, stream_mode="updates")]
            b = await g.ainvoke(L.Command(resume="yes"), CFG)
            # parallel tasks finish in any order; interrupt ids are random per run
            return (
                sorted(re.sub(r"id='[0-9a-f]{32}'", "id=?", repr(c)) for c in a),
                b,
                history(_saver(g)),
            )

        return asyncio.run(go())

    lg, wg = run_both(build, scenario)
    assert lg == wg


def test_time_travel_replay_and_fork() -> None:
    _needs_stategraph()

    def scenario(L, g):
        g.invoke({"n": 1, "answers": []}, CFG)
        g.invoke(L.Command(resume="A"), CFG)
        hist = list(g.get_state_history(CFG))
        # replay from the checkpoint before "ask" ran (step 1), then resume the fork
        at = next(s for s in hist if s.metadata["step"] == 1).config
        a = list(g.stream(None, at, stream_mode="updates"))
        b = g.invoke(L.Command(resume="Z"), CFG)
        return a, b, history(_saver(g))

    lg, wg = run_both(sg_interrupt, scenario)
    assert lg == wg


@pytest.mark.parametrize("durability", ["exit", "sync"])
def test_subgraph_durability_interrupt_resume(durability) -> None:
    _needs_stategraph()

    def scenario(L, g):
        a = g.invoke({"n": 1}, CFG, durability=durability)
        b = g.invoke(L.Command(resume=5), CFG, durability=durability)
        saver = _saver(g)
        nss = sorted({t.config["configurable"]["checkpoint_ns"] for t in saver.list(None)})
        return a, b, history(saver), [history(saver, ns=n) for n in nss]

    lg, wg = run_both(sg_subgraph, scenario)
    assert lg == wg


def test_print_mode_output(capsys) -> None:
    def scenario(L, g):
        g.invoke({"a": "x"}, CFG, print_mode=["updates", "values"])
        return capsys.readouterr().out

    lg, wg = run_both(chain, scenario)
    assert lg == wg


def test_managed_values_in_node_input() -> None:
    """Non-channel entries with `get(scratchpad)` (LangGraph's managed value specs) are
    computed per task; the recursion arithmetic shows in RemainingSteps / IsLastStep."""
    from langgraph.managed.is_last_step import IsLastStepManager, RemainingStepsManager

    def build(L):
        seen = []

        def step(inp):
            seen.append((inp["n"], inp["remaining"], inp["last"]))
            return inp["n"] + 1

        node = (
            L.NodeBuilder()
            .subscribe_to("n")
            .read_from("remaining", "last")
            .do(step)
            .write_to("n")
            .build()
        )
        g = L.Pregel(
            nodes={"inc": node},
            channels={
                "n": L.LastValue(int),
                "remaining": RemainingStepsManager,
                "last": IsLastStepManager,
            },
            input_channels="n",
            output_channels="n",
        )
        g.seen = seen
        return g

    def scenario(L, g):
        try:
            g.invoke(0, {"recursion_limit": 3})
        except L.errors.GraphRecursionError:
            pass
        return g.seen

    lg, wg = run_both(build, scenario)
    assert lg == wg
    assert lg  # the node ran and saw the managed values


def test_parent_command_from_subgraph() -> None:
    _needs_stategraph()
    from typing_extensions import TypedDict

    class S(TypedDict):
        n: int

    def build(L):
        cb = L.StateGraph(S)
        cb.add_node(
            "jump", lambda s: L.Command(graph=L.Command.PARENT, goto="after", update={"n": 42})
        )
        cb.add_edge(L.START, "jump")
        pb = L.StateGraph(S)
        pb.add_node("sub", cb.compile())
        pb.add_node("after", lambda s: {"n": s["n"] + 1})
        pb.add_edge(L.START, "sub")
        return pb.compile(checkpointer=L.InMemorySaver())

    def scenario(L, g):
        chunks = list(g.stream({"n": 1}, CFG, stream_mode=["updates", "values"], subgraphs=True))
        return chunks, history(_saver(g))

    lg, wg = run_both(build, scenario)
    assert lg == wg
