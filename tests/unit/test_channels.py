"""warpgraph.channels against langgraph.channels: the same operations must give the same
results, checkpoints and exceptions (type name + message)."""

from __future__ import annotations

import collections.abc
import copy
import operator
from collections.abc import Sequence
from typing import Annotated, Any

import langgraph.channels as lg_ch
import langgraph.types as lg_types
import pytest
import warpgraph.channels as wg_ch
import warpgraph.types as wg_types
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph._internal._typing import MISSING as LG_MISSING
from typing_extensions import NotRequired, Required
from warpgraph._internal._fields import check_reducer_arity
from warpgraph._internal._typing import MISSING as WG_MISSING
from warpgraph.errors import EmptyChannelError, InvalidUpdateError

_MISSING_TOKEN = "<MISSING>"


class OW:
    """Library-neutral Overwrite token, converted per library before `update`."""

    def __init__(self, value: Any, form: str = "class") -> None:
        self.value, self.form = value, form

    def to(self, types_mod: Any) -> Any:
        if self.form == "class":
            return types_mod.Overwrite(self.value)
        if self.form == "dict":
            return {"__overwrite__": self.value}
        return {"type": "__overwrite__", "value": self.value}

    def __repr__(self) -> str:
        return f"OW({self.value!r}, {self.form!r})"


def _convert(values: Sequence[Any], types_mod: Any) -> list[Any]:
    return [v.to(types_mod) if isinstance(v, OW) else v for v in values]


def _norm(x: Any) -> Any:
    """Comparable form: MISSING of either library -> token; tuples/lists/sets recursively."""
    if x is LG_MISSING or x is WG_MISSING:
        return _MISSING_TOKEN
    if isinstance(x, (lg_types.Overwrite, wg_types.Overwrite)):
        return ("Overwrite", _norm(x.value), x.type)
    if isinstance(x, tuple):
        return ("tuple", *(_norm(i) for i in x))
    if isinstance(x, list):
        return [_norm(i) for i in x]
    return x


def _outcome(fn: Any) -> Any:
    try:
        return ("ok", _norm(fn()))
    except Exception as exc:  # noqa: BLE001 - compared by type name and message
        return ("raise", type(exc).__name__, str(exc))


class Pair:
    """The same channel built in both libraries; `do` runs one op on both and compares."""

    def __init__(self, name: str, *args: Any, key: str = "k") -> None:
        self.lg = getattr(lg_ch, name)(*args)
        self.wg = getattr(wg_ch, name)(*args)
        self.lg.key = self.wg.key = key

    def do(self, op: str, arg: Any = None) -> Any:
        if op == "update":
            lg = _outcome(lambda: self.lg.update(_convert(arg, lg_types)))
            wg = _outcome(lambda: self.wg.update(_convert(arg, wg_types)))
        elif op in ("roundtrip", "copy", "cross"):
            if op == "roundtrip":
                self.lg = self.lg.from_checkpoint(self.lg.checkpoint())
                self.wg = self.wg.from_checkpoint(self.wg.checkpoint())
            elif op == "copy":
                self.lg, self.wg = self.lg.copy(), self.wg.copy()
            else:  # restore each from a copy of the other library's checkpoint
                lg_cp, wg_cp = self.lg.checkpoint(), self.wg.checkpoint()
                to_lg = LG_MISSING if wg_cp is WG_MISSING else copy.deepcopy(wg_cp)
                to_wg = WG_MISSING if lg_cp is LG_MISSING else copy.deepcopy(lg_cp)
                self.lg, self.wg = self.lg.from_checkpoint(to_lg), self.wg.from_checkpoint(to_wg)
            lg = wg = ("ok", None)
        else:
            lg = _outcome(getattr(self.lg, op))
            wg = _outcome(getattr(self.wg, op))
        assert wg == lg, (op, arg)
        self.check_state()
        return wg

    def check_state(self) -> None:
        for op in ("checkpoint", "is_available", "get"):
            assert _outcome(getattr(self.wg, op)) == _outcome(getattr(self.lg, op)), op
        assert self.wg.key == self.lg.key


# ---------------------------------------------------------------- scenario tests


def test_last_value() -> None:
    p = Pair("LastValue", int)
    assert p.do("get")[0] == "raise"
    assert p.do("update", []) == ("ok", False)
    assert p.do("update", [5]) == ("ok", True)
    assert p.do("get") == ("ok", 5)
    res = p.do("update", [6, 7])
    assert res[:2] == ("raise", "InvalidUpdateError")
    assert "INVALID_CONCURRENT_GRAPH_UPDATE" in res[2]
    p.do("roundtrip")
    p.do("update", [None])
    assert p.do("get") == ("ok", None)


def test_last_value_after_finish() -> None:
    p = Pair("LastValueAfterFinish", int)
    assert p.do("finish") == ("ok", False)
    p.do("update", [1, 2, 3])
    assert p.do("is_available") == ("ok", False)
    assert p.do("consume") == ("ok", False)
    assert p.do("finish") == ("ok", True)
    assert p.do("get") == ("ok", 3)
    p.do("roundtrip")
    assert p.do("finish") == ("ok", False)
    assert p.do("consume") == ("ok", True)
    assert p.do("checkpoint") == ("ok", _MISSING_TOKEN)


def test_ephemeral_value() -> None:
    for guard in (True, False):
        p = Pair("EphemeralValue", int, guard)
        p.do("update", [1])
        assert p.do("update", []) == ("ok", True)
        assert p.do("update", []) == ("ok", False)
        p.do("update", [1, 2])
        p.do("roundtrip")


def test_untracked_value() -> None:
    for guard in (True, False):
        p = Pair("UntrackedValue", int, guard)
        p.do("update", [1])
        assert p.do("checkpoint") == ("ok", _MISSING_TOKEN)
        p.do("update", [3, 4])
        p.do("roundtrip")
        assert p.do("is_available") == ("ok", False)


def test_any_value() -> None:
    p = Pair("AnyValue", int)
    p.do("update", [1, 1])
    assert p.do("update", []) == ("ok", True)
    assert p.do("update", []) == ("ok", False)


def test_topic() -> None:
    for accumulate in (False, True):
        p = Pair("Topic", str, accumulate)
        p.do("update", ["a", ["b", "c"], []])
        p.do("update", [])
        p.do("update", [["d"], "e"])
        p.do("roundtrip")
        p.do("update", [("x", "y")])  # tuples are not flattened
        p.do("copy")


def test_topic_legacy_tuple_checkpoint() -> None:
    lg = lg_ch.Topic(int).from_checkpoint((set(), [1, 2]))
    wg = wg_ch.Topic(int).from_checkpoint((set(), [1, 2]))
    assert wg.get() == lg.get() == [1, 2]


@pytest.mark.parametrize("name", ["NamedBarrierValue", "NamedBarrierValueAfterFinish"])
def test_named_barriers(name: str) -> None:
    p = Pair(name, str, {"a", "b"})
    p.do("update", ["a"])
    assert p.do("update", ["a"]) == ("ok", False)
    res = p.do("update", ["z"])
    assert res[:2] == ("raise", "InvalidUpdateError")
    p.do("update", ["b"])
    p.do("consume")
    p.do("update", ["a", "b"])
    p.do("finish")
    p.do("roundtrip")
    p.do("consume")
    p.do("finish")


@pytest.mark.parametrize(
    "typ",
    [
        int,
        list,
        list[int],
        Annotated[list[int], "meta"],
        NotRequired[list[int]],
        Annotated[NotRequired[list[int]], "x"],
        collections.abc.Sequence,
        collections.abc.MutableSequence,
        Sequence[int],
        collections.abc.Set,
        collections.abc.MutableSet,
        collections.abc.Mapping,
        collections.abc.MutableMapping,
        dict[str, int],
        Any,
        "NotAType",
    ],
)
def test_binop_initial_value(typ: Any) -> None:
    reducer = operator.add
    lg = lg_ch.BinaryOperatorAggregate(typ, reducer)
    wg = wg_ch.BinaryOperatorAggregate(typ, reducer)
    assert _norm(wg.value) == _norm(lg.value)
    assert type(wg.value) is type(lg.value) or (lg.value is LG_MISSING and wg.value is WG_MISSING)
    assert wg.is_available() == lg.is_available()
    assert wg.typ is typ and wg.operator is reducer


def test_binop_updates_and_overwrite() -> None:
    p = Pair("BinaryOperatorAggregate", list, operator.add)
    p.do("update", [[1], [2, 3]])
    p.do("update", [OW([9])])
    p.do("update", [[1], OW([5], "dict"), [7]])  # writes after an overwrite are dropped
    p.do("update", [OW([1], "json"), [2]])
    res = p.do("update", [OW([1]), OW([2], "dict")])
    assert res[:2] == ("raise", "InvalidUpdateError")
    p.do("update", [{"__overwrite__": 1, "other": 2}])  # not an overwrite: folded
    p.do("roundtrip")


def test_binop_missing_initial_takes_first_write_raw() -> None:
    p = Pair("BinaryOperatorAggregate", "NotAType", operator.add)
    assert p.do("is_available") == ("ok", False)
    p.do("update", [OW(3)])  # first write stored as is, even an Overwrite
    assert isinstance(p.wg.value, wg_types.Overwrite)
    p = Pair("BinaryOperatorAggregate", "NotAType", operator.add)
    p.do("update", [1, 2, OW(10), 4])


def test_binop_reducer_error_propagates() -> None:
    def bad(a: Any, b: Any) -> Any:
        raise KeyError("boom")

    p = Pair("BinaryOperatorAggregate", int, bad)
    assert p.do("update", [1]) == ("raise", "KeyError", "'boom'")


def test_binop_equality() -> None:
    def f(a: Any, b: Any) -> Any:
        return a

    lam = lambda a, b: a
    for a, b in [(f, f), (f, operator.add), (lam, operator.add), (operator.add, lam)]:
        lg = lg_ch.BinaryOperatorAggregate(int, a) == lg_ch.BinaryOperatorAggregate(int, b)
        wg = wg_ch.BinaryOperatorAggregate(int, a) == wg_ch.BinaryOperatorAggregate(int, b)
        assert wg == lg


def test_channel_equality_rules() -> None:
    cases = [
        ("LastValue", (int,), (str,)),
        ("AnyValue", (int,), (str,)),
        ("EphemeralValue", (int, True), (int, False)),
        ("UntrackedValue", (int, True), (int, False)),
        ("Topic", (int, False), (int, True)),
        ("NamedBarrierValue", (str, {"a"}), (str, {"b"})),
        ("NamedBarrierValueAfterFinish", (str, {"a"}), (str, {"a"})),
        ("LastValueAfterFinish", (int,), (str,)),
    ]
    for name, a, b in cases:
        lg_cls, wg_cls = getattr(lg_ch, name), getattr(wg_ch, name)
        assert (wg_cls(*a) == wg_cls(*b)) == (lg_cls(*a) == lg_cls(*b)), name
        assert (wg_cls(*a) == 1) == (lg_cls(*a) == 1)


def test_value_and_update_types() -> None:
    cases = [
        ("LastValue", (int,)),
        ("Topic", (int,)),
        ("EphemeralValue", (int,)),
        ("BinaryOperatorAggregate", (list, operator.add)),
        ("NamedBarrierValue", (str, {"a"})),
    ]
    for name, args in cases:
        lg, wg = getattr(lg_ch, name)(*args), getattr(wg_ch, name)(*args)
        assert wg.ValueType == lg.ValueType and wg.UpdateType == lg.UpdateType


def test_slots_and_engine_attributes() -> None:
    for name in wg_ch.__all__:
        cls = getattr(wg_ch, name)
        assert "__dict__" not in dir(cls) or name == "BaseChannel", name
    assert wg_ch.EphemeralValue(int, False).guard is False
    assert wg_ch.UntrackedValue(int).guard is True
    assert wg_ch.Topic(int, True).accumulate is True
    assert wg_ch.NamedBarrierValue(str, {"a"}).names == {"a"}
    assert wg_ch.NamedBarrierValueAfterFinish(str, {"a"}).finished is False
    assert wg_ch.LastValue(int).value is WG_MISSING
    assert wg_ch.Topic(int).values == []
    with pytest.raises(AttributeError):
        wg_ch.LastValue(int).other = 1
    with pytest.raises(TypeError):
        wg_ch.BaseChannel(int)  # abstract


def test_empty_channel_error_class() -> None:
    with pytest.raises(EmptyChannelError):
        wg_ch.LastValue(int).get()
    with pytest.raises(InvalidUpdateError):
        wg_ch.LastValue(int).update([1, 2])


def test_reducer_arity_check_matches_reference() -> None:
    from langgraph.graph.state import _is_field_binop

    def two(a, b): ...
    def three(a, b, c): ...
    def kw(a, *, b): ...
    def varargs(*a): ...
    def with_default(a, b, c=1): ...

    for fn in (two, three, kw, varargs, with_default, operator.add):
        try:
            _is_field_binop(Annotated[list, fn])
            expected = None
        except ValueError as exc:
            expected = str(exc)
        try:
            check_reducer_arity(fn)
            got = None
        except ValueError as exc:
            got = str(exc)
        assert got == expected, fn


# ---------------------------------------------------------------- random sequences

_INT = st.integers(-3, 3)


def _picky_add(a: int, b: int) -> int:
    """A reducer that fails on some inputs (its exception must propagate unchanged)."""
    if b == 3:
        raise ValueError(f"refusing {a} + {b}")
    return a + b


_CHANNELS: dict[str, tuple[tuple, Any]] = {
    "LastValue": ((int,), _INT),
    "LastValueAfterFinish": ((int,), _INT),
    "EphemeralValue": ((int,), _INT),
    "EphemeralValue-noguard": ((int, False), _INT),
    "UntrackedValue": ((int,), _INT),
    "UntrackedValue-noguard": ((int, False), _INT),
    "AnyValue": ((int,), _INT),
    "Topic": ((int,), st.one_of(_INT, st.lists(_INT, max_size=2))),
    "Topic-acc": ((int, True), st.one_of(_INT, st.lists(_INT, max_size=2))),
    "NamedBarrierValue": ((str, {"a", "b"}), st.sampled_from("abc")),
    "NamedBarrierValueAfterFinish": ((str, {"a", "b"}), st.sampled_from("abc")),
    "BinaryOperatorAggregate": (
        (list, operator.add),
        st.one_of(
            st.lists(_INT, max_size=2),
            st.builds(OW, st.lists(_INT, max_size=2), st.sampled_from(["class", "dict", "json"])),
        ),
    ),
    "BinaryOperatorAggregate-int": (
        (int, operator.add),
        st.one_of(_INT, st.builds(OW, _INT, st.sampled_from(["class", "dict"]))),
    ),
    "BinaryOperatorAggregate-raising": ((int, _picky_add), st.one_of(_INT, st.builds(OW, _INT))),
    "BinaryOperatorAggregate-missing": (
        ("NotAType", operator.add),
        st.one_of(_INT, st.builds(OW, _INT)),
    ),
}


@st.composite
def _scenario(draw: Any) -> tuple[str, list]:
    name = draw(st.sampled_from(sorted(_CHANNELS)))
    _, values = _CHANNELS[name]
    ops = st.one_of(
        st.tuples(st.just("update"), st.lists(values, max_size=3)),
        st.tuples(st.sampled_from(["consume", "finish", "roundtrip", "copy", "cross"]), st.none()),
    )
    return name, draw(st.lists(ops, max_size=12))


@settings(max_examples=300, deadline=None)
@given(_scenario())
def test_random_operation_sequences(scenario: tuple[str, list]) -> None:
    name, ops = scenario
    args, _ = _CHANNELS[name]
    pair = Pair(name.split("-")[0], *args)
    for op, arg in ops:
        pair.do(op, arg)


# ---------------------------------------------------------------- LangGraph's channel-test scenarios
# Each scenario runs against a library namespace and returns a trace; both traces must match.


def _lib(which: str) -> Any:
    import langgraph.errors as lg_err
    import warpgraph.errors as wg_err

    if which == "lg":
        return lg_ch, LG_MISSING, lg_err
    return wg_ch, WG_MISSING, wg_err


def _try(fn: Any) -> Any:
    try:
        return ("ok", _norm(fn()))
    except Exception as exc:  # noqa: BLE001 - compared by type name and message
        return ("raise", type(exc).__name__, str(exc))


def _scenario_last_value(which: str) -> list:
    ch, missing, _ = _lib(which)
    c = ch.LastValue(int).from_checkpoint(missing)
    trace = [c.ValueType is int, c.UpdateType is int, _try(c.get), _try(lambda: c.update([5, 6]))]
    c.update([3])
    trace.append(c.get())
    c.update([4])
    c = ch.LastValue(int).from_checkpoint(c.checkpoint())
    return [*trace, c.get()]


def _scenario_topic(which: str, accumulate: bool) -> list:
    ch, missing, _ = _lib(which)
    c = ch.Topic(str, accumulate=accumulate).from_checkpoint(missing)
    trace: list = [c.ValueType == Sequence[str], c.UpdateType == str | list[str]]
    for values in (["a", "b"], [["c", "d"], "d"], [], [], ["e"]):
        trace += [c.update(values), _try(c.get)]
    checkpoint = c.checkpoint()
    c = ch.Topic(str, accumulate=accumulate).from_checkpoint(checkpoint)
    twin = ch.Topic(str, accumulate=accumulate).from_checkpoint(checkpoint)
    twin.update(["f"])  # with accumulate the restored channels share the checkpoint list
    return [*trace, _try(twin.get), _try(c.get)]


def _scenario_binop(which: str) -> list:
    ch, missing, _ = _lib(which)
    c = ch.BinaryOperatorAggregate(int, operator.add).from_checkpoint(missing)
    trace = [c.ValueType is int, c.UpdateType is int, c.get()]
    c.update([1, 2, 3])
    trace.append(c.get())
    c.update([4])
    c = ch.BinaryOperatorAggregate(int, operator.add).from_checkpoint(c.checkpoint())
    trace.append(c.get())
    wrapped = ch.BinaryOperatorAggregate(Required[Annotated[int, "meta"]], operator.add)
    return [*trace, _try(wrapped.get)]


def _scenario_untracked(which: str) -> list:
    ch, missing, _ = _lib(which)
    c = ch.UntrackedValue(dict).from_checkpoint(missing)
    trace = [c.ValueType is dict, c.UpdateType is dict, _try(c.get)]
    for data in ({"session": "test"}, {"session": "updated"}):
        c.update([data])
        trace.append(c.get())
    checkpoint = c.checkpoint()
    trace.append(checkpoint is missing)
    return [*trace, _try(ch.UntrackedValue(dict).from_checkpoint(checkpoint).get)]


@pytest.mark.parametrize(
    "scenario",
    [
        _scenario_last_value,
        lambda w: _scenario_topic(w, False),
        lambda w: _scenario_topic(w, True),
        _scenario_binop,
        _scenario_untracked,
    ],
)
def test_reference_scenarios(scenario: Any) -> None:
    assert scenario("wg") == scenario("lg")
