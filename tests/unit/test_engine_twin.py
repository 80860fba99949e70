"""The pure-Python Engine twin against LangGraph's own `_algo` functions.

Random graphs (nodes with random triggers/reads over every built-in channel kind) are driven
step by step through `prepare_next_tasks` + random writes + `apply_writes` on both sides; task
ids, paths, inputs, versions, versions_seen, updated channels, checkpoint values and errors
must agree at every step.
"""

from __future__ import annotations

import operator
import random
import uuid

import pytest

pytest.importorskip("langgraph")

from langgraph import channels as lgc
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.pregel import _algo
from langgraph.pregel._checkpoint import create_checkpoint
from langgraph.pregel._read import PregelNode as LGNode
from langgraph.types import Send as LGSend
from warpgraph import channels as wgc
from warpgraph.pregel._engine_py import Engine, GraphSpec, task_path_str

try:
    from warpgraph.types import Send as WGSend
except ImportError:  # pragma: no cover - types not written yet
    WGSend = None


def _channels(mod):
    return {
        "a": mod.LastValue(int),
        "b": mod.LastValue(int),
        "sum": mod.BinaryOperatorAggregate(int, operator.add),
        "lst": mod.BinaryOperatorAggregate(list, operator.add),
        "e": mod.EphemeralValue(object, guard=False),
        "eg": mod.EphemeralValue(object),
        "top": mod.Topic(int, accumulate=True),
        "bar": mod.NamedBarrierValue(str, {"n0", "n1"}),
        "barf": mod.NamedBarrierValueAfterFinish(str, {"n1", "n2"}),
        "laf": mod.LastValueAfterFinish(object),
        "any": mod.AnyValue(object),
        "unt": mod.UntrackedValue(object),
        "__pregel_tasks": mod.Topic(LGSend if mod is lgc else WGSend, accumulate=False),
    }


NAMES = ["a", "b", "sum", "lst", "e", "eg", "top", "bar", "barf", "laf", "any", "unt"]
TRIGGERABLE = ["a", "b", "sum", "e", "eg", "top", "bar", "barf", "laf", "any"]


def _random_write(rng: random.Random, name: str):
    ch = rng.choice(NAMES + ["__pregel_tasks", "__no_writes__", "ghost"])
    if ch in ("bar", "barf"):
        return ch, rng.choice(["n0", "n1", "n2"])
    if ch == "lst":
        return ch, [rng.randint(0, 9)]
    if ch == "__pregel_tasks":
        return ch, ("send", rng.choice(["n0", "n1", "n2", "n3", "zz"]), rng.randint(0, 9))
    return ch, rng.randint(0, 99)


def _to(side, val):
    if isinstance(val, tuple) and val and val[0] == "send":
        return (LGSend if side == "lg" else WGSend)(val[1], val[2])
    return val


def _norm(v):
    if isinstance(v, (LGSend,)) or (WGSend is not None and isinstance(v, WGSend)):
        return ("Send", v.node, v.arg)
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, set):
        return sorted(v)
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    return v


@pytest.mark.skipif(WGSend is None, reason="warpgraph.types not available yet")
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("versions", ["int", "str"])
def test_twin_matches_langgraph_algo(seed: int, versions: str) -> None:
    rng = random.Random(seed)
    nodes = {}
    for i in range(4):
        trig = rng.sample(TRIGGERABLE, rng.randint(1, 2))
        reads = rng.choice([rng.sample(NAMES, rng.randint(1, 4)), rng.choice(NAMES)])
        nodes[f"n{i}"] = (trig, reads)
    lg_ch_specs = _channels(lgc)
    from langgraph._internal._runnable import RunnableCallable

    lg_procs = {
        n: LGNode(triggers=t, channels=r, bound=RunnableCallable(lambda x: x))
        for n, (t, r) in nodes.items()
    }
    spec = GraphSpec(_channels(wgc), nodes)
    t2n = _algo_trigger_to_nodes(lg_procs)
    assert t2n == spec.trigger_to_nodes

    cp = empty_checkpoint()
    lg_ch = {k: c.from_checkpoint(lgc_missing()) for k, c in lg_ch_specs.items()}
    eng = Engine(spec, None)
    if versions == "int":
        gnv_lg, gnv_wg = _algo.increment, "int"
    else:
        rstate = random.getstate()
        from langgraph.checkpoint.memory import InMemorySaver

        gnv_lg, gnv_wg = InMemorySaver().get_next_version, "str"
        random.setstate(rstate)
    parent_ns = rng.choice(["", "outer:abc"])
    config = {"configurable": {"checkpoint_ns": parent_ns}}
    # input pseudo-task
    first = [("a", 1), ("e", 2), ("top", 3)]
    rs = random.getstate()
    lg_up = _algo.apply_writes(
        cp, lg_ch, [_algo.PregelTaskWrites((), "__input__", first, [])], gnv_lg, t2n
    )
    random.setstate(rs)
    wg_up = eng.apply_writes([("__input__", (), [], first)], gnv_wg)
    assert sorted(lg_up) == wg_up
    for step in range(12):
        cp["id"] = str(uuid.UUID(int=rng.getrandbits(128)))
        lg_tasks = _algo.prepare_next_tasks(
            cp,
            [],
            lg_procs,
            lg_ch,
            {},
            config,
            step,
            step + 50,
            for_execution=False,
            trigger_to_nodes=t2n,
            updated_channels=lg_up,
        )
        wg_tasks = eng.prepare_next_tasks(cp["id"], parent_ns, step)
        assert [(t.id, t.name, t.path) for t in lg_tasks.values()] == [
            (i, n, p) for i, n, p, _t, _v in wg_tasks
        ]
        for tid, name, path, trig, val in wg_tasks:
            if path[0] == "__pregel_pull":
                exp = _algo._proc_input(
                    lg_procs[name],
                    {},
                    lg_ch,
                    for_execution=False,
                    scratchpad=None,
                    input_cache=None,
                )
                assert _norm(val) == _norm(exp)
                assert trig == tuple(sorted(nodes[name][0]))
        if not wg_tasks:
            break
        writes = {
            t[0]: [_random_write(rng, t[1]) for _ in range(rng.randint(0, 2))] for t in wg_tasks
        }
        lg_err = wg_err = None
        rs = random.getstate()
        try:
            lg_up = _algo.apply_writes(
                cp,
                lg_ch,
                [
                    _algo.PregelTaskWrites(
                        t.path,
                        t.name,
                        [(c, _to("lg", v)) for c, v in writes[t.id]],
                        t.triggers if hasattr(t, "triggers") else wg_map(wg_tasks)[t.id],
                    )
                    for t in lg_tasks.values()
                ],
                gnv_lg,
                t2n,
            )
        except Exception as e:  # noqa: BLE001
            lg_err = e
        random.setstate(rs)
        try:
            wg_up = eng.apply_writes(
                [
                    (n, p, trig, [(c, _to("wg", v)) for c, v in writes[i]])
                    for i, n, p, trig, _ in wg_tasks
                ],
                gnv_wg,
            )
        except Exception as e:  # noqa: BLE001
            wg_err = e
        assert type(lg_err).__name__ == type(wg_err).__name__
        if lg_err is not None:
            assert str(lg_err).split("\n")[0] == str(wg_err).split("\n")[0]
            break
        assert sorted(lg_up) == wg_up
        assert cp["channel_versions"] == eng.channel_versions()
        assert cp["versions_seen"] == eng.versions_seen()
        lg_cp = create_checkpoint(cp, lg_ch, step, updated_channels=lg_up)
        wg_cp = eng.create_checkpoint(cp["id"], lg_cp["ts"], wg_up)
        assert _norm(lg_cp["channel_values"]) == _norm(wg_cp["channel_values"])
        assert lg_cp["updated_channels"] == wg_cp["updated_channels"]
        for interrupt_nodes in ("*", ["n1"]):
            lg_int = bool(_algo.should_interrupt(cp, interrupt_nodes, []))
            assert lg_int == eng.should_interrupt(interrupt_nodes, [])


def wg_map(wg_tasks):
    return {t[0]: t[3] for t in wg_tasks}


def lgc_missing():
    from langgraph._internal._typing import MISSING

    return MISSING


def _algo_trigger_to_nodes(procs):
    from langgraph.pregel.main import _trigger_to_nodes

    return _trigger_to_nodes(procs)


@pytest.mark.parametrize(
    "path",
    [
        ("__pregel_pull", "n1"),
        ("__pregel_push", 3, False),
        ("__pregel_push", ("a", 1), 2, True),
        (),
    ],
)
def test_task_path_str(path) -> None:
    assert task_path_str(path) == _algo.task_path_str(path)


def test_task_ids_match() -> None:
    from warpgraph.pregel._engine_py import task_id

    cid = "1f1ec509-c5c1-682c-bfff-0123456789ab"
    raw = bytes.fromhex(cid.replace("-", ""))
    parts = ("outer|n1", "3", "n1", "__pregel_pull", "branch:to:n1")
    assert task_id(cid, parts, 4) == _algo._xxhash_str(raw, *parts)
    assert task_id(cid, parts, 1) == _algo._uuid5_str(raw, *parts)


@pytest.mark.skipif(WGSend is None, reason="warpgraph.types not available yet")
@pytest.mark.parametrize(
    "select",
    [["a", "sum", "top", "e"], "sum", ["lst"], ["sum", "a", "sum"], ("lst", "sum"), []],
)
def test_fresh_read_matches_local_read(select) -> None:
    first = [("a", 1), ("sum", 5), ("top", 1), ("e", 3)]
    fresh = [("sum", 2), ("a", 7), ("zz", 1), ("lst", [4])]
    lg_ch = {k: c.from_checkpoint(lgc_missing()) for k, c in _channels(lgc).items()}
    cp = empty_checkpoint()
    _algo.apply_writes(
        cp, lg_ch, [_algo.PregelTaskWrites((), "__input__", first, [])], _algo.increment, {}
    )
    task = _algo.PregelTaskWrites(("__pregel_pull", "n0"), "n0", fresh, ["a"])
    expected = _algo.local_read(None, lg_ch, {}, task, select, fresh=True)
    eng = Engine(GraphSpec(_channels(wgc), {"n0": (["a"], ["a", "sum"])}), None)
    eng.apply_writes([("__input__", (), [], first)], "int")
    assert eng.read(select, fresh_writes=fresh) == expected
    assert eng.read(select) == _algo.local_read(None, lg_ch, {}, task, select, fresh=False)
