"""warpgraph.types / warpgraph.errors against langgraph.types / langgraph.errors."""

from __future__ import annotations

import dataclasses
import sys
import types as pytypes
import warnings
from datetime import timedelta
from typing import Any

import langgraph.errors as lg_err
import langgraph.types as lg
import pytest
import warpgraph.errors as wg_err
import warpgraph.types as wg
from langgraph._internal._scratchpad import PregelScratchpad as LgScratchpad
from warpgraph._internal._scratchpad import PregelScratchpad as WgScratchpad

# ---------------------------------------------------------------- errors

_ERROR_NAMES = [
    "GraphBubbleUp",
    "GraphDrained",
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphInterrupt",
    "NodeInterrupt",
    "ParentCommand",
    "EmptyInputError",
    "TaskNotFound",
    "UnknownInterruptError",
    "EmptyChannelError",
    "NodeCancelledError",
    "NodeTimeoutError",
]


def test_error_exports_match() -> None:
    assert set(wg_err.__all__) == set(lg_err.__all__)


def test_error_hierarchy_matches() -> None:
    builtin = (Exception, RecursionError, BaseException)
    for a in _ERROR_NAMES:
        for b in _ERROR_NAMES:
            assert issubclass(getattr(wg_err, a), getattr(wg_err, b)) == issubclass(
                getattr(lg_err, a), getattr(lg_err, b)
            ), (a, b)
        for base in builtin:
            assert issubclass(getattr(wg_err, a), base) == issubclass(getattr(lg_err, a), base)


def test_error_codes_and_message() -> None:
    assert [(c.name, c.value) for c in wg_err.ErrorCode] == [
        (c.name, c.value) for c in lg_err.ErrorCode
    ]
    for code in lg_err.ErrorCode:
        assert wg_err.create_error_message(
            message="boom", error_code=wg_err.ErrorCode[code.name]
        ) == lg_err.create_error_message(message="boom", error_code=code)


def _outcome(make: Any) -> Any:
    try:
        exc = make()
    except Exception as raised:  # noqa: BLE001 - compared
        return ("raise", type(raised).__name__, str(raised))
    attrs = {
        k: getattr(exc, k)
        for k in (
            "reason",
            "node",
            "elapsed",
            "kind",
            "timeout",
            "idle_timeout",
            "run_timeout",
            "interrupt_ids",
            "pending_ids",
        )
        if hasattr(exc, k)
    }
    return ("ok", type(exc).__name__, str(exc), repr(exc.args), attrs)


@pytest.mark.parametrize(
    "name,args,kwargs",
    [
        ("GraphDrained", (), {}),
        ("GraphDrained", ("sigterm",), {}),
        ("GraphRecursionError", ("limit",), {}),
        ("InvalidUpdateError", ("bad",), {}),
        ("EmptyInputError", (), {}),
        ("TaskNotFound", ("t",), {}),
        ("EmptyChannelError", (), {}),
        ("NodeCancelledError", ("n",), {}),
        ("NodeCancelledError", ("n", "custom"), {}),
        ("NodeTimeoutError", ("n", 1.23456), {"kind": "idle", "idle_timeout": 0.5}),
        ("NodeTimeoutError", ("n", 2.0), {"kind": "run", "run_timeout": 1.0, "idle_timeout": 3}),
        ("NodeTimeoutError", ("n", 2.0), {"kind": "idle"}),
        ("NodeTimeoutError", ("n", 2.0), {"kind": "run"}),
        ("NodeTimeoutError", ("n", 2.0), {"kind": "other"}),
        ("UnknownInterruptError", ("m",), {"reason": "ambiguous", "pending_ids": ["a", "b"]}),
        ("UnknownInterruptError", ("m",), {"reason": "not_pending", "interrupt_ids": ("x",)}),
        ("GraphInterrupt", (), {}),
        ("GraphBubbleUp", (), {}),
    ],
)
def test_error_constructors(name: str, args: tuple, kwargs: dict) -> None:
    got = _outcome(lambda: getattr(wg_err, name)(*args, **kwargs))
    want = _outcome(lambda: getattr(lg_err, name)(*args, **kwargs))
    assert got == want


def test_graph_interrupt_and_parent_command_args() -> None:
    wg_i = wg.Interrupt("v", "id1")
    assert wg_err.GraphInterrupt((wg_i,)).args == ((wg_i,),)
    cmd = wg.Command(goto="x", graph=wg.Command.PARENT)
    assert wg_err.ParentCommand(cmd).args == (cmd,)


def test_node_interrupt_deprecated() -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        exc = wg_err.NodeInterrupt("v")
        wg_err.NodeInterrupt("v", id="abc")
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        ref = lg_err.NodeInterrupt("v")
    assert str(got[0].message) == str(want[0].message)
    assert all(issubclass(w.category, DeprecationWarning) for w in got)
    assert repr(exc.args[0]) == repr(ref.args[0])


def test_node_error_and_invalid_resume() -> None:
    err = wg_err.NodeError(node="n", error=ValueError("x"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        err.node = "m"  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(err)] == [
        f.name for f in dataclasses.fields(lg_err.NodeError)
    ]
    exc = ValueError("x")
    assert not wg_err.is_invalid_resume(exc)
    wg_err._mark_invalid_resume(exc)
    assert wg_err.is_invalid_resume(exc) and lg_err.is_invalid_resume(exc)


# ---------------------------------------------------------------- types: exports, tuples


def test_types_exports_match() -> None:
    assert set(wg.__all__) == set(lg.__all__)
    for name in wg.__all__:
        assert hasattr(wg, name), name


@pytest.mark.parametrize("name", ["StateSnapshot", "PregelTask", "StateUpdate", "CacheKey"])
def test_named_tuples(name: str) -> None:
    ours, ref = getattr(wg, name), getattr(lg, name)
    assert ours._fields == ref._fields
    assert ours._field_defaults == ref._field_defaults


def test_retry_policy_defaults() -> None:
    ours, ref = wg.RetryPolicy(), lg.RetryPolicy()
    assert wg.RetryPolicy._fields == lg.RetryPolicy._fields
    assert ours[:-1] == ref[:-1]
    assert callable(ours.retry_on)


def _http_errors() -> list[BaseException]:
    import httpx
    import requests

    out: list[BaseException] = []
    for status in (404, 500, 503):
        req = httpx.Request("GET", "http://x")
        out.append(
            httpx.HTTPStatusError("e", request=req, response=httpx.Response(status, request=req))
        )
        resp = requests.Response()
        resp.status_code = status
        out.append(requests.HTTPError("e", response=resp))
    out.append(requests.HTTPError("no response"))
    return out


def test_default_retry_on_matches() -> None:
    from langgraph._internal._retry import default_retry_on as ref

    class Custom(Exception):
        pass

    samples = [
        ConnectionError(),
        ConnectionResetError(),
        ValueError(),
        TypeError(),
        KeyError(),
        ZeroDivisionError(),
        OSError(),
        TimeoutError(),
        RuntimeError(),
        NotImplementedError(),
        Custom(),
        Exception(),
        StopIteration(),
        ImportError(),
        NameError(),
        ReferenceError(),
        wg_err.NodeTimeoutError("n", 1.0, kind="run", run_timeout=1.0),
        *_http_errors(),
    ]
    for exc in samples:
        assert wg.default_retry_on(exc) == ref(exc), exc


def test_timeout_policy_coerce() -> None:
    inputs: list[Any] = [
        None,
        1,
        2.5,
        0,
        -1,
        timedelta(seconds=3),
        timedelta(0),
        ("policy", {"run_timeout": 1}),
        ("policy", {"idle_timeout": 2.0}),
        ("policy", {}),
        ("policy", {"run_timeout": 1.0, "refresh_on": "heartbeat"}),
        ("policy", {"run_timeout": 1.0, "refresh_on": "bad"}),
        ("policy", {"idle_timeout": timedelta(seconds=1)}),
    ]
    for item in inputs:

        def run(mod: Any, item: Any = item) -> Any:
            arg = mod.TimeoutPolicy(**item[1]) if isinstance(item, tuple) else item
            try:
                out = mod.TimeoutPolicy.coerce(arg)
            except Exception as exc:  # noqa: BLE001 - compared
                return ("raise", type(exc).__name__, str(exc))
            return None if out is None else (out.run_timeout, out.idle_timeout, out.refresh_on)

        assert run(wg) == run(lg), item
    assert repr(wg.TimeoutPolicy(run_timeout=1.0)) == repr(lg.TimeoutPolicy(run_timeout=1.0))


def test_cache_policy_and_default_key() -> None:
    from langgraph._internal._cache import default_cache_key as ref_key

    assert wg.CachePolicy().ttl is None
    assert wg.CachePolicy().key_func is wg.default_cache_key
    for args, kwargs in [((1, "a"), {}), (({"b": [1, 2], "a": {"x": 1}},), {"k": [3]}), ((), {})]:
        assert wg.default_cache_key(*args, **kwargs) == ref_key(*args, **kwargs)
    with pytest.raises(dataclasses.FrozenInstanceError):
        wg.CachePolicy().ttl = 3  # type: ignore[misc]


def test_pregel_executable_task_fields() -> None:
    ours, ref = (
        dataclasses.fields(wg.PregelExecutableTask),
        dataclasses.fields(lg.PregelExecutableTask),
    )
    assert [(f.name, f.default) for f in ours] == [(f.name, f.default) for f in ref]
    assert wg.PregelExecutableTask.__dataclass_params__.frozen
    # LangGraph slots it from Python 3.11 on; warpgraph always (its lazy task config needs it)
    assert hasattr(wg.PregelExecutableTask, "__slots__")
    if sys.version_info >= (3, 11):
        assert hasattr(lg.PregelExecutableTask, "__slots__")


# ---------------------------------------------------------------- Send / Command / Overwrite


def test_send() -> None:
    cases = [
        ("n", {"a": 1}, None),
        ("n", 1, 2.0),
        ("m", [1], timedelta(seconds=1)),
        ("n", None, None),
    ]
    for node, arg, timeout in cases:
        ours, ref = wg.Send(node, arg, timeout=timeout), lg.Send(node, arg, timeout=timeout)
        assert repr(ours) == repr(ref)
        assert ours == wg.Send(node, arg, timeout=timeout)
        if not isinstance(arg, (dict, list)):
            assert hash(ours) == hash(wg.Send(node, arg, timeout=timeout))
            assert hash(ours) == hash((node, arg, ours.timeout))
    assert wg.Send("a", 1) != wg.Send("a", 2)
    assert wg.Send("a", 1) != wg.Send("a", 1, timeout=1)
    assert wg.Send("a", 1) != ("a", 1)
    assert wg.Send.__slots__ == lg.Send.__slots__
    with pytest.raises(TypeError):
        hash(wg.Send("a", {"x": 1}))
    with pytest.raises(ValueError, match="run_timeout must be greater than 0"):
        wg.Send("a", 1, timeout=0)


def test_command_fields_repr() -> None:
    assert wg.Command.PARENT == lg.Command.PARENT == "__parent__"
    assert [f.name for f in dataclasses.fields(wg.Command)] == [
        f.name for f in dataclasses.fields(lg.Command)
    ]
    kwargs_list: list[dict[str, Any]] = [
        {},
        {"update": {"a": 1}},
        {"goto": "x", "graph": "__parent__"},
        {"resume": {"abc": 1}, "update": [("a", 1)]},
        {"goto": ["a", "b"], "update": 0},
    ]
    for kwargs in kwargs_list:
        assert repr(wg.Command(**kwargs)) == repr(lg.Command(**kwargs))
    assert repr(wg.Command(goto=wg.Send("n", 1))) == repr(lg.Command(goto=lg.Send("n", 1)))
    assert repr(wg.Command(update={"x": wg.Overwrite([1])})) == repr(
        lg.Command(update={"x": lg.Overwrite([1])})
    )
    assert wg.Command(goto="a") == wg.Command(goto="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        wg.Command().goto = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        wg.Command("x")  # type: ignore[misc]  # keyword-only


def test_command_is_tool_output() -> None:
    try:
        from langchain_core.messages.tool import ToolOutputMixin
    except ImportError:
        pytest.skip("langchain_core not installed")
    assert isinstance(wg.Command(), ToolOutputMixin)


def test_command_update_as_tuples() -> None:
    import pydantic

    class Model(pydantic.BaseModel):
        a: int | None = None
        b: int | None = 1
        c: str = "x"

    @dataclasses.dataclass
    class DC:
        x: int
        y: Any = None

    updates: list[Any] = [
        None,
        {"a": 1, "b": 2},
        [("a", 1), ("b", 2)],
        (("a", 1),),
        [("a", 1, 2)],
        [],
        Model(),
        Model(a=None),
        Model(b=None),
        Model(a=3),
        DC(1),
        DC(1, 2),
        5,
        "text",
        [1, 2],
    ]
    for update in updates:
        assert (
            wg.Command(update=update)._update_as_tuples()
            == lg.Command(update=update)._update_as_tuples()
        ), update


def test_overwrite() -> None:
    assert repr(wg.Overwrite([1])) == repr(lg.Overwrite([1]))
    assert wg.Overwrite(1) == wg.Overwrite(1) and wg.Overwrite(1) != wg.Overwrite(2)
    assert dataclasses.asdict(wg.Overwrite(1)) == dataclasses.asdict(lg.Overwrite(1))


# ---------------------------------------------------------------- Interrupt / interrupt()


def test_interrupt_value_type() -> None:
    for ns in ["", "node:abc", "outer:1|inner:2"]:
        assert wg.Interrupt.from_ns("v", ns) == lg.Interrupt.from_ns("v", ns) or (
            repr(wg.Interrupt.from_ns("v", ns)) == repr(lg.Interrupt.from_ns("v", ns))
        )
        assert wg.Interrupt.from_ns("v", ns).id == lg.Interrupt.from_ns("v", ns).id
    for answered in (0, 1, 5):
        assert wg._interrupt_id("a:b", answered) == lg._interrupt_id("a:b", answered)
    assert repr(wg.Interrupt("v")) == repr(lg.Interrupt("v"))
    assert repr(wg.Interrupt(1, "x", response_schema={"t": 1})) == repr(
        lg.Interrupt(1, "x", response_schema={"t": 1})
    )
    assert wg.Interrupt(1, ns=["a", "b"]).id == lg.Interrupt(1, ns=["a", "b"]).id
    assert wg.Interrupt(1, "i") == wg.Interrupt(1, "i")
    assert not hasattr(wg.Interrupt(1), "__dict__")
    with pytest.warns(DeprecationWarning):
        assert wg.Interrupt(1, "q").interrupt_id == "q"


class _Counter:
    def __init__(self) -> None:
        self.n = -1

    def __call__(self) -> int:
        self.n += 1
        return self.n


def _run_interrupt(
    mod: Any,
    scratch_cls: Any,
    config_mod: str,
    resume: list,
    null: list,
    calls: int,
    monkeypatch: pytest.MonkeyPatch,
    schema: Any = None,
) -> tuple[list, list]:
    sent: list = []
    null_box = list(null)

    def get_null_resume(consume: bool = False) -> Any:
        if not null_box:
            return None
        return null_box.pop(0) if consume else null_box[0]

    pad = scratch_cls(
        step=1,
        stop=5,
        call_counter=_Counter(),
        interrupt_counter=_Counter(),
        get_null_resume=get_null_resume,
        resume=list(resume),
        subgraph_counter=_Counter(),
    )
    conf = {
        "configurable": {
            "__pregel_scratchpad": pad,
            "__pregel_send": sent.extend,
            "checkpoint_ns": "node:1234",
        }
    }
    if config_mod not in sys.modules:
        monkeypatch.setitem(sys.modules, config_mod, pytypes.ModuleType(config_mod))
    monkeypatch.setattr(sys.modules[config_mod], "get_config", lambda: conf, raising=False)
    results: list = []
    for i in range(calls):
        try:
            results.append(("ok", repr(mod.interrupt(f"q{i}", response_schema=schema))))
        except Exception as exc:  # noqa: BLE001 - compared
            flagged = lg_err.is_invalid_resume(exc)
            detail = str(exc) if flagged else repr(exc.args)
            results.append(("raise", type(exc).__name__, detail, flagged))
            break
    return results, [(k, list(v)) for k, v in sent]


@pytest.mark.parametrize(
    "resume,null,calls",
    [([], [], 1), (["a"], [], 2), (["a", "b"], [], 2), ([], ["n"], 2), (["a"], ["n"], 3)],
)
def test_interrupt_function(
    resume: list, null: list, calls: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langgraph.config  # noqa: F401

    ours = _run_interrupt(wg, WgScratchpad, "warpgraph.config", resume, null, calls, monkeypatch)
    ref = _run_interrupt(lg, LgScratchpad, "langgraph.config", resume, null, calls, monkeypatch)
    assert ours == ref


def test_scratchpad_fields() -> None:
    assert [f.name for f in dataclasses.fields(WgScratchpad)] == [
        f.name for f in dataclasses.fields(LgScratchpad)
    ]


def test_interrupt_response_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    import langgraph.config  # noqa: F401
    import pydantic

    class Answer(pydantic.BaseModel):
        n: int

    for schema in (Answer, {"type": "object"}, int):
        for resume, null in [
            ([], []),
            ([{"n": "3"}], []),
            ([{"bad": 1}], []),
            ([], [{"n": 1}]),
            (["7"], []),
        ]:
            ours = _run_interrupt(
                wg, WgScratchpad, "warpgraph.config", resume, null, 2, monkeypatch, schema
            )
            ref = _run_interrupt(
                lg, LgScratchpad, "langgraph.config", resume, null, 2, monkeypatch, schema
            )
            assert ours == ref, (schema, resume, null)


def test_xxh3_hexdigest_matches_xxhash() -> None:
    import xxhash

    for text in ["", "a", "node:1234", "outer:1|inner:2|3", "ünïcødé" * 20]:
        data = text.encode()
        assert wg._xxh3_128_hexdigest(data) == xxhash.xxh3_128_hexdigest(data)


def test_interrupt_outside_a_task() -> None:
    def outcome(mod: Any) -> Any:
        try:
            mod.interrupt("x")
        except Exception as exc:  # noqa: BLE001 - compared
            return type(exc).__name__, str(exc)
        return None

    assert outcome(wg) == outcome(lg)


def test_interrupt_with_real_config_context() -> None:
    from warpgraph.config import reset_config_var, set_config_var

    sent: list = []
    pad = WgScratchpad(
        step=0,
        stop=3,
        call_counter=_Counter(),
        interrupt_counter=_Counter(),
        get_null_resume=lambda consume=False: None,
        resume=["yes"],
        subgraph_counter=_Counter(),
    )
    conf = {"__pregel_scratchpad": pad, "__pregel_send": sent.extend, "checkpoint_ns": "n:1"}
    tokens = set_config_var({"configurable": conf})
    try:
        assert wg.interrupt("q") == "yes"
        with pytest.raises(wg_err.GraphInterrupt) as info:
            wg.interrupt("q2")
    finally:
        reset_config_var(tokens)
    assert sent == [("__resume__", ["yes"])]
    assert info.value.args[0][0].id == lg._interrupt_id("n:1", 1)


def test_graph_output() -> None:
    for value in ({"a": 1}, lg.Overwrite(3)):
        ours = wg.GraphOutput(value, (wg.Interrupt(1, "i"),))
        ref = lg.GraphOutput(value, (lg.Interrupt(1, "i"),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for key in ("a", "value", "__interrupt__", "missing"):
                assert (key in ours) == (key in ref)
                try:
                    got: Any = repr(ours[key])
                except KeyError as exc:
                    got = ("KeyError", str(exc))
                try:
                    want: Any = repr(ref[key])
                except KeyError as exc:
                    want = ("KeyError", str(exc))
                assert got == want, key
    with pytest.warns(DeprecationWarning, match="result\\[key\\]"):
        wg.GraphOutput({"a": 1})["a"]


def test_trace_policy() -> None:
    assert [f.name for f in dataclasses.fields(wg.TracePolicy)] == [
        f.name for f in dataclasses.fields(lg.TracePolicy)
    ]
    assert wg.omit_payload({"x": 1}) == lg.omit_payload({"x": 1}) == {}


def test_literal_aliases() -> None:
    from typing import get_args

    for name in ("StreamMode", "Durability", "All"):
        assert get_args(getattr(wg, name)) == get_args(getattr(lg, name)), name
