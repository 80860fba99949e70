"""InMemorySaver compared with LangGraph's InMemorySaver on the same operations, plus the
storage rules warpgraph adds (blob sharing, atomic puts, prune/copy/delete_for_runs)."""

from __future__ import annotations

import enum
import operator
import random
import re
from typing import Annotated

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict
from warpgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    get_checkpoint_metadata,
)
from warpgraph.checkpoint.base.id import uuid6
from warpgraph.checkpoint.memory import InMemorySaver, MemorySaver

ref_memory = pytest.importorskip("langgraph.checkpoint.memory")
ref_base = pytest.importorskip("langgraph.checkpoint.base")
RefSaver = ref_memory.InMemorySaver


@__import__("dataclasses").dataclass
class _P:
    v: int


def _cfg(thread: str = "t", ns: str = "", cid: str | None = None) -> dict:
    conf = {"thread_id": thread, "checkpoint_ns": ns}
    if cid:
        conf["checkpoint_id"] = cid
    return {"configurable": conf}


def _cp(cid: str, values: dict, versions: dict, seen: dict | None = None) -> dict:
    return {
        "v": 4,
        "id": cid,
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": values,
        "channel_versions": versions,
        "versions_seen": seen or {},
        "updated_channels": sorted(values) or None,
    }


def _script(saver) -> None:
    """A small history: 3 checkpoints, two namespaces, writes incl. special channels."""
    ids = [f"1ef0000{i}-0000-6000-8000-000000000000" for i in range(4)]
    c1 = saver.put(
        _cfg(),
        _cp(ids[0], {"a": 1, "b": [1]}, {"a": 1, "b": 1}),
        {"source": "input", "step": -1, "parents": {}, "run_id": "r1"},
        {"a": 1, "b": 1},
    )
    saver.put_writes(c1, [("a", 2), ("__interrupt__", {"q": 1})], "task1", "path1")
    saver.put_writes(c1, [("a", 99)], "task1", "path1")  # idempotent
    saver.put_writes(c1, [("__interrupt__", {"q": 2})], "task1", "path1")  # overwrites
    saver.put_writes(c1, [("b", [5])], "task0", "path0")
    c2 = saver.put(
        c1,
        _cp(ids[1], {"a": 2, "b": [1]}, {"a": 2, "b": 1}, {"n": {"a": 1}}),
        {"source": "loop", "step": 0, "parents": {}, "run_id": "r1"},
        {"a": 2},
    )
    saver.put(
        _cfg(ns="sub:1"),
        _cp(ids[2], {"x": "s"}, {"x": 1}),
        {"source": "loop", "step": 0, "parents": {"": ids[1]}},
        {"x": 1},
    )
    saver.put(
        c2,
        _cp(ids[3], {"b": [1]}, {"a": 3, "b": 1}),
        {"source": "loop", "step": 1, "parents": {}, "run_id": "r2", "score": 5},
        {"a": 3},
    )


def _tuples(saver, config, **kw) -> list:
    return [tuple(t) for t in saver.list(config, **kw)]


def test_storage_bytes_identical_to_reference() -> None:
    ours, ref = InMemorySaver(), RefSaver()
    _script(ours)
    _script(ref)
    assert {k: dict(v) for k, v in ours.storage.items()} == {
        k: dict(v) for k, v in ref.storage.items()
    }
    assert dict(ours.writes) == dict(ref.writes)
    assert dict(ours.blobs) == dict(ref.blobs)


@pytest.mark.parametrize(
    "config,kw",
    [
        (_cfg(), {}),
        (None, {}),
        ({"configurable": {"thread_id": "t"}}, {}),
        (_cfg(ns="sub:1"), {}),
        (_cfg(), {"limit": 1}),
        (_cfg(), {"before": _cfg(cid="1ef00003-0000-6000-8000-000000000000")}),
        (_cfg(), {"filter": {"run_id": "r1"}}),
        (_cfg(), {"filter": {"score": 5, "step": 1}}),
        (_cfg(), {"filter": {"source": "nope"}}),
        (_cfg(cid="1ef00001-0000-6000-8000-000000000000"), {}),
    ],
)
def test_list_matches_reference(config, kw) -> None:
    ours, ref = InMemorySaver(), RefSaver()
    _script(ours)
    _script(ref)
    assert _tuples(ours, config, **kw) == _tuples(ref, config, **kw)


@pytest.mark.parametrize(
    "config",
    [
        _cfg(),
        _cfg(cid="1ef00000-0000-6000-8000-000000000000"),
        _cfg(ns="sub:1"),
        _cfg(thread="missing"),
        _cfg(cid="nope"),
    ],
)
def test_get_tuple_matches_reference(config) -> None:
    ours, ref = InMemorySaver(), RefSaver()
    _script(ours)
    _script(ref)
    got, exp = ours.get_tuple(config), ref.get_tuple(config)
    assert (got and tuple(got)) == (exp and tuple(exp))
    assert ours.get(config) == ref.get(config)


async def test_async_twins_match_sync() -> None:
    saver = InMemorySaver()
    _script(saver)
    assert tuple(await saver.aget_tuple(_cfg())) == tuple(saver.get_tuple(_cfg()))
    assert [tuple(t) async for t in saver.alist(_cfg(), limit=2)] == _tuples(saver, _cfg(), limit=2)


async def test_async_twins_call_the_instance_methods() -> None:
    """As with LangGraph's saver, a subclass overriding `put` / `put_writes` / `get_tuple`
    sees the async API's calls too (test savers record puts that way)."""
    calls: list[str] = []

    class Recording(InMemorySaver):
        def put(self, *args, **kwargs):
            calls.append("put")
            return super().put(*args, **kwargs)

        def put_writes(self, *args, **kwargs):
            calls.append("put_writes")
            return super().put_writes(*args, **kwargs)

        def get_tuple(self, config):
            calls.append("get_tuple")
            return super().get_tuple(config)

    saver = Recording()
    cp = _cp(uuid6(clock_seq=0), {}, {})
    cfg = await saver.aput(_cfg(), cp, {"step": 0}, {})
    await saver.aput_writes(cfg, [("c", 1)], "task")
    got = await saver.aget_tuple(cfg)
    assert calls == ["put", "put_writes", "get_tuple"]
    assert got.pending_writes == [("task", "c", 1)]


def test_unchanged_channel_is_stored_once() -> None:
    saver = InMemorySaver()
    _script(saver)
    b_blobs = [k for k in saver.blobs if k[2] == "b"]
    assert b_blobs == [("t", "", "b", 1)]  # b never changed version: one blob for 3 checkpoints
    latest = saver.get_tuple(_cfg())
    assert latest.checkpoint["channel_values"] == {"b": [1]}  # a=3 had no value -> "empty"


def test_put_unserializable_names_channel_and_stores_nothing() -> None:
    saver = InMemorySaver()

    class Opaque:
        pass

    cp = _cp("1", {"ok": 1, "bad": Opaque()}, {"ok": 1, "bad": 1})
    with pytest.raises(TypeError, match=r"channel 'bad'.*Opaque"):
        saver.put(_cfg(), cp, {}, {"ok": 1, "bad": 1})
    assert not saver.blobs and not any(saver.storage.values())
    with pytest.raises(TypeError, match=r"channel 'w'.*Opaque"):
        saver.put_writes(_cfg(cid="1"), [("fine", 1), ("w", Opaque())], "task")
    assert not saver.writes


def test_writes_idx_and_overwrite_rules() -> None:
    saver = InMemorySaver()
    _script(saver)
    stored = saver.writes[("t", "", "1ef00000-0000-6000-8000-000000000000")]
    assert stored[("task1", 0)][1:3] == ("a", saver.serde.dumps_typed(2))
    assert stored[("task1", WRITES_IDX_MAP["__interrupt__"])][2] == saver.serde.dumps_typed(
        {"q": 2}
    )
    pending = saver.get_tuple(_cfg(cid="1ef00000-0000-6000-8000-000000000000")).pending_writes
    # sorted by (task_path, task_id, idx)
    assert pending == [("task0", "b", [5]), ("task1", "__interrupt__", {"q": 2}), ("task1", "a", 2)]


def test_get_next_version_same_strings_as_reference() -> None:
    ours, ref = InMemorySaver(), RefSaver()
    for current in (None, 1, 7, "00000000000000000000000000000041.0.123"):
        random.seed(1234)
        a = ours.get_next_version(current, None)
        random.seed(1234)
        assert a == ref.get_next_version(current, None)
    assert re.fullmatch(r"0{31}1\..{16,}", ours.get_next_version(None, None))


def test_delete_for_runs_collects_unreferenced_blobs() -> None:
    saver = InMemorySaver()
    _script(saver)
    saver.delete_for_runs(["r1"])
    ids = [t.checkpoint["id"] for t in saver.list(_cfg(ns=""))]
    assert ids == ["1ef00003-0000-6000-8000-000000000000"]
    # a@1, a@2 belonged only to deleted checkpoints; b@1 and a@3 are still referenced
    assert sorted(k[2:] for k in saver.blobs if k[1] == "") == [("a", 3), ("b", 1)]
    assert not any(
        k[2] != "1ef00003-0000-6000-8000-000000000000" for k in saver.writes if k[1] == ""
    )
    assert saver.get_tuple(_cfg()).checkpoint["channel_values"] == {"b": [1]}


def test_prune_keep_latest_keeps_pending_writes_and_needed_blobs() -> None:
    saver = InMemorySaver()
    _script(saver)
    latest = "1ef00003-0000-6000-8000-000000000000"
    saver.put_writes(_cfg(cid=latest), [("__interrupt__", {"q": "resume me"})], "t9")
    saver.prune(["t"], strategy="keep_latest")
    assert [t.checkpoint["id"] for t in saver.list(_cfg())] == [latest]
    assert len(list(saver.list(_cfg(ns="sub:1")))) == 1
    tup = saver.get_tuple(_cfg())
    assert tup.pending_writes == [("t9", "__interrupt__", {"q": "resume me"})]
    assert tup.checkpoint["channel_values"] == {"b": [1]}
    assert sorted(k[2:] for k in saver.blobs if k[1] == "") == [("a", 3), ("b", 1)]
    with pytest.raises(ValueError, match="Unknown prune strategy"):
        saver.prune(["t"], strategy="bogus")
    saver.prune(["t"], strategy="delete")
    assert saver.get_tuple(_cfg()) is None and not saver.blobs


def test_copy_thread_is_independent_of_source() -> None:
    saver = InMemorySaver()
    _script(saver)
    saver.copy_thread("t", "u")
    src = [(t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(_cfg("t"))]
    dst = [(t.checkpoint, t.metadata, t.pending_writes) for t in saver.list(_cfg("u"))]
    assert src == dst
    saver.delete_thread("t")
    assert saver.get_tuple(_cfg("t")) is None
    assert len(list(saver.list(_cfg("u", ns="sub:1")))) == 1


def test_saved_checkpoint_is_not_mutated_and_returned_objects_are_fresh() -> None:
    saver = InMemorySaver()
    cp = _cp("1", {"a": [1]}, {"a": 1})
    saver.put(_cfg(), cp, {}, {"a": 1})
    cp["channel_values"]["a"].append(2)
    got = saver.get_tuple(_cfg()).checkpoint
    assert got["channel_values"] == {"a": [1]}
    got["channel_values"]["a"].append(3)
    assert saver.get_tuple(_cfg()).checkpoint["channel_values"] == {"a": [1]}


def test_metadata_merge_matches_reference() -> None:
    config = {
        "configurable": {
            "thread_id": "t",
            "user": "u\u0000x",
            "__secret": 1,
            "n": 2.5,
            "obj": object(),
            "langgraph_step": 3,
        },
        "metadata": {"tag": "v", "source": "ignored"},
    }
    md = {"source": "loop", "step": 1, "note": "a\u0000b"}
    assert get_checkpoint_metadata(config, md) == ref_base.get_checkpoint_metadata(config, md)


class _Color(str, enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


_meta_keys = st.sampled_from(
    [
        "source",
        "step",
        "user",
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "langgraph_node",
        "__private",
        "_one",
        "run_id",
        "k\u0000",
        "",
        "\udc80k",  # a lone surrogate: no UTF-8 view
        7,  # not a str: LangGraph calls startswith on it unless it is skipped first
    ]
)
_meta_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(alphabet=st.sampled_from(["a", "\u0000", "é", " ", "\ud800"]), max_size=5),
    st.sampled_from([_Color.RED, _Level.HIGH, b"raw", ("t",), object()]),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_meta_keys, _meta_values, max_size=5),
    st.one_of(st.none(), st.dictionaries(_meta_keys, _meta_values, max_size=5)),
    st.one_of(st.none(), st.dictionaries(_meta_keys, _meta_values, max_size=6)),
)
def test_metadata_merge_matches_reference_on_generated_configs(md, meta, conf) -> None:
    """The native merge (one crossing per checkpoint) against LangGraph's, value types
    included (a str subclass comes out as a plain str, an IntEnum as itself)."""
    config = {"metadata": meta, "configurable": conf}
    try:
        want = ref_base.get_checkpoint_metadata(config, md)
    except AttributeError:  # a non-str key reached startswith
        with pytest.raises(AttributeError):
            get_checkpoint_metadata(config, md)
        return
    got = get_checkpoint_metadata(config, md)
    assert got == want
    assert [(k, type(v)) for k, v in got.items()] == [(k, type(v)) for k, v in want.items()]


def test_base_class_contract() -> None:
    class Minimal(BaseCheckpointSaver):
        def get_tuple(self, config):
            return None

    saver = Minimal()
    assert saver.get(_cfg()) is None
    assert saver.get_next_version(None, None) == 1
    assert saver.get_next_version(4, None) == 5
    with pytest.raises(NotImplementedError):
        saver.get_next_version("1.0", None)
    for name, args in [
        ("delete_for_runs", ([],)),
        ("copy_thread", ("a", "b")),
        ("prune", ([],)),
        ("put_writes", (_cfg(), [], "t")),
    ]:
        with pytest.raises(NotImplementedError):
            getattr(saver, name)(*args)
    assert saver.config_specs == []
    assert MemorySaver is InMemorySaver
    # LangGraph's savers are accepted wherever a warpgraph saver is expected.
    assert isinstance(RefSaver(), BaseCheckpointSaver)
    assert not isinstance(object(), BaseCheckpointSaver)


def test_with_allowlist_clones_with_extended_serde() -> None:
    saver = InMemorySaver()
    clone = saver.with_allowlist([("some.mod", "Thing")])
    assert clone is not saver and clone.storage is saver.storage
    assert clone.serde is not saver.serde


def test_uuid6_layout_matches_reference() -> None:
    from langgraph.checkpoint.base.id import uuid6 as ref_uuid6

    for seq in (-2, -1, 0, 1, 16383, 16384):
        ours, ref = uuid6(clock_seq=seq), ref_uuid6(clock_seq=seq)
        assert ours.version == ref.version == 6
        assert ours.clock_seq == ref.clock_seq
        assert str(ours)[14] == str(ref)[14] == "6"
        assert str(ours)[19:23] == str(ref)[19:23]  # variant + 14-bit clock_seq
    ids = [str(uuid6(clock_seq=0)) for _ in range(200)]
    assert ids == sorted(ids) and len(set(ids)) == 200


class _Rot:
    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        return "rot", bytes((b + 1) % 256 for b in plaintext)

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        return bytes((b - 1) % 256 for b in ciphertext)


def test_with_allowlist_through_encrypted_serializer() -> None:
    import dataclasses

    from warpgraph.checkpoint.serde.encrypted import EncryptedSerializer

    saver = InMemorySaver(serde=EncryptedSerializer(_Rot()))
    saver.put(_cfg(), _cp("1", {"p": _P(1)}, {"p": 1}), {}, {"p": 1})
    assert saver.blobs[("t", "", "p", 1)][0] == "msgpack+rot"
    assert saver.get_tuple(_cfg()).checkpoint["channel_values"] == {"p": {"v": 1}}
    clone = saver.with_allowlist([_P])
    assert isinstance(clone.serde, EncryptedSerializer)
    assert clone.get_tuple(_cfg()).checkpoint["channel_values"] == {"p": _P(1)}
    assert dataclasses.is_dataclass(_P)


# --- envelopes the engine encodes with the checkpoint ---------------------------------------


class _EnvState(TypedDict):
    n: int
    log: Annotated[list, operator.add]


def _graphs_for_envelopes():
    from warpgraph.graph import END, START, StateGraph
    from warpgraph.types import Send

    S = _EnvState
    loop = StateGraph(S)  # a self-loop (lone steps)
    loop.add_node("inc", lambda s: {"n": s["n"] + 1, "log": [s["n"]]})
    loop.add_edge(START, "inc")
    loop.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 12 else END)

    wide = StateGraph(S)  # parallel branches, a join and a Send fan-out (general path)
    wide.add_node("a", lambda s: {"log": ["a"]})
    wide.add_node("b", lambda s: {"log": ["b"]})
    wide.add_node("each", lambda s: {"log": [s["n"]]})
    wide.add_node("join", lambda s: {"n": len(s["log"])})
    wide.add_edge(START, "a")
    wide.add_edge(START, "b")
    wide.add_edge(["a", "b"], "join")
    wide.add_conditional_edges(
        "join", lambda s: [Send("each", {"n": i, "log": []}) for i in range(3)]
    )
    wide.add_edge("each", END)

    sub = StateGraph(S)
    sub.add_node("inner", lambda s: {"log": ["inner"]})
    sub.add_edge(START, "inner")
    parent = StateGraph(S)  # a subgraph node: its own namespace and loop
    parent.add_node("sub", sub.compile())
    parent.add_node("after", lambda s: {"n": 99})
    parent.add_edge(START, "sub")
    parent.add_edge("sub", "after")
    return [loop, wide, parent]


@pytest.mark.fast_paths
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_engine_encoded_envelopes_equal_the_serializers(monkeypatch, durability: str) -> None:
    """With warpgraph's InMemorySaver the engine encodes each checkpoint's envelope when it
    creates the checkpoint (`create_checkpoint_packed`); the stored bytes must be exactly
    what the saver's serializer gives for the checkpoint without its values."""
    checked: list[bool] = []
    store = InMemorySaver._store_packed

    def checking(self, config, checkpoint, metadata, new_versions, envelope):
        if envelope is not None:
            rest = {k: v for k, v in checkpoint.items() if k != "channel_values"}
            checked.append(self.serde.dumps_typed(rest) == ("msgpack", envelope))
        return store(self, config, checkpoint, metadata, new_versions, envelope)

    monkeypatch.setattr(InMemorySaver, "_store_packed", checking)
    for i, builder in enumerate(_graphs_for_envelopes()):
        saver = InMemorySaver()
        assert saver.takes_packed_puts()
        graph = builder.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": f"e{i}"}}
        graph.invoke({"n": 0, "log": []}, config, durability=durability)
        graph.invoke({"n": 1, "log": ["again"]}, config, durability=durability)  # again
        for snapshot in graph.get_state_history(config):  # every stored envelope decodes
            assert snapshot.metadata["step"] >= -1
    assert len(checked) >= (6 if durability == "exit" else 20) and all(checked)


def test_a_saver_overriding_put_gets_plain_puts() -> None:
    calls: list[str] = []

    class Logging(InMemorySaver):
        def put(self, config, checkpoint, metadata, new_versions):
            calls.append(checkpoint["id"])
            return super().put(config, checkpoint, metadata, new_versions)

    saver = Logging()
    assert not saver.takes_packed_puts()
    graph = _graphs_for_envelopes()[0].compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "p"}}
    graph.invoke({"n": 0, "log": []}, config)
    assert len(calls) == len(list(saver.list(config))) > 10


def test_latest_checkpoint_is_found_without_a_scan_and_stays_right() -> None:
    """get_tuple without an id keeps each namespace's latest id (no scan of a long
    thread); puts of older ids, deletions, copies and prunes leave it right."""
    from warpgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()

    def cp(cid: str) -> dict:
        return {
            "v": 4,
            "id": cid,
            "ts": "",
            "channel_values": {},
            "channel_versions": {},
            "versions_seen": {},
        }

    def latest(thread: str) -> str | None:
        got = saver.get_tuple({"configurable": {"thread_id": thread, "checkpoint_ns": ""}})
        return None if got is None else got.checkpoint["id"]

    t = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    u = {"configurable": {"thread_id": "u", "checkpoint_ns": ""}}
    saver.put(t, cp("b"), {}, {})
    assert latest("t") == "b"
    saver.put(t, cp("a"), {}, {})  # an older id stored later
    assert latest("t") == "b"
    saver.put(t, cp("c"), {}, {})
    assert latest("t") == "c"
    saver._drop("t", "", ["c"])  # (what delete_for_runs and prune use)
    assert latest("t") == "b"
    saver.put(u, cp("z"), {}, {})
    assert latest("u") == "z"
    saver.copy_thread("t", "u")
    assert latest("u") == "z"
    saver.delete_thread("u")
    saver.copy_thread("t", "u")
    assert latest("u") == "b"
    saver.prune(["u"])
    assert latest("u") == "b"
    saver.delete_thread("t")
    assert latest("t") is None
    saver.put(t, cp("a"), {}, {})
    assert latest("t") == "a"


def test_values_decode_in_one_call_like_one_by_one() -> None:
    """`loads_many` (the savers' batch decode) gives what `loads_typed` gives per value,
    falls back for other types and serializers, and raises a bad value's own error."""
    import pytest
    from warpgraph.checkpoint._sql.values import loads_many
    from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from warpgraph.types import Send

    serde = JsonPlusSerializer()
    values = [1, "x" * 100, None, b"raw", {"a": [1, 2.5]}, Send("n", {"k": 1}), (1, 2), 2**62]
    values += list(range(20))  # (more than 15: a 16-bit array header)
    typed = [serde.dumps_typed(v) for v in values]
    want = [serde.loads_typed(t) for t in typed]
    assert loads_many(serde, typed) == want
    only_msgpack = [t for t in typed if t[0] == "msgpack"]
    assert loads_many(serde, only_msgpack) == [serde.loads_typed(t) for t in only_msgpack]
    assert loads_many(serde, []) == []

    class Other(JsonPlusSerializer):
        pass

    assert loads_many(Other(), typed) == want
    with pytest.raises(Exception) as batch_err:
        loads_many(serde, [*only_msgpack, ("msgpack", b"\xc1")])
    with pytest.raises(Exception) as one_err:
        serde.loads_typed(("msgpack", b"\xc1"))
    assert type(batch_err.value) is type(one_err.value)
