"""warpgraph.stream on its own: channel, mux and run-stream contracts, and the v3 entry
points' argument checks (the differential tests compare whole runs with the reference)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from typing_extensions import TypedDict
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel.main import _normalize_stream_transformer_factories
from warpgraph.stream import StreamChannel, StreamTransformer
from warpgraph.stream._convert import convert_to_protocol_event
from warpgraph.stream._mux import StreamMux
from warpgraph.stream.run_stream import GraphRunStream
from warpgraph.stream.transformers import ValuesTransformer


def _ev(method: str, data: Any = None, ns: list[str] | None = None) -> dict:
    return {"type": "event", "method": method, "params": {"namespace": ns or [], "timestamp": 0,
                                                          "data": data}}  # fmt: skip


class _State(TypedDict):
    n: int


def _graph():
    g = StateGraph(_State)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    return g.compile()


class _Pusher(StreamTransformer):
    """Pushes what it sees to a named channel (mirrored on the main log)."""

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self.out: StreamChannel[str] = StreamChannel("seen")

    def init(self) -> dict[str, Any]:
        return {"seen": self.out}

    def process(self, event: Any) -> bool:
        self.out.push(event["method"])
        return event["method"] != "hidden"


# ---------------------------------------------------------------- StreamChannel
def test_channel_keeps_nothing_before_a_subscriber_and_stamps_after() -> None:
    ch: StreamChannel[int] = StreamChannel()
    ch._bind(is_async=False)
    ch.push(1)
    assert list(ch._items) == []
    cursor = iter(ch)
    ch.push(2)
    ch.push(3)
    assert list(ch._items) == [(0, 2), (0, 3)]  # no mux: stamp 0
    ch.fail(ValueError("late"))
    got = []
    with pytest.raises(ValueError, match="late"):
        got.extend(cursor)
    assert got == [2, 3]
    with pytest.raises(RuntimeError, match="Cannot push to a closed StreamChannel"):
        ch.push(4)


def test_channel_binding_rules() -> None:
    ch: StreamChannel[int] = StreamChannel()
    with pytest.raises(TypeError, match="has not been bound"):
        iter(ch)
    ch._bind(is_async=True)
    with pytest.raises(RuntimeError, match="already bound"):
        ch._bind(is_async=False)
    with pytest.raises(TypeError, match="bound to async mode"):
        iter(ch)
    ch.__aiter__()
    with pytest.raises(RuntimeError, match="already has a subscriber"):
        ch.__aiter__()
    with pytest.raises(ValueError, match="positive int or None"):
        StreamChannel(maxlen=0)


def test_tee_and_atee_fan_out() -> None:
    ch: StreamChannel[int] = StreamChannel()
    ch._bind(is_async=False)
    a, b = ch.tee(2)
    for i in range(3):
        ch.push(i)
    ch.close()
    assert (list(a), list(b)) == ([0, 1, 2], [0, 1, 2])

    async def fan() -> tuple[list, list]:
        ach: StreamChannel[int] = StreamChannel()
        ach._bind(is_async=True)
        x, y = ach.atee(2)
        ach.push(7)
        ach.fail(KeyError("k"))
        first = [v async for v in x]
        return first, [v async for v in y]

    with pytest.raises(KeyError):
        asyncio.run(fan())


# each pull script: what the pump does on its i-th call (its actions, then what it reports)
PULLS = {
    "no pump: ends at an empty buffer": (None, [], None),
    "pushes then reports progress": ([("push 1, push 2", True), ("close", True)], [1, 2], None),
    "no progress, nothing left: ends": ([("", False)], [], None),
    "no progress but pushed: goes on": ([("push 5", False), ("", False)], [5], None),
    "no progress but closed: ends": ([("close", False)], [], None),
    "progress reported without items": ([("", True), ("push 3", True), ("", False)], [3], None),
    "fails while pulling": ([("push 4, fail", True)], [4], KeyError),
}


def _pull_channel(is_async: bool, script: list | None) -> tuple[StreamChannel, list]:
    ch: StreamChannel[int] = StreamChannel()
    ch._bind(is_async=is_async)
    calls: list[int] = []

    def pump() -> bool:
        actions, report = script[len(calls)]  # type: ignore[index]
        calls.append(1)
        for action in filter(None, actions.split(", ")):
            if action.startswith("push "):
                ch.push(int(action[5:]))
            elif action == "close":
                ch.close()
            else:
                ch.fail(KeyError("pump"))
        return report

    async def apump() -> bool:
        return pump()

    if script is not None:
        if is_async:
            ch._arequest_more = apump
        else:
            ch._request_more = pump
    return ch, calls


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("case", list(PULLS))
def test_channel_pulls_from_the_run_when_its_buffer_is_empty(case: str, is_async: bool) -> None:
    script, expected, error = PULLS[case]
    ch, calls = _pull_channel(is_async, script)
    got: list[int] = []

    async def adrain() -> None:
        async for item in ch:
            got.append(item)

    def drain() -> None:
        if is_async:
            asyncio.run(adrain())
        else:
            got.extend(ch)

    if error is None:
        drain()
    else:
        with pytest.raises(error):
            drain()
    assert got == expected
    assert len(calls) == (0 if script is None else len(script))


# ---------------------------------------------------------------- StreamMux
def test_mux_numbers_forwarded_pushes_before_their_event_and_suppresses() -> None:
    pusher = _Pusher()
    mux = StreamMux([pusher])
    log = iter(mux._events)
    mux.push(_ev("values"))
    mux.push(_ev("hidden"))
    mux.close()
    got = [(e["seq"], e["method"], e["params"]["data"]) for e in log]
    assert got == [(1, "custom:seen", "values"), (2, "values", None), (3, "custom:seen", "hidden")]
    assert pusher.out._closed


def test_mux_registration_checks() -> None:
    class Bad(StreamTransformer):
        def init(self) -> Any:
            return []

    class AsyncOnly(StreamTransformer):
        def init(self) -> dict[str, Any]:
            return {}

        async def aprocess(self, event: Any) -> bool:
            return True

    with pytest.raises(TypeError, match="must return a dict"):
        StreamMux([Bad()])
    with pytest.raises(RuntimeError, match="requires an async run"):
        StreamMux([AsyncOnly()])
    with pytest.raises(ValueError, match=r"conflict.*'values'.*ValuesTransformer"):
        StreamMux(factories=[ValuesTransformer, ValuesTransformer])
    with pytest.raises(RuntimeError, match="factories"):
        StreamMux([ValuesTransformer()])._make_child(("x",))


def test_mux_before_builtins_lane_and_close_errors() -> None:
    order: list[str] = []

    def tap(label: str, early: bool, breaks: bool = False) -> Any:
        class Tap(StreamTransformer):
            before_builtins = early

            def init(self) -> dict[str, Any]:
                return {}

            def process(self, event: Any) -> bool:
                order.append(label)
                return True

            def finalize(self) -> None:
                order.append(f"end:{label}")
                if breaks:
                    raise RuntimeError(f"{label} broke")

        return Tap

    mux = StreamMux(factories=[tap("a", False, True), tap("b", True), tap("c", False)])
    mux.push(_ev("values"))
    with pytest.raises(RuntimeError, match="a broke"):
        mux.close()
    assert order == ["b", "a", "c", "end:b", "end:a", "end:c"]
    assert mux._events._closed and mux._events._error is None


def test_schedule_is_joined_before_afinalize_and_needs_a_loop() -> None:
    done: list[str] = []

    class Sched(StreamTransformer):
        requires_async = True

        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            async def work() -> None:
                await asyncio.sleep(0)
                done.append("task")

            self.schedule(work())
            return True

        async def afinalize(self) -> None:
            done.append("afinalize")

    async def go() -> None:
        mux = StreamMux([Sched()], is_async=True)
        await mux.apush(_ev("values"))
        await mux.aclose()

    asyncio.run(go())
    assert done == ["task", "afinalize"]
    coro = asyncio.sleep(0)
    with pytest.raises(RuntimeError, match="requires a running event loop"):
        Sched().schedule(coro)
    coro.close()


# ---------------------------------------------------------------- run streams
def test_run_stream_tracks_output_without_a_values_projection() -> None:
    parts = [
        {"type": "values", "ns": (), "data": {"n": 1}},
        {"type": "values", "ns": ("sub:1",), "data": {"n": 9}},
        {"type": "values", "ns": (), "data": {"n": 2}, "interrupts": ("why",)},
    ]
    run = GraphRunStream(iter(parts), StreamMux(factories=[]))
    assert (run.output, run.interrupted, run.interrupts) == ({"n": 2}, True, ["why"])
    with pytest.raises(AttributeError, match=r"registered projections: none"):
        run.values  # noqa: B018


def test_interleave_merges_by_push_order_and_releases() -> None:
    mux = StreamMux(factories=[_Pusher, ValuesTransformer])
    run = GraphRunStream(iter([{"type": "values", "ns": (), "data": {"n": 1}}]), mux)
    got = list(run.interleave("values", "seen"))
    assert got == [("seen", "values"), ("values", {"n": 1})]
    assert not run.extensions["values"]._subscribed
    with pytest.raises(TypeError):
        run.extensions["x"] = 1  # type: ignore[index]


def test_convert_keeps_interrupts_only_when_present() -> None:
    event = convert_to_protocol_event({"type": "updates", "ns": ("a", "b"), "data": {}})
    assert event["params"]["namespace"] == ["a", "b"] and "interrupts" not in event["params"]


# ---------------------------------------------------------------- entry points
def test_stream_events_argument_checks() -> None:
    graph = _graph()
    with pytest.raises(TypeError, match="stream_mode"):
        graph.stream_events({"n": 0}, version="v3", stream_mode="values")
    with pytest.raises(TypeError, match="pre-built instance"):
        graph.stream_events({"n": 0}, version="v3", transformers=[ValuesTransformer()])
    with pytest.raises(TypeError, match="scope-aware callables, got int"):
        _normalize_stream_transformer_factories([3])  # type: ignore[list-item]
    with pytest.raises(NotImplementedError, match="version='v1'"):
        graph.stream_events({"n": 0}, version="v1")
    built = _normalize_stream_transformer_factories([ValuesTransformer])[0](("a:1",))
    assert isinstance(built, ValuesTransformer) and built.scope == ("a:1",)


def test_v3_run_requests_only_the_modes_transformers_need() -> None:
    class Custom(StreamTransformer):
        required_stream_modes = ("custom",)

        def init(self) -> dict[str, Any]:
            return {}

        def process(self, event: Any) -> bool:
            return True

    graph = _graph()
    seen: list[Any] = []
    original = graph.stream

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(sorted(kwargs["stream_mode"]))
        return original(*args, **kwargs)

    graph.stream = spy  # type: ignore[method-assign]
    assert graph.stream_events({"n": 0}, version="v3").output == {"n": 1}
    assert graph.stream_events({"n": 0}, version="v3", transformers=[Custom]).output == {"n": 1}
    assert seen == [["messages", "tasks", "values"], ["custom", "messages", "tasks", "values"]]
