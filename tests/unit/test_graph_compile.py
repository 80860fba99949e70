"""StateGraph compilation: the same builder on langgraph and warpgraph gives the same layout.

Every expected value comes from compiling the same builder with the reference.
"""

import dataclasses
import importlib
import operator
import sys
from typing import Annotated, Any, Literal

import pytest
from typing_extensions import NotRequired, Required, TypedDict

LIBS = ("langgraph", "warpgraph")


def _mod(lib: str, sub: str) -> Any:
    return importlib.import_module(f"{lib}.{sub}")


class L:
    """Public names of one library."""

    def __init__(self, lib: str) -> None:
        self.lib = lib
        g = _mod(lib, "graph")
        self.StateGraph, self.START, self.END = g.StateGraph, g.START, g.END
        t = _mod(lib, "types")
        self.Send, self.Command, self.RetryPolicy = t.Send, t.Command, t.RetryPolicy
        ch = _mod(lib, "channels")
        self.EphemeralValue, self.Topic = ch.EphemeralValue, ch.Topic
        self.ChannelWrite = _mod(lib, "pregel._write").ChannelWrite
        self.ChannelWriteEntry = _mod(lib, "pregel._write").ChannelWriteEntry
        self.ChannelWriteTupleEntry = _mod(lib, "pregel._write").ChannelWriteTupleEntry


@pytest.fixture(scope="module")
def libs() -> dict[str, L]:
    try:
        importlib.import_module("warpgraph.pregel.main")
        importlib.import_module("warpgraph._internal._runnable")
    except ImportError as exc:  # pragma: no cover - while the runtime is being written
        pytest.skip(f"warpgraph runtime not importable yet: {exc}")
    return {lib: L(lib) for lib in LIBS}


# ---------------------------------------------------------------- layout description


def _channel_desc(ch: Any) -> tuple:
    extra: tuple = ()
    name = type(ch).__name__
    if name == "BinaryOperatorAggregate":
        extra = (ch.operator,)
    elif name in ("EphemeralValue", "UntrackedValue"):
        extra = (ch.guard,)
    elif name.startswith("NamedBarrierValue"):
        extra = (frozenset(ch.names),)
    elif name == "Topic":
        extra = (ch.accumulate,)
    return (name, *extra)


def _writer_desc(m: L, w: Any) -> tuple:
    if isinstance(w, m.ChannelWrite):
        entries = []
        for e in w.writes:
            if isinstance(e, m.ChannelWriteEntry):
                entries.append(("entry", e.channel, repr(e.value) if e.value is not None else None))
            elif isinstance(e, m.ChannelWriteTupleEntry):
                entries.append(("tuple", None if e.static is None else list(e.static)))
            else:
                entries.append(("send", e.node))
        return ("write", tuple(entries))
    static = m.ChannelWrite.get_static_writes(w)
    return ("branch", None if static is None else [tuple(s) for s in static])


def describe(m: L, graph: Any) -> dict:
    nodes = {}
    for name, node in graph.nodes.items():
        nodes[name] = {
            "triggers": list(node.triggers),
            "channels": node.channels,
            "mapper": node.mapper is not None,
            "tags": node.tags,
            "metadata": node.metadata,
            "retry": node.retry_policy,
            "timeout": None
            if node.timeout is None
            else (node.timeout.run_timeout, node.timeout.idle_timeout),
            "cache": None if node.cache_policy is None else node.cache_policy.ttl,
            # edge writers follow LangGraph's (set) edge iteration order: compared as is,
            # since a task's write order decides the order of channel_versions
            "writers": [_writer_desc(m, w) for w in node.writers],
            "flat_writers": len(node.flat_writers),
            "subgraphs": len(node.subgraphs),
        }
    return {
        "channels": [(k, _channel_desc(v)) for k, v in graph.channels.items()],
        "nodes": list(graph.nodes),
        "node_details": nodes,
        "trigger_to_nodes": {k: list(v) for k, v in graph.trigger_to_nodes.items()},
        "input": graph.input_channels,
        "output": graph.output_channels,
        "stream": graph.stream_channels,
        "stream_mode": graph.stream_mode,
        "interrupt_before": graph.interrupt_before_nodes,
        "interrupt_after": graph.interrupt_after_nodes,
        "name": graph.name,
    }


# ---------------------------------------------------------------- builders (one per shape)


class S(TypedDict):
    a: int
    items: Annotated[list, operator.add]


class Partial(TypedDict, total=False):
    a: Required[int]
    items: NotRequired[Annotated[list, operator.add]]
    note: str


@dataclasses.dataclass
class DState:
    a: int = 0
    items: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


class In(TypedDict):
    a: int


class Out(TypedDict):
    items: Annotated[list, operator.add]


class Extra(TypedDict):
    a: int
    scratch: str


def n_inc(state: S) -> dict:
    return {"a": state["a"] + 1}


def n_extra(state: Extra) -> dict:
    return {"scratch": "x"}


def route(state: S) -> Literal["x", "y", "__end__"]:
    return "x"


def route_any(state):
    return "x"


def cmd_node(state: S) -> Any:
    return None


def build_linear(m: L):
    g = m.StateGraph(S)
    g.add_node("x", n_inc)
    g.add_node("y", n_inc)
    g.add_edge(m.START, "x")
    g.add_edge("x", "y")
    g.add_edge("y", m.END)
    return g.compile()


def build_sequence(m: L):
    g = m.StateGraph(S)
    g.add_sequence([n_inc, ("second", n_inc), ("third", lambda s: {})])
    g.set_entry_point("n_inc")
    g.set_finish_point("third")
    return g.compile(name="seq")


def build_branches(m: L):
    g = m.StateGraph(S)
    g.add_node("x", n_inc, metadata={"k": 1}, retry_policy=m.RetryPolicy(max_attempts=2))
    g.add_node("y", n_inc)
    g.add_node("z", n_inc)
    g.add_conditional_edges(m.START, route)
    g.add_conditional_edges("x", route_any, {"x": "y", "other": m.END})
    g.add_conditional_edges("y", lambda s: "z", ["z", m.END])
    g.add_conditional_edges("z", route_any)
    return g.compile(interrupt_before=["y"], interrupt_after=["z"])


def build_join_defer(m: L):
    g = m.StateGraph(S)
    for n in ("a1", "a2", "b", "c"):
        g.add_node(n, n_inc, defer=(n == "c"))
    g.add_edge(m.START, "a1")
    g.add_edge(m.START, "a2")
    g.add_edge(["a1", "a2"], "b")
    g.add_edge(["a2", "b"], "c")
    g.add_edge(["b"], m.END)
    return g.compile()


def build_send_command(m: L):
    def fan(state: S):
        return [m.Send("worker", {"a": i}) for i in range(2)]

    def commander(state: S) -> m.Command[Literal["worker", "__end__"]]:
        return m.Command(goto="worker")

    g = m.StateGraph(S)
    g.add_node("worker", n_inc)
    g.add_node("commander", commander)
    g.add_node("routed", cmd_node, destinations=("worker", m.END))
    g.add_node("labelled", cmd_node, destinations={"worker": "go"})
    g.add_conditional_edges(m.START, fan)
    g.add_edge(m.START, "commander")
    g.add_edge(m.START, "routed")
    g.add_edge(m.START, "labelled")
    return g.compile()


def build_schemas(m: L):
    g = m.StateGraph(S, input_schema=In, output_schema=Out)
    g.add_node("x", n_inc)
    g.add_node("extra", n_extra)
    g.add_node("typed", n_inc, input_schema=In)
    g.add_edge(m.START, "x")
    g.add_edge("x", "extra")
    g.add_edge("extra", "typed")
    return g.compile()


def build_partial(m: L):
    g = m.StateGraph(Partial)
    g.add_node("x", lambda s: {})
    g.set_entry_point("x")
    return g.compile()


def build_dataclass(m: L):
    g = m.StateGraph(DState)
    g.add_node("x", lambda s: {"a": s.a + 1})
    g.add_conditional_edges("x", lambda s: m.END)
    g.add_edge(m.START, "x")
    return g.compile()


def build_pydantic(m: L):
    from pydantic import BaseModel

    class P(BaseModel):
        a: int = 0
        items: Annotated[list, operator.add] = []
        c: str | None = None

    g = m.StateGraph(P)
    g.add_node("x", lambda s: {"a": s.a + 1})
    g.add_edge(m.START, "x")
    return g.compile()


def build_root(m: L):
    g = m.StateGraph(Annotated[list, operator.add])
    g.add_node("x", lambda s: [1])
    g.add_edge(m.START, "x")
    return g.compile()


def build_root_int(m: L):
    g = m.StateGraph(int)
    g.add_node("x", lambda s: s + 1)
    g.add_conditional_edges("x", lambda s: m.END)
    g.add_edge(m.START, "x")
    return g.compile()


def build_channel_annotations(m: L):
    class C(TypedDict):
        eph: Annotated[int, m.EphemeralValue]
        topic: Annotated[list, m.Topic(int, accumulate=True)]
        plain: str

    g = m.StateGraph(C)
    g.add_node("x", lambda s: {})
    g.add_edge(m.START, "x")
    return g.compile()


def build_subgraph(m: L):
    sub = m.StateGraph(S)
    sub.add_node("inner", n_inc)
    sub.add_edge(m.START, "inner")
    child = sub.compile()

    def calls_child(state: S):
        return child.invoke(state)

    g = m.StateGraph(S)
    g.add_node("child", child)
    g.add_node("wrapper", calls_child)
    g.add_edge(m.START, "child")
    g.add_edge("child", "wrapper")
    return g.compile()


async def a_node(state: S) -> dict:
    return {}


def build_defaults(m: L):
    g = m.StateGraph(S)
    g.set_node_defaults(retry_policy=m.RetryPolicy(max_attempts=3))
    g.add_node("x", n_inc)
    g.add_node("slow", a_node, timeout=5, retry_policy=m.RetryPolicy(max_attempts=1))
    g.add_edge(m.START, "x")
    g.add_edge("x", "slow")
    return g.compile()


BUILDERS = [
    build_defaults,
    build_linear,
    build_sequence,
    build_branches,
    build_join_defer,
    build_send_command,
    build_schemas,
    build_partial,
    build_dataclass,
    build_pydantic,
    build_root,
    build_root_int,
    build_channel_annotations,
    build_subgraph,
]


@pytest.mark.parametrize("build", BUILDERS, ids=lambda f: f.__name__)
def test_layout_matches_reference(libs: dict[str, L], build: Any) -> None:
    ref = describe(libs["langgraph"], build(libs["langgraph"]))
    ours = describe(libs["warpgraph"], build(libs["warpgraph"]))
    # RetryPolicy instances differ by class; compare their fields
    for desc in (ref, ours):
        for node in desc["node_details"].values():
            if node["retry"] is not None:
                node["retry"] = [tuple(getattr(f, "__name__", f) for f in p) for p in node["retry"]]
    assert ours == ref


def test_compiled_keeps_builder(libs: dict[str, L]) -> None:
    m = libs["warpgraph"]
    g = m.StateGraph(S)
    g.add_node("x", n_inc)
    g.add_edge(m.START, "x")
    compiled = g.compile()
    from warpgraph.graph.state import CompiledStateGraph
    from warpgraph.pregel.main import Pregel

    assert isinstance(compiled, CompiledStateGraph) and isinstance(compiled, Pregel)
    assert compiled.builder is g


# ---------------------------------------------------------------- validation errors


def _bad_builders(m: L) -> dict[str, Any]:
    def x_entry() -> Any:
        """A graph of one node x, entered from START (each builder below adds its flaw)."""
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        g.add_edge(m.START, "x")
        return g

    def no_entry():
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        return g.compile()

    def unknown_source():
        g = x_entry()
        g.add_edge("ghost", "x")
        return g.compile()

    def unknown_target():
        g = x_entry()
        g.add_edge("x", "ghost")
        return g.compile()

    def unknown_path_target():
        g = x_entry()
        g.add_conditional_edges("x", route_any, {"a": "ghost"})
        return g.compile()

    def unknown_destination():
        g = m.StateGraph(S)
        g.add_node("x", n_inc, destinations=("ghost",))
        g.add_edge(m.START, "x")
        return g.compile()

    def interrupt_unknown():
        return x_entry().compile(interrupt_before=["ghost"])

    def interrupt_after_unknown():
        return x_entry().compile(interrupt_after=["nope"])

    def interrupt_star_then_unknown():
        return x_entry().compile(interrupt_after="*", interrupt_before=["nope"])

    def branch_without_entry():
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        g.add_conditional_edges("x", route_any)
        return g.compile()

    def unknown_branch_source():
        g = x_entry()
        g.add_conditional_edges("ghost", route_any)
        return g.compile()

    def duplicate():
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        g.add_node("x", n_inc)

    def reserved_start():
        m.StateGraph(S).add_node(m.START, n_inc)

    def reserved_end():
        m.StateGraph(S).add_node(m.END, n_inc)

    def reserved_pipe():
        m.StateGraph(S).add_node("a|b", n_inc)

    def reserved_colon():
        m.StateGraph(S).add_node("a:b", n_inc)

    def reserved_name():
        g = m.StateGraph(S)
        g.add_node("__interrupt__", n_inc)
        g.add_edge(m.START, "__interrupt__")
        return g.compile()

    def reserved_key():
        g = m.StateGraph(TypedDict("R", {"__pregel_send": int}))
        g.add_node("x", lambda s: {})
        g.add_edge(m.START, "x")
        return g.compile()

    def reducer_arity():
        class Bad(TypedDict):
            x: Annotated[list, lambda a, b, c: a]

        m.StateGraph(Bad)

    def reducer_arity_one():
        def one(a):
            return a

        m.StateGraph(TypedDict("Bad1", {"x": Annotated[list, one]}))

    def end_as_start():
        m.StateGraph(S).add_edge(m.END, "x")

    def start_as_end():
        m.StateGraph(S).add_edge("x", m.START)

    def join_unknown():
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        g.add_edge(["x", "ghost"], "x")

    def join_unknown_end():
        g = m.StateGraph(S)
        g.add_node("x", n_inc)
        g.add_edge(["x"], "ghost")

    def duplicate_branch():
        g = m.StateGraph(S)
        g.add_conditional_edges(m.START, route_any)
        g.add_conditional_edges(m.START, route_any)

    def empty_sequence():
        m.StateGraph(S).add_sequence([])

    def duplicate_sequence():
        m.StateGraph(S).add_sequence([n_inc, n_inc])

    def sequence_lambdas():
        m.StateGraph(S).add_sequence([lambda s: {}, lambda s: {}])

    return dict(locals())


BAD = sorted(k for k in _bad_builders(L.__new__(L)) if k not in ("m", "x_entry"))


@pytest.mark.parametrize("case", BAD)
def test_validation_errors_match(libs: dict[str, L], case: str) -> None:
    outcomes = []
    for lib in LIBS:
        try:
            _bad_builders(libs[lib])[case]()
        except Exception as exc:  # noqa: BLE001 - the error is what is compared
            outcomes.append((type(exc).__name__, str(exc)))
        else:
            outcomes.append(None)
    assert outcomes[0] is not None, "the reference accepted it"
    assert outcomes[1] == outcomes[0]


def test_deprecated_kwargs_warn(libs: dict[str, L]) -> None:
    m = libs["warpgraph"]
    with pytest.warns(DeprecationWarning, match="input_schema"):
        g = m.StateGraph(S, input=In)
    assert g.input_schema is In
    with pytest.warns(DeprecationWarning, match="output_schema"):
        g = m.StateGraph(S, output=Out)
    assert g.output_schema is Out
    with pytest.warns(DeprecationWarning, match="context_schema"):
        g = m.StateGraph(S, config_schema=In)
    assert g.context_schema is In


def test_schemas_and_channels_match_reference(libs: dict[str, L]) -> None:
    shapes = {}
    for lib in LIBS:
        g = libs[lib].StateGraph(S, input_schema=In, output_schema=Out)
        g.add_node("extra", n_extra)
        shapes[lib] = (
            {getattr(k, "__name__", k): list(v) for k, v in g.schemas.items()},
            {k: type(v).__name__ for k, v in g.channels.items()},
            g.nodes["extra"].input_schema,
        )
    assert shapes["warpgraph"] == shapes["langgraph"]
    assert sys.modules.get("warpgraph.graph") is not None


# ---------------------------------------------------------------- node writers, driven directly
# Each node's runnable (bound -> writers) is invoked with a `__pregel_send` that records the
# writes and a `__pregel_read` that reads channels (fresh: with the recorded writes applied),
# on both libraries; the recorded writes and outputs must be equal.


def _missing(lib: str) -> Any:
    return _mod(lib, "_internal._typing").MISSING


def run_node(lib: str, graph: Any, name: str, state: dict) -> tuple[list, Any]:
    MISSING = _missing(lib)
    writes: list = []
    chans = {
        k: v.from_checkpoint(state.get(k, MISSING))
        for k, v in graph.channels.items()
        if hasattr(v, "from_checkpoint")
    }

    def read(select: Any, fresh: bool = False) -> Any:
        view = {k: v.copy() for k, v in chans.items()} if fresh else chans
        if fresh:
            grouped: dict[str, list] = {}
            for ch, val in writes:
                grouped.setdefault(ch, []).append(val)
            for ch, vals in grouped.items():
                if ch in view:
                    view[ch].update(vals)
        if isinstance(select, str):
            return view[select].get()
        return {k: view[k].get() for k in select if view[k].is_available()}

    node = graph.nodes[name]
    value = read(node.channels)
    if node.mapper is not None:
        value = node.mapper(value)
    config = {"configurable": {"__pregel_send": writes.extend, "__pregel_read": read}}
    try:
        out = node.node.invoke(value, config)
    except Exception as exc:  # noqa: BLE001 - compared across libraries
        return writes, (type(exc).__name__, str(exc).split("\nFor troubleshooting")[0])
    return writes, out


def _norm(value: Any) -> Any:
    """Library-neutral form of Send / Command / containers."""
    cls = type(value).__name__
    if cls == "Send":
        return ("Send", value.node, _norm(value.arg))
    if cls == "Command":
        return ("Command", value.graph, _norm(value.update), _norm(value.goto))
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_norm(v) for v in value)
    if dataclasses.is_dataclass(value) or hasattr(value, "model_dump"):
        return (cls, _norm(vars(value) if dataclasses.is_dataclass(value) else value.model_dump()))
    return value


def _writer_graph(m: L, ret: Any, with_branch: bool, schema: Any = S):
    g = m.StateGraph(schema)
    g.add_node("x", lambda s: ret(m))
    g.add_node("y", n_inc)
    g.add_edge(m.START, "x")
    if with_branch:

        def route(s):
            a = s["a"] if isinstance(s, dict) else s.a
            return ["y", m.Send("y", {"a": a})] if a > 1 else m.END

        g.add_conditional_edges("x", route)
    else:
        g.add_edge("x", "y")
    return g.compile()


RETURNS = {
    "dict": lambda m: {"a": 5, "items": [1]},
    "dict_unknown_key": lambda m: {"a": 2, "nope": 1},
    "none": lambda m: None,
    "empty": lambda m: {},
    "list_invalid": lambda m: [1, 2],
    "str_invalid": lambda m: "oops",
    "send": lambda m: m.Send("y", {"a": 9}),
    "command_update_goto": lambda m: m.Command(update={"a": 3}, goto="y"),
    "command_goto_list": lambda m: m.Command(goto=["y", m.Send("y", {"a": 1}), m.END]),
    "command_tuples": lambda m: m.Command(update=[("a", 4), ("items", [2])]),
    "command_parent": lambda m: m.Command(graph=m.Command.PARENT, goto="z", update={"a": 1}),
    "command_list": lambda m: [m.Command(update={"a": 7}), m.Command(goto="y")],
    "mixed_list": lambda m: [m.Command(update={"a": 7}), {"items": [3]}],
    "command_end": lambda m: m.Command(goto=m.END, update={"a": 0}),
}


@pytest.mark.parametrize("with_branch", [False, True])
@pytest.mark.parametrize("ret", sorted(RETURNS))
def test_node_writes_match_reference(libs: dict[str, L], ret: str, with_branch: bool) -> None:
    results = {}
    for lib in LIBS:
        graph = _writer_graph(libs[lib], RETURNS[ret], with_branch)
        results[lib] = [
            _norm(run_node(lib, graph, "x", {"a": 1, "items": []})),
            _norm(run_node(lib, graph, "x", {"a": 3, "items": [0]})),
            _norm(run_node(lib, graph, "__start__", {"__start__": {"a": 1, "zzz": 2}})),
        ]
    assert results["warpgraph"] == results["langgraph"]


@pytest.mark.parametrize("ret", ["dataclass_obj", "dict", "none_fields"])
def test_dataclass_node_writes_match_reference(libs: dict[str, L], ret: str) -> None:
    returns = {
        "dataclass_obj": lambda m: DState(a=4, items=[1]),
        "dict": lambda m: {"a": 2},
        "none_fields": lambda m: DState(a=None, items=None),  # type: ignore[arg-type]
    }
    results = {}
    for lib in LIBS:
        graph = _writer_graph(libs[lib], returns[ret], True, schema=DState)
        results[lib] = _norm(run_node(lib, graph, "x", {"a": 2, "items": []}))
    assert results["warpgraph"] == results["langgraph"]


def test_root_state_writes_match_reference(libs: dict[str, L]) -> None:
    results = {}
    for lib in LIBS:
        m = libs[lib]
        g = m.StateGraph(Annotated[list, operator.add])
        g.add_node("x", lambda s: [len(s)])
        g.add_node("c", lambda s, m=m: [m.Command(update=[9], goto="x"), 5])
        g.add_edge(m.START, "x")
        g.add_conditional_edges("x", lambda s, m=m: "c" if len(s) < 3 else m.END)
        graph = g.compile()
        results[lib] = [
            _norm(run_node(lib, graph, "x", {"__root__": [1]})),
            _norm(run_node(lib, graph, "x", {"__root__": [1, 2, 3]})),
            _norm(run_node(lib, graph, "c", {"__root__": [1]})),
        ]
    assert results["warpgraph"] == results["langgraph"]


def test_branch_errors_match_reference(libs: dict[str, L]) -> None:
    paths = {
        "none": lambda m: None,
        "start": lambda m: m.START,
        "send_end": lambda m: m.Send(m.END, 1),
        "unknown_key": lambda m: "missing",
    }
    for key, path in paths.items():
        results = {}
        for lib in LIBS:
            m = libs[lib]
            g = m.StateGraph(S)
            g.add_node("x", n_inc)
            g.add_edge(m.START, "x")
            mapping = {"ok": "x"} if key == "unknown_key" else None
            g.add_conditional_edges("x", lambda s, p=path, m=m: p(m), mapping)
            results[lib] = _norm(run_node(lib, g.compile(), "x", {"a": 1, "items": []}))
        assert results["warpgraph"] == results["langgraph"], key


# ---------------------------------------------------------------- smoke invokes vs reference


def _smoke_cases(m: L) -> dict[str, Any]:
    def fanout():
        def route(s):
            return [m.Send("w", {"a": 10}), "y"] if s["a"] < 3 else m.END

        g = m.StateGraph(S)
        g.add_node("x", lambda s: {"a": s["a"] + 1, "items": ["x"]})
        g.add_node("y", lambda s: {"items": ["y"]})
        g.add_node("w", lambda s: {"items": [("w", s["a"])]})
        g.add_node("z", lambda s: m.Command(update={"items": ["z"]}, goto="x"))
        g.add_edge(m.START, "x")
        g.add_conditional_edges("x", route)
        g.add_edge(["y", "w"], "z")
        c = g.compile()
        return [
            c.invoke({"a": 0, "items": []}),
            list(c.stream({"a": 1, "items": []})),
            list(c.stream({"a": 1, "items": []}, stream_mode=["values", "updates"])),
        ]

    def pydantic_state():
        from pydantic import BaseModel

        class P(BaseModel):
            a: int = 0
            items: Annotated[list, operator.add] = []
            c: str | None = None

        g = m.StateGraph(P)
        g.add_node("x", lambda s: P(a=s.a + 1))
        g.add_node("y", lambda s: {"items": [s.a], "c": "done"})
        g.add_edge(m.START, "x")
        g.add_conditional_edges("x", lambda s: "y" if s.a > 1 else "x")
        c = g.compile()
        return [c.invoke({"a": 0}), list(c.stream({"a": 0}, stream_mode="updates"))]

    def dataclass_and_root():
        g = m.StateGraph(DState)
        g.add_node("x", lambda s: {"a": s.a + 1, "items": [s.a]})
        g.add_edge(m.START, "x")
        r = m.StateGraph(int)
        r.add_node("x", lambda s: s * 2)
        r.add_edge(m.START, "x")
        return [g.compile().invoke(DState(a=5)), r.compile().invoke(3)]

    def schemas_and_defer():
        g = m.StateGraph(S, input_schema=In, output_schema=Out)
        g.add_node("x", lambda s: {"items": [s["a"]]})
        g.add_edge(m.START, "x")
        d = m.StateGraph(S)
        for n in ("a1", "a2", "b"):
            d.add_node(n, lambda s, n=n: {"items": [n]})
        d.add_node("late", lambda s: {"items": ["late"]}, defer=True)
        d.add_edge(m.START, "a1")
        d.add_edge(m.START, "a2")
        d.add_edge("a1", "b")
        d.add_edge("a2", "late")
        d.add_edge("b", "late")
        return [g.compile().invoke({"a": 4}), d.compile().invoke({"a": 0, "items": []})]

    def subgraph_node():
        sub = m.StateGraph(S)
        sub.add_node("inner", lambda s: {"items": ["inner"]})
        sub.add_edge(m.START, "inner")
        g = m.StateGraph(S)
        g.add_node("child", sub.compile())
        g.add_node("after", lambda s: {"a": 99})
        g.add_edge(m.START, "child")
        g.add_edge("child", "after")
        c = g.compile()
        return [c.invoke({"a": 1, "items": []}), list(c.stream({"a": 1, "items": []}))]

    def async_nodes():
        import asyncio

        async def anode(s):
            return {"a": s["a"] + 1}

        async def apath(s):
            return m.END if s["a"] > 2 else "anode"

        g = m.StateGraph(S)
        g.add_node(anode)
        g.add_edge(m.START, "anode")
        g.add_conditional_edges("anode", apath)
        return asyncio.run(g.compile().ainvoke({"a": 0, "items": []}))

    def bad_return():
        g = m.StateGraph(S)
        g.add_node("x", lambda s: [1])
        g.add_edge(m.START, "x")
        try:
            g.compile().invoke({"a": 0})
        except Exception as exc:  # noqa: BLE001 - compared across libraries
            return (type(exc).__name__, str(exc))

    return {k: v for k, v in locals().items() if k != "m"}


@pytest.mark.parametrize("case", sorted(_smoke_cases(L.__new__(L))))
def test_smoke_invoke_matches_reference(libs: dict[str, L], case: str) -> None:
    # parallel tasks' update chunks come in finish order on both libraries: a long switch
    # interval lets each (tiny) task finish before another thread runs, on a loaded machine too
    before = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        results = [repr(_smoke_cases(libs[lib])[case]()) for lib in LIBS]
    finally:
        sys.setswitchinterval(before)
    assert results[1] == results[0]


SCHEMA_BUILDERS = [
    build_linear,
    build_schemas,
    build_dataclass,
    build_pydantic,
    build_root,
    build_root_int,
    build_partial,
]


@pytest.mark.parametrize("build", SCHEMA_BUILDERS, ids=lambda f: f.__name__)
def test_json_schemas_match_reference(libs: dict[str, L], build: Any) -> None:
    schemas = []
    for lib in LIBS:
        compiled = build(libs[lib])
        schemas.append((compiled.get_input_jsonschema(), compiled.get_output_jsonschema()))
    assert schemas[1] == schemas[0]
