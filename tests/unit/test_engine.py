"""The native `warpgraph._core.Engine` against LangGraph's own `apply_writes` /
`prepare_next_tasks` / `create_checkpoint` / `should_interrupt` run on LangGraph's channels.

Every scenario is driven on both sides in lock step; tasks (ids, paths, triggers, inputs),
updated channels, channel_versions (with order), versions_seen and checkpointed values must agree,
and errors must have the same type name and message.
"""

from __future__ import annotations

import logging
import operator
from typing import Any

import pytest

pytest.importorskip("langgraph")
_core = pytest.importorskip("warpgraph._core")
if not hasattr(_core, "Engine"):
    pytest.skip("native engine not built", allow_module_level=True)

import langgraph.channels.any_value as lg_any
import langgraph.channels.base as lg_base
import langgraph.channels.binop as lg_binop
import langgraph.channels.ephemeral_value as lg_eph
import langgraph.channels.last_value as lg_last
import langgraph.channels.named_barrier_value as lg_barrier
import langgraph.channels.topic as lg_topic
import langgraph.channels.untracked_value as lg_untracked
import langgraph.pregel._algo as lg_algo
import warpgraph.channels.any_value as wg_any
import warpgraph.channels.base as wg_base
import warpgraph.channels.binop as wg_binop
import warpgraph.channels.ephemeral_value as wg_eph
import warpgraph.channels.last_value as wg_last
import warpgraph.channels.named_barrier_value as wg_barrier
import warpgraph.channels.topic as wg_topic
import warpgraph.channels.untracked_value as wg_untracked
import warpgraph.pregel._engine  # noqa: F401  (calls _core.init)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph import types as lg_types
from langgraph._internal._runnable import RunnableCallable
from langgraph._internal._typing import MISSING as LG_MISSING
from langgraph.pregel._checkpoint import create_checkpoint as lg_create_checkpoint
from langgraph.pregel._read import PregelNode
from langgraph.pregel._utils import get_new_channel_versions
from warpgraph import types as wg_types

PregelTaskWrites = lg_algo.PregelTaskWrites
increment = lg_algo.increment
lg_apply_writes = lg_algo.apply_writes
lg_prepare_next_tasks = lg_algo.prepare_next_tasks
lg_should_interrupt = lg_algo.should_interrupt

CHECKPOINT_ID = "1f1ec509-c5c1-682c-bfff-0123456789ab"


def _custom_counter(base: type) -> type:
    """A user-defined channel (not a built-in class): counts updates, clears on consume."""

    class Counter(base):  # type: ignore[misc,valid-type]
        def __init__(self, typ: Any = int, key: str = "") -> None:
            super().__init__(typ, key)
            self.n = 0
            self.done = False

        @property
        def ValueType(self) -> Any:
            return int

        @property
        def UpdateType(self) -> Any:
            return int

        def from_checkpoint(self, checkpoint: Any) -> Any:
            c = self.__class__(self.typ, self.key)
            if isinstance(checkpoint, tuple):
                c.n, c.done = checkpoint
            return c

        def checkpoint(self) -> Any:
            return (self.n, self.done)

        def update(self, values: Any) -> bool:
            if not values:
                return False
            self.n += len(values)
            return True

        def get(self) -> Any:
            if self.n == 0:
                raise self._empty()
            return self.n

        def is_available(self) -> bool:
            return self.n > 0

        def consume(self) -> bool:
            if self.n >= 3:
                self.n = 0
                return True
            return False

        def finish(self) -> bool:
            if not self.done and self.n:
                self.done = True
                return True
            return False

    return Counter


def _lg_empty() -> Exception:
    from langgraph.errors import EmptyChannelError

    return EmptyChannelError()


def _wg_empty() -> Exception:
    from warpgraph.errors import EmptyChannelError

    return EmptyChannelError()


LGCounter = _custom_counter(lg_base.BaseChannel)
LGCounter._empty = staticmethod(_lg_empty)
WGCounter = _custom_counter(wg_base.BaseChannel)
WGCounter._empty = staticmethod(_wg_empty)


class LGLastSub(lg_last.LastValue):
    """A subclass of a built-in: not an exact type match, so it takes the generic path."""


class WGLastSub(wg_last.LastValue):
    pass


def make_channel(lib: str, kind: str, arg: Any = None) -> Any:
    lg = lib == "lg"
    m = {
        "last": lambda: (lg_last.LastValue if lg else wg_last.LastValue)(object),
        "last_sub": lambda: (LGLastSub if lg else WGLastSub)(object),
        "after_finish": lambda: (
            lg_last.LastValueAfterFinish if lg else wg_last.LastValueAfterFinish
        )(object),
        "ephemeral": lambda: (lg_eph.EphemeralValue if lg else wg_eph.EphemeralValue)(
            object, guard=arg
        ),
        "add_list": lambda: (lg_binop if lg else wg_binop).BinaryOperatorAggregate(
            list, operator.add
        ),
        "add_int": lambda: (lg_binop if lg else wg_binop).BinaryOperatorAggregate(
            int, operator.add
        ),
        "topic": lambda: (lg_topic if lg else wg_topic).Topic(object, accumulate=arg),
        "sends": lambda: (lg_topic if lg else wg_topic).Topic(object, accumulate=False),
        "barrier": lambda: (lg_barrier.NamedBarrierValue if lg else wg_barrier.NamedBarrierValue)(
            str, set(arg)
        ),
        "barrier_after": lambda: (
            lg_barrier.NamedBarrierValueAfterFinish
            if lg
            else wg_barrier.NamedBarrierValueAfterFinish
        )(str, set(arg)),
        "any": lambda: (lg_any.AnyValue if lg else wg_any.AnyValue)(object),
        "untracked": lambda: (lg_untracked.UntrackedValue if lg else wg_untracked.UntrackedValue)(
            object, guard=arg
        ),
        "counter": lambda: (LGCounter if lg else WGCounter)(int),
    }
    return m[kind]()


class S:
    """A Send to translate into each library's own class."""

    def __init__(self, node: str, arg: Any) -> None:
        self.node, self.arg = node, arg


class OW:
    """An Overwrite to translate into each library's own class."""

    def __init__(self, value: Any) -> None:
        self.value = value


def translate(lib: str, v: Any) -> Any:
    types = lg_types if lib == "lg" else wg_types
    if isinstance(v, S):
        return types.Send(v.node, v.arg)
    if isinstance(v, OW):
        return types.Overwrite(v.value)
    return v


def norm(v: Any) -> Any:
    """Library-neutral form of a value for comparison."""
    if isinstance(v, (lg_types.Send, wg_types.Send)):
        return ("Send", v.node, norm(v.arg))
    if isinstance(v, (lg_types.Overwrite, wg_types.Overwrite)):
        return ("Overwrite", norm(v.value))
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, tuple):
        return tuple(norm(x) for x in v)
    if isinstance(v, (set, frozenset)):
        return ("set", list(v))  # iteration order matters: it is what gets serialised
    return v


def err_key(e: BaseException) -> tuple[str, str]:
    return (type(e).__name__, str(e))


def str_version(cur: Any, _: Any) -> str:
    n = 0 if cur is None else int(cur.split(".")[0])
    return f"{n + 1:032}.{0.5:016}"


class Twin:
    """One graph driven on LangGraph's functions and on our Engine in lock step."""

    def __init__(
        self, channels: dict[str, tuple[str, Any]], nodes: dict[str, tuple[list[str], Any]]
    ):
        self.defs = channels
        self.nodes = nodes
        lg_specs = {}
        wg_specs = {}
        for name, (kind, arg) in channels.items():
            lg_specs[name] = make_channel("lg", kind, arg)
            wg_specs[name] = make_channel("wg", kind, arg)
            lg_specs[name].key = name
            wg_specs[name].key = name
        self.lg_specs = lg_specs
        self.spec = _core.GraphSpec(wg_specs, {k: (list(t), r) for k, (t, r) in nodes.items()})
        # Names that are not channels are managed values, which the loop (not the engine) adds.
        self.procs = {
            k: PregelNode(
                triggers=list(t),
                channels=r if isinstance(r, str) else [c for c in r if c in channels],
                bound=RunnableCallable(lambda x: x),
            )
            for k, (t, r) in nodes.items()
        }
        self.t2n: dict[str, list[str]] = {}
        for k, (t, _) in nodes.items():
            for c in t:
                self.t2n.setdefault(c, []).append(k)
        self.load(None)

    def load(self, checkpoint: tuple[dict, dict] | None) -> None:
        """(Re)start both sides from a pair of checkpoints (LangGraph's, ours)."""
        if checkpoint is None:
            self.cp = {
                "v": 4,
                "id": CHECKPOINT_ID,
                "ts": "",
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
            }
            ours = None
        else:
            self.cp, ours = checkpoint
            self.cp = {**self.cp, "id": CHECKPOINT_ID}
        self.lg_channels = {
            k: s.from_checkpoint(self.cp["channel_values"].get(k, LG_MISSING))
            for k, s in self.lg_specs.items()
        }
        self.lg_updated = set(self.cp.get("updated_channels") or ())
        self.engine = _core.Engine(self.spec, ours)

    def prepare(self, step: int, parent_ns: str = "", v: int = 4) -> list[tuple]:
        self.cp["v"] = v
        lg_err = ours_err = None
        try:
            lg = lg_prepare_next_tasks(
                self.cp,
                [],
                self.procs,
                self.lg_channels,
                {},
                {"configurable": {"checkpoint_ns": parent_ns}},
                step,
                step + 100,
                for_execution=True,
                trigger_to_nodes=self.t2n,
                updated_channels=self.lg_updated,
            )
            lg_tasks = [
                (t.id, t.name, t.path[:3], tuple(t.triggers), norm(t.input)) for t in lg.values()
            ]
        except Exception as e:  # noqa: BLE001
            lg_err = err_key(e)
        try:
            ours = self.engine.prepare_next_tasks(CHECKPOINT_ID, parent_ns, step, v)
            our_tasks = [(i, n, p[:3], tr, norm(inp)) for i, n, p, tr, inp in ours]
        except Exception as e:  # noqa: BLE001
            ours_err = err_key(e)
        assert ours_err == lg_err
        if lg_err:
            return []
        assert our_tasks == lg_tasks
        # Our PUSH paths carry LangGraph's trailing False (the executable task path).
        for (_, _, p, _, _), t in zip(ours, lg.values()):
            assert p == t.path
        return ours

    def apply(
        self, tasks: list[tuple[str, tuple, list[str], list[tuple[str, Any]]]], next_version: Any
    ) -> bool:
        """Apply on both sides; returns False when both raised the same error."""
        lg_tasks = [
            PregelTaskWrites(path, name, [(c, translate("lg", v)) for c, v in writes], triggers)
            for name, path, triggers, writes in tasks
        ]
        our_tasks = [
            (name, path, triggers, [(c, translate("wg", v)) for c, v in writes])
            for name, path, triggers, writes in tasks
        ]
        lg_next = increment if next_version == "int" else next_version
        lg_err = ours_err = None
        try:
            lg_up = lg_apply_writes(self.cp, self.lg_channels, lg_tasks, lg_next, self.t2n)
        except Exception as e:  # noqa: BLE001
            lg_err = err_key(e)
        try:
            our_up = self.engine.apply_writes(our_tasks, next_version)
        except Exception as e:  # noqa: BLE001
            ours_err = err_key(e)
        assert ours_err == lg_err
        if lg_err:
            return False
        assert our_up == sorted(lg_up)
        assert self.engine.updated_channels() == sorted(lg_up)
        self.lg_updated = lg_up
        self.compare()
        return True

    def compare(self) -> None:
        assert list(self.engine.channel_versions().items()) == list(
            self.cp["channel_versions"].items()
        )
        seen = self.engine.versions_seen()
        assert list(seen) == list(self.cp["versions_seen"])
        for k, v in self.cp["versions_seen"].items():
            assert list(seen[k].items()) == list(v.items())
        lg_cp = lg_create_checkpoint(
            self.cp, self.lg_channels, 0, id=CHECKPOINT_ID, updated_channels=self.lg_updated
        )
        ours = self.engine.create_checkpoint(CHECKPOINT_ID, lg_cp["ts"], sorted(self.lg_updated))
        assert list(ours) == list(lg_cp)
        assert norm(ours["channel_values"]) == norm(lg_cp["channel_values"])
        assert list(ours["channel_values"]) == list(lg_cp["channel_values"])
        assert ours["updated_channels"] == lg_cp["updated_channels"]
        for k in self.defs:
            assert self.engine.is_available(k) == self.lg_channels[k].is_available()

    def resume(self) -> None:
        """The loop's resume bookkeeping (`_first`), on both sides."""
        self.engine.mark_interrupt_seen()
        seen = self.cp["versions_seen"].setdefault("__interrupt__", {})
        for k in self.lg_channels:
            if k in self.cp["channel_versions"]:
                seen[k] = self.cp["channel_versions"][k]
        self.compare()

    def check_interrupt(self, nodes: Any, tasks: list[tuple[str, bool]]) -> None:
        class T:
            def __init__(self, name: str, hidden: bool) -> None:
                self.name = name
                self.config = {"tags": ["langsmith:hidden"] if hidden else []}

        lg = bool(lg_should_interrupt(self.cp, nodes, [T(n, h) for n, h in tasks]))
        assert self.engine.should_interrupt(nodes, tasks) == lg

    def reload(self) -> None:
        """Round-trip both sides through their checkpoints."""
        lg_cp = lg_create_checkpoint(
            self.cp, self.lg_channels, 0, id=CHECKPOINT_ID, updated_channels=self.lg_updated
        )
        lg_cp["versions_seen"] = {k: dict(v) for k, v in lg_cp["versions_seen"].items()}
        ours = self.engine.create_checkpoint(CHECKPOINT_ID, "ts", sorted(self.lg_updated))
        self.load((lg_cp, ours))
        self.compare()


STATE = {
    "__start__": ("ephemeral", True),
    "a": ("last", None),
    "items": ("add_list", None),
    "branch:to:n1": ("ephemeral", False),
    "branch:to:n2": ("ephemeral", False),
    "join:n1+n2:n3": ("barrier", {"n1", "n2"}),
    "branch:to:late": ("after_finish", None),
    "__pregel_tasks": ("sends", None),
}
NODES = {
    "__start__": (["__start__"], "__start__"),
    "n1": (["branch:to:n1"], ["a", "items"]),
    "n2": (["branch:to:n2"], ["a", "items"]),
    "n3": (["join:n1+n2:n3"], ["a", "items"]),
    "late": (["branch:to:late"], ["a", "items", "missing_managed"]),
    "worker": ([], ["a"]),
}


def run_task(t: tuple, writes: list[tuple[str, Any]]) -> tuple:
    _id, name, path, triggers, _ = t
    return (name, path, list(triggers), writes)


@pytest.mark.parametrize("next_version", ["int", str_version])
@pytest.mark.parametrize("v", [4, 1])
def test_fan_out_join_defer_and_sends(next_version: Any, v: int) -> None:
    tw = Twin(STATE, NODES)
    assert tw.prepare(-1, v=v) == []  # no versions: no tasks
    assert tw.apply([("__input__", (), [], [("__start__", {"a": "s"})])], next_version)
    (start,) = tw.prepare(0, v=v)
    assert tw.apply(
        [run_task(start, [("a", "s0"), ("branch:to:n1", None), ("branch:to:n2", None)])],
        next_version,
    )
    tasks = tw.prepare(1, v=v)
    assert [t[1] for t in tasks] == ["n1", "n2"]
    assert tw.apply(
        [
            run_task(
                tasks[1], [("items", ["n2"]), ("join:n1+n2:n3", "n2"), ("branch:to:late", None)]
            ),
            run_task(
                tasks[0],
                [
                    ("items", ["n1"]),
                    ("join:n1+n2:n3", "n1"),
                    ("__pregel_tasks", S("worker", {"a": 1})),
                    ("__pregel_tasks", S("worker", {"a": 2})),
                    ("__pregel_tasks", S("nope", {})),
                    ("__pregel_tasks", "not a send"),
                ],
            ),
        ],
        next_version,
    )
    tasks = tw.prepare(2, v=v)
    assert [(t[1], t[2]) for t in tasks] == [
        ("worker", ("__pregel_push", 0, False)),
        ("worker", ("__pregel_push", 1, False)),
        ("n3", ("__pregel_pull", "n3")),
    ]
    assert tw.apply(
        [
            run_task(tasks[0], [("items", ["w0"])]),
            run_task(tasks[1], [("items", ["w1"])]),
            run_task(tasks[2], [("items", [OW(["reset"])])]),
        ],
        next_version,
    )
    tw.reload()
    tasks = tw.prepare(3, v=v)
    assert [t[1] for t in tasks] == ["late"]
    assert tw.apply([run_task(tasks[0], [("__no_writes__", None)])], next_version)
    assert tw.prepare(4, v=v) == []
    assert tw.apply([], next_version)


def test_parent_namespace_and_reload_from_updated_channels() -> None:
    tw = Twin(STATE, NODES)
    tw.apply([("__input__", (), [], [("__start__", {"a": "s"})])], "int")
    tw.reload()
    (start,) = tw.prepare(0, parent_ns="outer:abc")
    assert start[1] == "__start__"


def test_task_order_with_ints_beyond_64_bits() -> None:
    """apply_writes orders tasks by `task_path_str(path)`, whose ints beyond 64 bits are
    written in full (LangGraph: f"{i:010d}"), so their writes land in LangGraph's order."""
    big = 2**70
    tasks = [
        ("n1", ("__pregel_push", big, False), [], [("items", [1])]),
        ("n2", ("__pregel_push", 5, False), [], [("items", [2])]),
        ("n3", ("__pregel_push", -big, (big + 1, True)), [], [("items", [3])]),
        ("n1", ("__pregel_push", [7, -(2**64)], False), [], [("items", [4])]),
    ]
    tw = Twin(STATE, NODES)
    assert tw.apply(tasks, "int")
    # (Twin.apply compared every channel; the order is not the tasks' order)
    assert tw.engine.read("items") == tw.lg_channels["items"].get() != [1, 2, 3, 4]
    for _name, path, _t, _w in tasks:
        assert _core.task_path_str(path) == lg_algo.task_path_str(path)


def test_errors_match_langgraph() -> None:
    tw = Twin(STATE, NODES)
    assert not tw.apply([("x", ("~a",), [], [("a", 1)]), ("y", ("~b",), [], [("a", 2)])], "int")
    tw = Twin(STATE, NODES)
    assert not tw.apply([("x", (), [], [("__start__", 1), ("__start__", 2)])], "int")
    tw = Twin(STATE, NODES)
    assert not tw.apply([("x", (), [], [("items", OW([1])), ("items", OW([2]))])], "int")
    tw = Twin(STATE, NODES)
    assert not tw.apply([("x", (), [], [("join:n1+n2:n3", "zz")])], "int")
    tw = Twin(STATE, NODES)
    assert not tw.apply([("x", (), [], [("items", 5)])], "int")  # list + int: TypeError


def test_reducer_exception_passes_through_untouched() -> None:
    class Boom(Exception):
        pass

    exc = Boom("no")

    def reducer(a: Any, b: Any) -> Any:
        raise exc

    spec = _core.GraphSpec({"x": wg_binop.BinaryOperatorAggregate(int, reducer)}, {})
    e = _core.Engine(spec, None)
    with pytest.raises(Boom) as info:
        e.apply_writes([("t", (), [], [("x", 1)])], "int")
    assert info.value is exc


def test_read_fresh_writes_and_empty_channel() -> None:
    from warpgraph.errors import EmptyChannelError

    tw = Twin(STATE, NODES)
    tw.apply([("__input__", (), [], [("__start__", {"a": "s"}), ("a", "v")])], "int")
    e = tw.engine
    assert e.read("a") == "v"
    assert e.read(["a", "items", "join:n1+n2:n3"]) == {"a": "v", "items": []}
    # Fresh reads update copies: the engine's own state is unchanged.
    assert e.read(["a", "items"], [("items", [1]), ("a", "w"), ("other", 0)]) == {
        "a": "w",
        "items": [1],
    }
    with pytest.raises(EmptyChannelError):
        e.read("__start__", [])  # an ephemeral copy is cleared by the empty update
    assert e.read("a") == "v" and e.read("items") == []
    with pytest.raises(EmptyChannelError):
        e.read("branch:to:n1")
    with pytest.raises(KeyError):
        e.read("nope")
    # In a list, names that are not channels (managed values) are skipped.
    assert e.read(["a", "nope"]) == {"a": "v"}
    assert e.read(["nope", "a"], [("nope", 1), ("a", "w")]) == {"a": "w"}
    for fresh in (None, [("a", "w")]):
        with pytest.raises(TypeError, match="select: expected str, got 3"):
            e.read(["a", 3], fresh)
        with pytest.raises(TypeError, match="select must be a sequence of str"):
            e.read(3, fresh)
    assert e.is_available("a") and not e.is_available("nope")


def test_should_interrupt_and_new_versions() -> None:
    tw = Twin(STATE, NODES)
    tw.apply([("__input__", (), [], [("__start__", {"a": "s"})])], "int")

    check = tw.check_interrupt
    for nodes in ("*", ["n1"], ["__start__"]):
        check(nodes, [("__start__", True)])
        check(nodes, [("n1", False)])
    tw.resume()
    check("*", [("n1", False)])
    prev = tw.engine.channel_versions()
    (start,) = tw.prepare(0)
    tw.apply([run_task(start, [("a", "x"), ("branch:to:n1", None)])], "int")
    check("*", [("n1", False)])
    assert tw.engine.new_versions(prev) == get_new_channel_versions(prev, tw.cp["channel_versions"])
    assert tw.engine.new_versions({}) == get_new_channel_versions({}, tw.cp["channel_versions"])


def test_unknown_channel_write_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    tw = Twin(STATE, NODES)
    with caplog.at_level(logging.WARNING):
        tw.apply([("t", ("~x",), [], [("nowhere", 1), ("a", 1)])], "int")
    assert "wrote to unknown channel nowhere, ignoring it." in caplog.text


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="not a channel"):
        _core.GraphSpec({}, {"n": (["x"], [])})
    spec = _core.GraphSpec({"a": wg_last.LastValue(int)}, {})
    with pytest.raises(TypeError, match="next_version"):
        _core.Engine(spec, None).apply_writes([], 3)
    with pytest.raises(TypeError, match="channel versions"):
        _core.Engine(spec, {"channel_versions": {"a": [1]}})
    with pytest.raises(ValueError):
        _core.Engine(spec, None).prepare_next_tasks("zz", "", 0)


def test_saver_versions_follow_python_random() -> None:
    """Saver ("str") versions use `random.random()` exactly like LangGraph's savers."""
    import random

    from langgraph.checkpoint.memory import InMemorySaver

    spec = _core.GraphSpec({"a": wg_last.LastValue(int)}, {})
    e = _core.Engine(spec, None)
    saver = InMemorySaver()
    expected = None
    for step in range(3):
        random.seed(step)
        e.apply_writes([("t", (), [], [("a", step)])], "str")
        current = expected
        random.seed(step)
        expected = saver.get_next_version(current, None)
        assert e.channel_versions() == {"a": expected}


def test_spec_trigger_index_and_updated_hint() -> None:
    from langgraph.pregel.main import _trigger_to_nodes

    tw = Twin(STATE, NODES)
    assert tw.spec.trigger_to_nodes == _trigger_to_nodes(tw.procs)
    assert list(tw.spec.channels) == list(STATE) and list(tw.spec.nodes) == list(NODES)
    tw.apply([("__input__", (), [], [("__start__", {"a": "s"}), ("a", "x")])], "int")
    assert tw.engine.updated_channels() == ["__start__", "a"]
    # An explicit hint replaces the stored one: "a" triggers nothing, so no task.
    tw.engine.set_updated_channels(["a"])
    assert tw.engine.prepare_next_tasks(CHECKPOINT_ID, "", 0) == []
    tw.engine.set_updated_channels([])  # empty: full scan
    assert [t[1] for t in tw.engine.prepare_next_tasks(CHECKPOINT_ID, "", 0)] == ["__start__"]


def test_saver_string_versions() -> None:
    spec = _core.GraphSpec({"a": wg_last.LastValue(int), "b": wg_last.LastValue(int)}, {})
    e = _core.Engine(spec, None)
    e.apply_writes([("t", (), [], [("a", 1)])], "str")
    (v1,) = e.channel_versions().values()
    n, frac = v1.split(".", 1)
    assert n == f"{1:032}" and 0 <= float(frac) < 1 and len(frac) >= 16
    e.apply_writes([("t", (), ["a"], [("a", 2), ("b", 3)])], "str")
    v = e.channel_versions()
    assert v["a"] == v["b"] and v["a"].startswith(f"{2:032}.") and v["a"] > v1


# --- random sequences -------------------------------------------------------------------

POOL = [
    ("last", None),
    ("last_sub", None),
    ("after_finish", None),
    ("ephemeral", True),
    ("ephemeral", False),
    ("add_list", None),
    ("add_int", None),
    ("topic", False),
    ("topic", True),
    ("barrier", ("p", "q")),
    ("barrier_after", ("p", "q")),
    ("any", None),
    ("untracked", True),
    ("untracked", False),
    ("counter", None),
]


def value_for(data: st.DataObject, kind: str, arg: Any) -> Any:
    if kind == "add_list":
        v = data.draw(st.lists(st.integers(0, 9), max_size=2))
        return OW(v) if data.draw(st.integers(0, 9)) == 0 else v
    if kind == "add_int":
        return data.draw(st.integers(0, 9))
    if kind in ("barrier", "barrier_after"):
        return data.draw(st.sampled_from(["p", "q", "p", "q", "r"]))
    if kind == "topic":
        return data.draw(st.one_of(st.integers(0, 9), st.lists(st.integers(0, 9), max_size=2)))
    return data.draw(st.integers(0, 9))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_sequences_match_langgraph(data: st.DataObject) -> None:
    n_chan = data.draw(st.integers(1, 6), label="channels")
    channels = {}
    for i in range(n_chan):
        kind, arg = data.draw(st.sampled_from(POOL), label=f"c{i}")
        channels[f"c{i}"] = (kind, arg)
    channels["__pregel_tasks"] = ("sends", None)
    names = [c for c in channels if c != "__pregel_tasks"]
    n_nodes = data.draw(st.integers(1, 4), label="nodes")
    nodes = {}
    for j in range(n_nodes):
        trig = data.draw(st.lists(st.sampled_from(names), max_size=2, unique=True), label=f"t{j}")
        read = data.draw(
            st.one_of(st.sampled_from(names), st.lists(st.sampled_from(names), max_size=3))
        )
        nodes[f"n{j}"] = (trig, read)
    # LangGraph's input cache keys a str read "c" and a list read ["c"] alike (so the second
    # node would get the first's input); real graphs never mix them and the engine does not
    # reproduce that collision, so such draws read the list form.
    singles = {r[0] for _, r in nodes.values() if isinstance(r, list) and len(r) == 1}
    nodes = {
        k: (t, [r] if isinstance(r, str) and r in singles else r) for k, (t, r) in nodes.items()
    }
    tw = Twin(channels, nodes)
    next_version = data.draw(st.sampled_from(["int", str_version, None]), label="next_version")

    def writes() -> list[tuple[str, Any]]:
        out = []
        for _ in range(data.draw(st.integers(0, 3))):
            c = data.draw(st.sampled_from(names + ["__pregel_tasks", "__no_writes__"]))
            if c == "__pregel_tasks":
                out.append(
                    (c, S(data.draw(st.sampled_from(list(nodes))), data.draw(st.integers(0, 9))))
                )
            elif c == "__no_writes__":
                out.append((c, None))
            else:
                out.append((c, value_for(data, *channels[c])))
        return out

    if not tw.apply([("__input__", (), [], writes())], next_version):
        return
    for step in range(data.draw(st.integers(1, 6), label="steps")):
        action = data.draw(
            st.sampled_from(["step", "step", "step", "reload", "update_state", "resume"])
        )
        if action == "reload":
            tw.reload()
            continue
        if action == "resume":
            tw.resume()
            continue
        if action == "update_state":
            if not tw.apply([("__input__", (), ["__interrupt__"], writes())], next_version):
                return
            continue
        tasks = tw.prepare(step)
        tw.check_interrupt("*", [(t[1], t[1] == "n0") for t in tasks])
        tw.check_interrupt(["n1"], [(t[1], False) for t in tasks])
        if not tasks and data.draw(st.booleans()):
            tasks_in = [("__input__", (), [], writes())]
        else:
            tasks_in = [run_task(t, writes()) for t in tasks]
        if not tw.apply(tasks_in, next_version):
            return


def test_restore_formats_match_langgraph() -> None:
    """Checkpoint formats LangGraph accepts: legacy Topic (x, values) tuples, (value, finished)
    pairs, barrier sets (also with names outside the barrier), `_DeltaSnapshot` blobs."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    defs = {
        "t_legacy": ("topic", True),
        "t": ("topic", False),
        "late": ("after_finish", None),
        "late_done": ("after_finish", None),
        "bar": ("barrier", {"p", "q"}),
        "bar_odd": ("barrier", {"p", "q"}),
        "barf": ("barrier_after", {"p", "q"}),
        "items": ("add_list", None),
        "unt": ("untracked", True),
        "cnt": ("counter", None),
    }
    values = {
        "t_legacy": ("ignored", [1, 2]),
        "t": [3],
        "late": (5, False),
        "late_done": (6, True),
        "bar": {"p", "q"},
        "bar_odd": {"p", "zz"},
        "barf": ({"p", "q"}, True),
        "items": _DeltaSnapshot([7]),
        "unt": 9,
        "cnt": (4, False),
    }
    versions = {k: 1 for k in defs}
    tw = Twin(defs, {"n": (["bar", "barf", "late_done"], list(defs))})
    lg_cp = {
        "v": 4,
        "id": CHECKPOINT_ID,
        "ts": "",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": {},
    }
    ours = dict(lg_cp)
    tw.load((lg_cp, ours))
    tw.compare()
    tw.prepare(0)
    tw.apply(
        [("n", ("__pregel_pull", "n"), ["bar", "barf", "late_done"], [("bar_odd", "p")])], "int"
    )
    tw.reload()


@pytest.mark.parametrize("pure", [False, True])
def test_advance_is_apply_then_next_id_then_prepare(pure: bool) -> None:
    """`advance` (one crossing per step) equals apply_writes, the loop's next id and
    prepare_next_tasks done one by one, on the native engine and its Python twin."""
    from warpgraph.pregel import _engine_py

    mod: Any = _engine_py if pure else _core
    specs = {k: make_channel("wg", kind, arg) for k, (kind, arg) in STATE.items()}
    for k, c in specs.items():
        c.key = k
    spec = mod.GraphSpec(specs, {k: (list(t), r) for k, (t, r) in NODES.items()})
    one, two = mod.Engine(spec, None), mod.Engine(spec, None)
    steps = [
        [("__input__", (), [], [("__start__", {"a": "s"})])],
        [
            (
                "__start__",
                ("__pregel_pull", "__start__"),
                ["__start__"],
                [("a", "x"), ("branch:to:n1", None), ("branch:to:n2", None)],
            )
        ],
        [
            (
                "n1",
                ("__pregel_pull", "n1"),
                ["branch:to:n1"],
                [("items", [1]), ("join:n1+n2:n3", "n1")],
            )
        ],
    ]
    prefix = "0123abcd-0000-0000-0000-"
    for step, tasks in enumerate(steps, start=-1):
        updated = one.apply_writes(tasks, "int")
        cid = f"{prefix}{step & 0xFFFFFFFFFFFF:012x}"
        expected = (updated, cid, one.prepare_next_tasks(cid, "", step + 1))
        assert two.advance(tasks, "int", prefix, "", step, 10) == expected
        assert one.channel_versions() == two.channel_versions()
    # at the recursion limit nothing is prepared
    assert two.advance([], "int", prefix, "", 5, 5)[2] == []


@pytest.mark.parametrize("pure", [False, True])
def test_next_checkpoint_only_new_gathers_the_new_versions_values(pure: bool) -> None:
    """`next_checkpoint(..., only_new=True)` (the in-memory saver's packed puts) is the
    same checkpoint with only the values of the channels in its new versions; the envelope
    (native engine) still encodes the whole checkpoint without its values."""
    import ormsgpack
    from warpgraph.pregel import _engine_py

    mod: Any = _engine_py if pure else _core
    specs = {k: make_channel("wg", kind, arg) for k, (kind, arg) in STATE.items()}
    for k, c in specs.items():
        c.key = k
    spec = mod.GraphSpec(specs, {k: (list(t), r) for k, (t, r) in NODES.items()})
    full, lean = mod.Engine(spec, None), mod.Engine(spec, None)
    steps = [
        [("__input__", (), [], [("__start__", {"a": "s"})])],
        [
            (
                "__start__",
                ("__pregel_pull", "__start__"),
                ["__start__"],
                [("a", "x"), ("branch:to:n1", None), ("branch:to:n2", None)],
            )
        ],
        [("n1", ("__pregel_pull", "n1"), ["branch:to:n1"], [("items", [1]), ("a", "y")])],
    ]
    prev_full: dict = {}
    prev_lean: dict = {}
    for step, tasks in enumerate(steps, start=-1):
        updated = full.apply_writes(tasks, "int")
        assert lean.apply_writes(tasks, "int") == updated
        _, cp, _, new = full.next_checkpoint(step, updated, prev_full, True)
        _, cp2, envelope, new2 = lean.next_checkpoint(step, updated, prev_lean, True, True)
        assert new2 == new and new
        values = cp["channel_values"]
        assert cp2["channel_values"] == {k: v for k, v in values.items() if k in new}
        same = ("v", "channel_versions", "versions_seen", "updated_channels")
        assert {k: cp2[k] for k in same} == {k: cp[k] for k in same}
        if envelope is not None:
            rest = {k: v for k, v in cp2.items() if k != "channel_values"}
            assert ormsgpack.unpackb(envelope) == rest
        prev_full, prev_lean = cp["channel_versions"], cp2["channel_versions"]
