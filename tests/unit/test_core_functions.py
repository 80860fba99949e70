"""warpgraph._core stand-alone functions, compared live against the reference langgraph."""

from __future__ import annotations

import binascii
import copy
import itertools
import operator
import os
import threading
from typing import Annotated, Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base.id import UUID as RefUUID
from langgraph.checkpoint.base.id import uuid6 as ref_uuid6
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.pregel._algo import _uuid5_str, _xxhash_str
from langgraph.pregel._algo import task_path_str as ref_task_path_str
from langgraph.types import Send
from typing_extensions import TypedDict
from warpgraph._internal._flags import FAST_PATHS

_core = pytest.importorskip("warpgraph._core")

OPT = ormsgpack.OPT_NON_STR_KEYS


def ref_task_id(checkpoint_id: str, parts: list[str | bytes], v: int) -> str:
    ns = binascii.unhexlify(checkpoint_id.replace("-", ""))
    return (_xxhash_str if v > 1 else _uuid5_str)(ns, *parts)


def ref_envelope(checkpoint: dict) -> bytes:
    return ormsgpack.packb(
        {k: v for k, v in checkpoint.items() if k != "channel_values"}, option=OPT
    )


# ---------------------------------------------------------------- task_path_str

path_leaf = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.text(max_size=8),
    st.sampled_from(["__pregel_push", "__pregel_pull", "node_error_handler"]),
)
paths = st.recursive(
    path_leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4).map(tuple), st.lists(inner, max_size=4)),
    max_leaves=12,
)


@given(paths)
def test_task_path_str_matches_reference(path: Any) -> None:
    assert _core.task_path_str(path) == ref_task_path_str(path)


def test_task_path_str_known_shapes() -> None:
    for path in [
        ("__pregel_pull", "agent"),
        ("__pregel_push", 3, False),
        ("__pregel_push", ("__pregel_pull", "a"), 2, True),
        ("__pregel_push", ("__pregel_push", ("__pregel_pull", "a"), 0, True), 1, True),
        ("__pregel_push", -5, None),
        7,
        "plain",
    ]:
        assert _core.task_path_str(path) == ref_task_path_str(path)


# ---------------------------------------------------------------- task_id

hex_ids = st.binary(min_size=16, max_size=16).map(lambda b: str(RefUUID(bytes=b)))
parts_st = st.lists(st.one_of(st.text(max_size=12), st.binary(max_size=8)), max_size=7)


@given(hex_ids, parts_st, st.sampled_from([0, 1, 2, 3, 4]))
def test_task_id_matches_reference(checkpoint_id: str, parts: list, v: int) -> None:
    assert _core.task_id(checkpoint_id, parts, v) == ref_task_id(checkpoint_id, parts, v)


def test_task_id_default_version_is_xxh3() -> None:
    cid = str(ref_uuid6(clock_seq=3))
    parts = ["", "3", "node", "__pregel_pull", "branch:to:node"]
    assert _core.task_id(cid, parts) == ref_task_id(cid, parts, 4)
    assert _core.task_id(cid, tuple(parts), 1) == ref_task_id(cid, parts, 1)
    # xxh3 switches algorithms at 16/128/240 bytes and per 1 KiB stripe block
    for n in [0, 1, 15, 16, 17, 127, 128, 129, 239, 240, 241, 1023, 1024, 5000]:
        long_parts = ["n" * n, "é" * (n // 3)]
        for v in (1, 4):
            assert _core.task_id(cid, long_parts, v) == ref_task_id(cid, long_parts, v)


@pytest.mark.parametrize("bad", ["abc", "zz", "1f0a-3c2g", "é0"])
def test_task_id_malformed_checkpoint_id(bad: str) -> None:
    with pytest.raises(ValueError):
        binascii.unhexlify(bad.replace("-", ""))
    with pytest.raises(ValueError, match="checkpoint id"):
        _core.task_id(bad, ["x"])


def test_task_id_bad_part_type() -> None:
    with pytest.raises(TypeError, match="index 1"):
        _core.task_id(str(ref_uuid6()), ["a", 5])


class State(TypedDict):
    items: Annotated[list[str], operator.add]


def _fanout(state: State) -> list[Send]:
    return [Send("worker", {"items": [f"w{i}"]}) for i in range(3)]


def _build_graph(checkpointer: InMemorySaver):
    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", lambda s: {"items": ["b"]})
    g.add_node("worker", lambda s: {"items": s["items"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", _fanout, ["worker"])
    g.add_edge("worker", END)
    return g.compile(checkpointer=checkpointer)


class RecordingSaver(InMemorySaver):
    """InMemorySaver that keeps a deep copy of every checkpoint dict it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict] = []

    def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
        self.seen.append(copy.deepcopy(checkpoint))
        return super().put(config, checkpoint, metadata, new_versions)


def test_task_ids_of_a_real_run() -> None:
    saver = RecordingSaver()
    graph = _build_graph(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"items": []}, cfg)
    checked = 0
    for snap in graph.get_state_history(cfg):
        step = snap.metadata["step"] + 1  # tasks of a checkpoint run in the next step
        cid = snap.config["configurable"]["checkpoint_id"]
        push_idx = 0
        for task in snap.tasks:
            if task.name == "worker":
                parts = ["worker", str(step), "worker", "__pregel_push", str(push_idx)]
                push_idx += 1
            elif task.name == "__start__":
                parts = [task.name, str(step), task.name, "__pregel_pull", "__start__"]
            else:
                parts = [task.name, str(step), task.name, "__pregel_pull", f"branch:to:{task.name}"]
            assert _core.task_id(cid, parts) == task.id
            checked += 1
    assert checked >= 6


# ---------------------------------------------------------------- uuid6


def test_uuid6_layout_matches_reference() -> None:
    for step in [-2, -1, 0, 1, 2, 16383, 16384, 16385, 2**40, -(2**40), 2**80 + 5]:
        ours = RefUUID(_core.uuid6(step))
        ref = ref_uuid6(clock_seq=step)
        assert ours.version == ref.version == 6
        assert ours.variant == ref.variant
        assert ours.clock_seq == ref.clock_seq == step & 0x3FFF
        # both stamp the current time (100-ns ticks); allow a generous 60 s skew
        assert abs(ours.time - ref.time) < 600_000_000
    assert str(RefUUID(_core.uuid6(-1))).split("-")[3] == str(ref_uuid6(clock_seq=-1)).split("-")[3]


def test_uuid6_random_clock_seq_and_node() -> None:
    ids = [RefUUID(_core.uuid6()) for _ in range(64)]
    assert len({u.clock_seq for u in ids}) > 1
    assert len({u.node for u in ids}) == len(ids)
    assert all(u.version == 6 for u in ids)
    assert RefUUID(_core.uuid6(None)).version == 6


def test_uuid6_bad_clock_seq() -> None:
    with pytest.raises(TypeError):
        _core.uuid6("1")
    with pytest.raises(TypeError):
        _core.uuid6(1.5)


def test_uuid6_strictly_increasing_across_threads() -> None:
    seq = [_core.uuid6(i) for i in range(2000)]
    assert all(a < b for a, b in itertools.pairwise(seq))
    out: list[list[str]] = [[] for _ in range(4)]

    def work(k: int) -> None:
        out[k].extend(_core.uuid6(k) for _ in range(500))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    times = [RefUUID(s).time for chunk in out for s in chunk]
    assert len(set(times)) == len(times)
    for chunk in out:
        assert chunk == sorted(chunk)


# ---------------------------------------------------------------- envelope encoding

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.binary(max_size=40),
)
keys = st.one_of(
    st.text(max_size=10),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    st.booleans(),
    st.none(),
    st.binary(max_size=6),
    st.tuples(st.integers(min_value=-(2**63), max_value=2**63), st.text(max_size=3)),
)
trees = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=20),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(keys, inner, max_size=20),
    ),
    max_leaves=60,
)
versions = st.one_of(
    st.integers(min_value=0, max_value=2**40),
    st.floats(min_value=0, max_value=1e6),
    st.text(alphabet="0123456789.", min_size=1, max_size=49),
)
channel_names = st.text(min_size=1, max_size=20)
checkpoints = st.fixed_dictionaries(
    {
        "v": st.integers(min_value=1, max_value=4),
        "id": st.uuids().map(str),
        "ts": st.text(max_size=40),
        "channel_values": st.dictionaries(channel_names, st.just(object())),
        "channel_versions": st.dictionaries(channel_names, versions),
        "versions_seen": st.dictionaries(
            channel_names, st.dictionaries(channel_names, versions, max_size=6), max_size=6
        ),
        "updated_channels": st.one_of(st.none(), st.lists(channel_names, max_size=8)),
    },
    optional={"extra": trees, "pending_sends": st.lists(st.none(), max_size=2)},
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(checkpoints)
def test_pack_envelope_random_checkpoints(ck: dict) -> None:
    data = _core.pack_checkpoint_envelope(ck)
    assert data == ref_envelope(ck)
    # compared as bytes after a re-encode: the trees may hold NaN, which never equals itself
    decoded = _core.unpack_checkpoint_envelope(data)
    assert ormsgpack.packb(decoded, option=OPT) == data
    assert repr(decoded) == repr(ormsgpack.unpackb(data, option=OPT))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, trees, max_size=8))
def test_pack_envelope_arbitrary_trees(tree: dict) -> None:
    data = _core.pack_checkpoint_envelope(tree)
    assert data == ref_envelope(tree)
    # NaN-safe round trip: decode and re-encode to the same bytes
    decoded = _core.unpack_checkpoint_envelope(data)
    assert _core.pack_checkpoint_envelope(decoded) == data
    assert ormsgpack.packb(ormsgpack.unpackb(data, option=OPT), option=OPT) == data


def test_pack_envelope_real_checkpoints() -> None:
    saver = RecordingSaver()
    graph = _build_graph(saver)
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"items": []}, cfg)
    graph.invoke({"items": ["again"]}, cfg)
    assert len(saver.seen) >= 8
    stored = {
        ck_id: typed
        for per_ns in saver.storage.values()
        for per_id in per_ns.values()
        for ck_id, (typed, _meta, _parent) in per_id.items()
    }
    for ck in saver.seen:
        data = _core.pack_checkpoint_envelope(ck)
        assert data == ref_envelope(ck)
        assert stored[ck["id"]] == ("msgpack", data)
        back = _core.unpack_checkpoint_envelope(data)
        assert back == {k: v for k, v in ck.items() if k != "channel_values"}


@pytest.mark.parametrize(
    ("ck", "where"),
    [
        ({"a": object()}, "['a']"),
        ({"a": {"b": [1, {2: Send("x", 1)}]}}, "['a']['b'][1][2]"),
        ({"a": 2**64}, "['a']"),
        ({"a": -(2**63) - 1}, "['a']"),
        ({"a": {1.5}}, "['a']"),
        ({"a": {frozenset(): 1}}, "['a']<key frozenset()>"),
        ({"a": "\ud800"}, "['a']"),
        ({"\ud800": 1}, "<key '\\ud800'>"),
    ],
)
def test_pack_envelope_unsupported(ck: dict, where: str) -> None:
    with pytest.raises(TypeError) as info:
        _core.pack_checkpoint_envelope(ck)
    assert f"at checkpoint{where}" in str(info.value)


def test_pack_envelope_subclasses_are_refused() -> None:
    class S(str):
        pass

    with pytest.raises(TypeError, match="unsupported type S"):
        _core.pack_checkpoint_envelope({"a": S("x")})


def test_pack_envelope_depth_limit_matches_ormsgpack() -> None:
    def nest(n: int) -> Any:
        x: Any = []
        for i in range(n - 2):
            x = {"k": x} if i % 2 else [x]
        return x

    ok, too_deep = {"a": nest(255)}, {"a": nest(256)}
    assert _core.pack_checkpoint_envelope(ok) == ref_envelope(ok)
    with pytest.raises(TypeError):
        ormsgpack.packb(too_deep, option=OPT)
    with pytest.raises(TypeError, match="Recursion limit"):
        _core.pack_checkpoint_envelope(too_deep)


def test_pack_envelope_skips_only_channel_values() -> None:
    ck = {"channel_values": {"x": object()}, "id": "1", 0: "channel_values"}
    assert _core.pack_checkpoint_envelope(ck) == ref_envelope(ck)


# ---------------------------------------------------------------- envelope decoding


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x91\x01",  # not a map
        b"\x81",  # truncated
        b"\x81\xa1a",
        b"\x81\xa3ab",
        b"\x81\xa1a\xc1",  # reserved marker
        b"\x81\xa1a\xa2\xff\x00",  # invalid utf-8
        b"\x81\xa1a\xd4\x00\x00",  # ext
        b"\x81\x81\x01\x02\x03",  # map as key
        b"\x81\xa1a\xdd\xff\xff\xff\xff",  # huge declared array
        b"\xdf\xff\xff\xff\xff",  # huge declared map
        b"\x80\xc0",  # trailing data
        b"\x81\xa1a" + b"\x91" * 100_000,  # hostile nesting
    ],
)
def test_unpack_envelope_rejects_bad_input(data: bytes) -> None:
    with pytest.raises(ValueError, match="invalid checkpoint envelope"):
        _core.unpack_checkpoint_envelope(data)


def test_unpack_envelope_accepts_ormsgpack_forms() -> None:
    # float32 and array keys are valid msgpack that ormsgpack decodes too
    for data in [b"\x81\xa1f\xca\x3f\xc0\x00\x00", b"\x81\x92\x01\x02\x03"]:
        assert _core.unpack_checkpoint_envelope(data) == ormsgpack.unpackb(data, option=OPT)


def _check_decode(data: bytes) -> None:
    try:
        ours = _core.unpack_checkpoint_envelope(data)
    except ValueError:
        return
    assert isinstance(ours, dict)
    # whatever we accept, ormsgpack decodes to the same (compared via canonical bytes)
    theirs = ormsgpack.unpackb(data, option=OPT)
    assert ormsgpack.packb(theirs, option=OPT) == ormsgpack.packb(ours, option=OPT)


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_unpack_envelope_fuzz_random_bytes(data: bytes) -> None:
    _check_decode(data)
    _check_decode(b"\x82" + data)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(keys, trees, max_size=5), st.data())
def test_unpack_envelope_fuzz_mutations(tree: dict, data: st.DataObject) -> None:
    good = _core.pack_checkpoint_envelope(tree)
    cut = data.draw(st.integers(min_value=0, max_value=len(good)))
    _check_decode(good[:cut])
    if good:
        pos = data.draw(st.integers(min_value=0, max_value=len(good) - 1))
        byte = data.draw(st.integers(min_value=0, max_value=255))
        _check_decode(good[:pos] + bytes([byte]) + good[pos + 1 :])


def test_unpack_envelope_random_bytes_bulk() -> None:
    rng = os.urandom(200_000)
    for i in range(0, len(rng), 50):
        _check_decode(b"\x81\xa1a" + rng[i : i + 50])


def test_pack_envelope_sees_versions_seen_edited_in_place() -> None:
    """The packer reuses the encoding of a versions_seen entry it saw before only while
    the very same inner dict holds the very same objects: edits in place, reorders,
    replacements and new value types are all re-encoded (compared with ormsgpack)."""
    inner = {"a": "00000000000000000000000000000001.0.1", "b": 2}
    ck = {
        "v": 4,
        "id": "1f0",
        "ts": "t",
        "channel_versions": {"a": 3},
        "versions_seen": {"n1": inner, "n2": {"x": 1}},
        "updated_channels": None,
    }
    edits = [
        lambda: None,  # unchanged: reused bytes
        lambda: inner.__setitem__("a", "00000000000000000000000000000002.0.5"),
        lambda: inner.__setitem__("c", 1.5),
        lambda: inner.pop("b"),
        lambda: (inner.pop("a"), inner.__setitem__("a", 7)),  # same keys, new order
        lambda: inner.__setitem__("c", True),
        lambda: inner.__setitem__("c", None),
        lambda: ck["versions_seen"].__setitem__("n1", dict(inner)),
        lambda: ck["versions_seen"]["n1"].__setitem__("z", [1, 2]),  # not a cached type
        lambda: ck["versions_seen"]["n1"].clear(),
    ]
    for edit in edits:
        edit()
        for _ in range(3):  # an entry is cached the second time it is seen
            assert _core.pack_checkpoint_envelope(ck) == ref_envelope(ck)


# ---------------------------------------------------------------- engine-prepared envelopes


def _wg():
    from warpgraph.checkpoint.memory import InMemorySaver as WgSaver
    from warpgraph.graph import END as WEND
    from warpgraph.graph import START as WSTART
    from warpgraph.graph import StateGraph as WStateGraph
    from warpgraph.types import Command as WCommand
    from warpgraph.types import Send as WSend
    from warpgraph.types import interrupt as winterrupt

    return WgSaver, WStateGraph, WSTART, WEND, WSend, WCommand, winterrupt


def _checking_saver(mutate=None):
    """A warpgraph InMemorySaver asserting every stored envelope equals ormsgpack's bytes."""
    WgSaver = _wg()[0]

    class Checking(WgSaver):
        def __init__(self) -> None:
            super().__init__()
            self.checked = 0

        def put(self, config, checkpoint, metadata, new_versions):  # type: ignore[override]
            if mutate is not None:
                mutate(checkpoint)
            want = ref_envelope(checkpoint)
            out = super().put(config, checkpoint, metadata, new_versions)
            conf = out["configurable"]
            stored = self.storage[conf["thread_id"]][conf["checkpoint_ns"]][checkpoint["id"]]
            assert stored[0] == ("msgpack", want)
            self.checked += 1
            return out

    return Checking()


class _Wide(TypedDict, total=False):
    k0: int
    k1: int
    k2: int
    acc: Annotated[list, operator.add]


def _counting_chain(n: int, saver: Any) -> Any:
    """n0 -> ... -> n{n-1}, each adding 1 to k0 (warpgraph)."""
    _, SG, S, _, _, _, _ = _wg()
    g = SG(_Wide)
    for i in range(n):
        g.add_node(f"n{i}", lambda s: {"k0": s.get("k0", 0) + 1})
    g.add_edge(S, "n0")
    for i in range(n - 1):
        g.add_edge(f"n{i}", f"n{i + 1}")
    return g.compile(checkpointer=saver)


def _engine_graphs(saver):
    _, SG, S, _, WSend, _, winterrupt = _wg()

    yield _counting_chain(20, saver), {"k0": 0}, None

    wide = SG(_Wide)
    for i in range(3):
        wide.add_node(f"w{i}", lambda s, i=i: {f"k{i}": s.get(f"k{i}", 0) + i, "acc": [i]})
        wide.add_edge(S, f"w{i}")
    wide.add_node("join", lambda s: {"acc": ["j"]})
    wide.add_edge(["w0", "w1", "w2"], "join")
    yield wide.compile(checkpointer=saver), {"k0": 1}, None

    fan = SG(_Wide)
    fan.add_node("src", lambda s: {"k0": 5})
    fan.add_node("work", lambda s: {"acc": [s]})
    fan.add_conditional_edges("src", lambda s: [WSend("work", i) for i in range(4)], ["work"])
    fan.add_edge(S, "src")
    yield fan.compile(checkpointer=saver), {"k0": 0}, None

    def ask(s):
        return {"acc": [winterrupt("q")]}

    intr = SG(_Wide)
    intr.add_node("a", lambda s: {"k1": 1})
    intr.add_node("ask", ask)
    intr.add_edge(S, "a")
    intr.add_edge("a", "ask")
    yield intr.compile(checkpointer=saver), {"k0": 0}, "resume"

    before = SG(_Wide)
    before.add_node("a", lambda s: {"k1": 1})
    before.add_node("b", lambda s: {"k2": 2})
    before.add_edge(S, "a")
    before.add_edge("a", "b")
    yield before.compile(checkpointer=saver, interrupt_before=["b"]), {"k0": 0}, "continue"

    sub = SG(_Wide)
    sub.add_node("s1", lambda s: {"k2": s.get("k2", 0) + 1})
    sub.add_edge(S, "s1")
    parent = SG(_Wide)
    parent.add_node("p", lambda s: {"k1": 1})
    parent.add_node("child", sub.compile())
    parent.add_edge(S, "p")
    parent.add_edge("p", "child")
    yield parent.compile(checkpointer=saver), {"k0": 0}, None


def test_engine_envelopes_equal_ormsgpack_over_real_runs() -> None:
    Command = _wg()[5]
    saver = _checking_saver()
    hits = _core._envelope_cache_hits()
    for n, (graph, inp, then) in enumerate(_engine_graphs(saver)):
        for rerun in range(2):
            cfg = {"configurable": {"thread_id": f"t{n}-{rerun}"}}
            graph.invoke(inp, cfg)
            if then == "resume":
                graph.invoke(Command(resume="yes"), cfg)
            elif then == "continue":
                graph.invoke(None, cfg)
            graph.invoke(inp, cfg)  # a second run on the same thread
    assert saver.checked >= 60
    if FAST_PATHS:
        # the engine's entries were used (two dicts per checkpoint), not just the encoder
        assert _core._envelope_cache_hits() - hits >= saver.checked
    else:  # WARPGRAPH_FAST_PATHS=0: every envelope encoded from its dicts
        assert _core._envelope_cache_hits() == hits


@pytest.mark.parametrize(
    "mutate",
    [
        lambda cp: cp["channel_versions"].__setitem__("k0", cp["channel_versions"]["k0"] + "x"),
        lambda cp: cp["channel_versions"].update({"zz": "1"}),
        lambda cp: cp.__setitem__("channel_versions", dict(cp["channel_versions"])),
        lambda cp: next(iter(cp["versions_seen"].values())).update({"k0": 7}),
        lambda cp: cp["versions_seen"].update({"extra": {}}),
        lambda cp: cp["versions_seen"].pop(next(iter(cp["versions_seen"]))),
        lambda cp: cp.__setitem__("id", cp["id"][:-1] + "0"),
        lambda cp: cp.__setitem__("updated_channels", ["k9"]),
    ],
)
def test_engine_envelope_mutated_checkpoint_is_encoded_afresh(mutate) -> None:
    _, SG, S, _, _, _, _ = _wg()

    def edit(cp: dict) -> None:
        # only once both dicts have entries (the first checkpoint has none)
        if cp["versions_seen"] and "k0" in cp["channel_versions"]:
            mutate(cp)

    saver = _checking_saver(edit)
    g = SG(_Wide)
    g.add_node("a", lambda s: {"k0": s.get("k0", 0) + 1})
    g.add_node("b", lambda s: {"k0": s["k0"] + 1})
    g.add_edge(S, "a")
    g.add_edge("a", "b")
    graph = g.compile(checkpointer=saver)
    graph.invoke({"k0": 0}, {"configurable": {"thread_id": "m"}})
    assert saver.checked >= 3


def test_engine_envelope_inner_dict_edited_in_place_after_registration() -> None:
    # an inner versions_seen dict is shared by later checkpoints of the run: editing it in
    # place must make every checkpoint holding it fall back to encoding
    kept: list[dict] = []

    def edit(cp: dict) -> None:
        kept.append(cp)
        if len(kept) == 4:
            # an inner dict the previous checkpoint also holds (not replaced since)
            inner = next(d for d in kept[2]["versions_seen"].values() if d)
            assert any(d is inner for d in cp["versions_seen"].values())
            inner[next(iter(inner))] = "00000000000000000000000000000009.5"

    saver = _checking_saver(edit)
    graph = _counting_chain(5, saver)
    graph.invoke({"k0": 0}, {"configurable": {"thread_id": "m"}})
    assert saver.checked >= 6
    for cp in kept:
        assert _core.pack_checkpoint_envelope(cp) == ref_envelope(cp)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_engine_envelopes_equal_ormsgpack_for_each_durability(durability: str) -> None:
    saver = _checking_saver()
    graph, inp, _ = next(_engine_graphs(saver))
    for i in range(3):
        graph.invoke(inp, {"configurable": {"thread_id": f"d{i}"}}, durability=durability)
    assert saver.checked >= 3


def test_checkpoint_timestamps_are_utc_isoformat() -> None:
    """`_algo.now` (native) gives what `datetime.now(timezone.utc).isoformat()` gives."""
    import re
    from datetime import datetime, timezone

    from warpgraph.pregel._algo import now

    for _ in range(200):
        before = datetime.now(timezone.utc)
        ts = now()
        after = datetime.now(timezone.utc)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00", ts), ts
        parsed = datetime.fromisoformat(ts)
        assert parsed.isoformat() == ts and parsed.utcoffset().total_seconds() == 0
        assert before.replace(microsecond=0) <= parsed <= after
