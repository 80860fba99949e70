"""Engine micro-benchmark: one super-step's bookkeeping (prepare_next_tasks + apply_writes,
optionally + create_checkpoint + new_versions) on cyclic chains of 10/100/1000 nodes, and the
fan-out step of a 10/100/1000-wide fan-out + join.

Run: `pytest benches/bench_engine.py --benchmark-enable`. With --benchmark-disable (the default
addopts) each case runs once as a test and checks the native engine against the pure-Python
twin step by step. The per-step cost should not grow with the chain length. No timed asserts.
"""

from __future__ import annotations

import operator
from typing import Any

import pytest

_engine = pytest.importorskip("warpgraph.pregel._engine")
from warpgraph.channels.binop import BinaryOperatorAggregate
from warpgraph.channels.ephemeral_value import EphemeralValue
from warpgraph.channels.last_value import LastValue
from warpgraph.channels.named_barrier_value import NamedBarrierValue
from warpgraph.channels.topic import Topic
from warpgraph.pregel import _engine_py
from warpgraph.types import Send

CHECKPOINT_ID = "1f1ec509-c5c1-682c-bfff-0123456789ab"
SIZES = [10, 100, 1000]


def chain_spec(mod: Any, n: int) -> Any:
    """The spec StateGraph compiles for START -> n0 -> ... -> n{n-1}, plus an edge back to n0."""
    channels: dict[str, Any] = {
        "a": LastValue(int),
        "b": LastValue(int),
        "c": LastValue(int),
        "__start__": EphemeralValue(Any),
        "__pregel_tasks": Topic(Send, accumulate=False),
    }
    nodes: dict[str, Any] = {"__start__": (["__start__"], "__start__")}
    for i in range(n):
        channels[f"branch:to:n{i}"] = EphemeralValue(Any, guard=False)
        nodes[f"n{i}"] = ([f"branch:to:n{i}"], ["a", "b", "c"])
    return mod.GraphSpec(channels, nodes)


class ChainDriver:
    """Runs a cyclic chain one super-step at a time; each node adds 1 to `a`."""

    def __init__(self, mod: Any, n: int, next_version: str, checkpoint: bool) -> None:
        self.nv = next_version
        self.checkpoint = checkpoint
        self.next_branch = {f"n{i}": f"branch:to:n{(i + 1) % n}" for i in range(n)}
        self.next_branch["__start__"] = "branch:to:n0"
        self.engine = mod.Engine(chain_spec(mod, n), None)
        self.engine.apply_writes([("__input__", (), (), [("__start__", None)])], next_version)
        self.step_no = 0
        self.previous: dict = {}
        self.log: list = []
        self.step()  # __start__ writes a, b, c
        self.log.clear()

    def step(self) -> None:
        eng = self.engine
        (task,) = eng.prepare_next_tasks(CHECKPOINT_ID, "", self.step_no)
        _, name, path, triggers, inp = task
        a = inp["a"] + 1 if isinstance(inp, dict) else 0
        writes = [("a", a), (self.next_branch[name], None)]
        if name == "__start__":
            writes += [("b", 0), ("c", 0)]
        updated = eng.apply_writes([(name, path, triggers, writes)], self.nv)
        self.step_no += 1
        if self.checkpoint:
            cp = eng.create_checkpoint(CHECKPOINT_ID, "ts", updated)
            new = eng.new_versions(self.previous)
            self.previous = cp["channel_versions"]
            self.log.append((task[:4], updated, len(new), cp["versions_seen"].get(name)))
        else:
            self.log.append((task[:4], updated))


def _mod(impl: str) -> Any:
    return _engine if impl == "native" else _engine_py


@pytest.mark.parametrize("checkpoint", [False, True], ids=["step", "step+checkpoint"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("impl", ["native", "twin"])
def test_engine_step(benchmark: Any, impl: str, n: int, checkpoint: bool) -> None:
    if impl == "native" and not _engine.NATIVE:
        pytest.skip("native engine not built")
    nv = "str" if checkpoint else "int"
    driver = ChainDriver(_mod(impl), n, nv, checkpoint)
    benchmark.group = f"engine-{'ckpt' if checkpoint else 'step'}-{n}"
    benchmark.extra_info.update(impl=impl, n=n, checkpoint=checkpoint, next_version=nv)
    benchmark(driver.step)
    # However often it ran, the chain moved on by exactly one node per step.
    node_steps = driver.step_no - 1
    assert driver.engine.read("a") == node_steps
    assert driver.log[-1][0][1] == f"n{(node_steps - 1) % n}"


@pytest.mark.parametrize("checkpoint", [False, True])
@pytest.mark.parametrize("n", SIZES)
def test_native_matches_twin(n: int, checkpoint: bool) -> None:
    """Same steps on both engines: same tasks, updated channels, versions and checkpoints."""
    if not _engine.NATIVE:
        pytest.skip("native engine not built")
    native = ChainDriver(_engine, n, "int", checkpoint)
    twin = ChainDriver(_engine_py, n, "int", checkpoint)
    for _ in range(2 * n + 3):
        native.step()
        twin.step()
    assert native.log == twin.log
    assert native.engine.channel_versions() == twin.engine.channel_versions()
    assert list(native.engine.channel_versions()) == list(twin.engine.channel_versions())
    assert native.engine.versions_seen() == twin.engine.versions_seen()
    assert native.engine.updated_channels() == twin.engine.updated_channels()
    if checkpoint:
        assert native.previous == twin.previous


def fanout_spec(mod: Any, n: int) -> tuple[Any, str]:
    """START -> src -> p0..p{n-1} -> join (a barrier over all p's); p's add 1 to `acc`."""
    join = "join:" + "+".join(f"p{i}" for i in range(n)) + ":join"
    channels: dict[str, Any] = {
        "a": LastValue(int),
        "acc": BinaryOperatorAggregate(int, operator.add),
        "__start__": EphemeralValue(Any),
        "__pregel_tasks": Topic(Send, accumulate=False),
        "branch:to:src": EphemeralValue(Any, guard=False),
        join: NamedBarrierValue(str, {f"p{i}" for i in range(n)}),
    }
    nodes: dict[str, Any] = {
        "__start__": (["__start__"], "__start__"),
        "src": (["branch:to:src"], ["a", "acc"]),
    }
    for i in range(n):
        channels[f"branch:to:p{i}"] = EphemeralValue(Any, guard=False)
        nodes[f"p{i}"] = ([f"branch:to:p{i}"], ["a", "acc"])
    nodes["join"] = ([join], ["a", "acc"])
    return mod.GraphSpec(channels, nodes), join


def fanout_engine(mod: Any, spec: Any, n: int) -> Any:
    """An engine right before the fan-out step (src has written every branch)."""
    eng = mod.Engine(spec, None)
    eng.apply_writes([("__input__", (), (), [("__start__", None)])], "int")
    (t,) = eng.prepare_next_tasks(CHECKPOINT_ID, "", 0)
    eng.apply_writes([(t[1], t[2], t[3], [("a", 0), ("acc", 0), ("branch:to:src", None)])], "int")
    (t,) = eng.prepare_next_tasks(CHECKPOINT_ID, "", 1)
    branches = [(f"branch:to:p{i}", None) for i in range(n)]
    eng.apply_writes([(t[1], t[2], t[3], [("a", 1), *branches])], "int")
    return eng


def fanout_step(eng: Any, join: str) -> tuple:
    """Prepares the n parallel tasks and applies their writes; returns what is observable."""
    tasks = eng.prepare_next_tasks(CHECKPOINT_ID, "", 2)
    writes = [(t[1], t[2], t[3], [("acc", 1), (join, t[1])]) for t in tasks]
    updated = eng.apply_writes(writes, "int")
    return [t[:4] for t in tasks], updated


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("impl", ["native", "twin"])
def test_engine_fanout_step(benchmark: Any, impl: str, n: int) -> None:
    if impl == "native" and not _engine.NATIVE:
        pytest.skip("native engine not built")
    mod = _mod(impl)
    spec, join = fanout_spec(mod, n)
    benchmark.group = f"engine-fanout-{n}"
    benchmark.extra_info.update(impl=impl, n=n, unit="whole fan-out step")
    engines: list = []

    def setup() -> tuple:
        engines.append(fanout_engine(mod, spec, n))
        return (engines[-1], join), {}

    rounds = max(3, 3000 // n)
    benchmark.pedantic(fanout_step, setup=setup, rounds=rounds, iterations=1)
    eng = engines[-1]
    assert eng.read("acc") == n
    assert eng.updated_channels() == ["acc", join]
    (nxt,) = eng.prepare_next_tasks(CHECKPOINT_ID, "", 3)
    assert nxt[1] == "join"


@pytest.mark.parametrize("n", SIZES)
def test_native_fanout_matches_twin(n: int) -> None:
    if not _engine.NATIVE:
        pytest.skip("native engine not built")
    runs = []
    for mod in (_engine, _engine_py):
        spec, join = fanout_spec(mod, n)
        eng = fanout_engine(mod, spec, n)
        runs.append((fanout_step(eng, join), eng.channel_versions(), eng.versions_seen()))
    assert runs[0] == runs[1]
