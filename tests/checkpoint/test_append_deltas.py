"""Append deltas in InMemorySaver (`warpgraph/checkpoint/_sql/appends.py`): a growing list
channel is stored as its appended items, and every reader still gets the full values."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import ormsgpack
import pytest
from langgraph.checkpoint.memory import InMemorySaver as RefSaver
from langgraph.graph import StateGraph as RefGraph
from warpgraph.checkpoint._sql import appends
from warpgraph.checkpoint._sql.appends import DELTA_TYPE, AppendDeltaError
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.graph import END, START, StateGraph

messages = pytest.importorskip("langchain_core.messages")
from langgraph.graph.message import add_messages


class Log(TypedDict):
    log: Annotated[list, operator.add]
    n: int


class Chat(TypedDict):
    messages: Annotated[list, add_messages]
    n: int


def _turn(state: dict) -> dict:
    return {"log": [{"turn": state["n"], "text": "t" * 30}], "n": state["n"] + 1}


def _chat(state: dict) -> dict:
    n = state["n"]
    return {
        "messages": [
            messages.HumanMessage(f"q{n}", id=f"h{n}"),
            messages.AIMessage(f"a{n}", id=f"a{n}"),
        ],
        "n": n + 1,
    }


def _app(graph_cls: Any, schema: Any, node: Any, saver: Any, loop: int = 0) -> Any:
    g = graph_cls(schema)
    g.add_node("a", node)
    g.add_edge(START, "a")
    if loop:
        g.add_conditional_edges("a", lambda s: "a" if s["n"] < loop else END)
    else:
        g.add_edge("a", END)
    return g.compile(checkpointer=saver)


def _cfg(thread: str = "t", **extra: Any) -> dict:
    return {"configurable": {"thread_id": thread, **extra}}


def _history(app: Any, thread: str = "t") -> list:
    return [(h.values, h.next, h.metadata["step"]) for h in app.get_state_history(_cfg(thread))]


def _kinds(saver: InMemorySaver, channel: str) -> list[str]:
    return [b[0] for k, b in saver.blobs.items() if k[2] == channel]


def _run_turns(app: Any, first: dict, turns: int, thread: str = "t") -> None:
    app.invoke(first, _cfg(thread))
    for i in range(turns):
        app.invoke({"n": i + 1}, _cfg(thread))


def _assert_full_bytes(saver: InMemorySaver) -> None:
    """Every delta rebuilds into the very bytes the whole value would have been stored as."""
    for key, blob in list(saver.blobs.items()):
        if blob[0] == DELTA_TYPE:
            typed, value = saver._rebuild(*key)
            assert typed == saver.serde.dumps_typed(value)


@pytest.mark.parametrize("kind", ["dicts", "messages"])
@pytest.mark.parametrize("loop", [0, 40])
def test_history_equals_reference(kind: str, loop: int) -> None:
    schema, node, first = (
        (Log, _turn, {"log": [], "n": 0}) if kind == "dicts" else (Chat, _chat, {"n": 0})
    )
    ours, ref = InMemorySaver(), RefSaver()
    apps = [_app(StateGraph, schema, node, ours, loop), _app(RefGraph, schema, node, ref, loop)]
    for app in apps:
        if loop:
            app.invoke(first, _cfg())
        else:
            _run_turns(app, first, 40)
    channel = "log" if kind == "dicts" else "messages"
    kinds = _kinds(ours, channel)
    assert kinds.count(DELTA_TYPE) > len(kinds) // 2  # stored as deltas
    assert _history(apps[0]) == _history(apps[1])
    assert apps[0].get_state(_cfg()).values == apps[1].get_state(_cfg()).values
    _assert_full_bytes(ours)
    ours_bytes = sum(len(b[1]) for b in ours.blobs.values())
    ref_bytes = sum(len(b[1]) for b in ref.blobs.values())
    assert ours_bytes * 3 < ref_bytes


def test_disabled_stores_what_reference_stores() -> None:
    ours, ref = InMemorySaver(append_deltas=False), RefSaver()
    _run_turns(_app(StateGraph, Log, _turn, ours), {"log": [], "n": 0}, 10)
    _run_turns(_app(RefGraph, Log, _turn, ref), {"log": [], "n": 0}, 10)
    assert DELTA_TYPE not in _kinds(ours, "log")
    assert sorted(ours.blobs.values()) == sorted(ref.blobs.values())


def test_threads_written_without_deltas_load_and_continue() -> None:
    old = InMemorySaver(append_deltas=False)  # the layout of the savers before deltas
    _run_turns(_app(StateGraph, Log, _turn, old), {"log": [], "n": 0}, 6)
    new = InMemorySaver()
    new.storage.update(old.storage)
    new.writes.update(old.writes)
    new.blobs.update(old.blobs)
    app = _app(StateGraph, Log, _turn, new)
    assert _history(app) == _history(_app(StateGraph, Log, _turn, old))
    for i in range(5):
        app.invoke({"n": 10 + i}, _cfg())
    assert DELTA_TYPE in _kinds(new, "log")
    assert [e["turn"] for e in app.get_state(_cfg()).values["log"]] == [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        10,
        11,
        12,
        13,
        14,
    ]


def _rewrite(left: list, right: list) -> list:
    return [*right, *left]  # prepends: never an extension of the stored list


class Rewritten(TypedDict):
    log: Annotated[list, _rewrite]
    n: int


def test_non_append_values_are_stored_whole() -> None:
    saver = InMemorySaver()
    app = _app(StateGraph, Rewritten, _turn, saver)
    _run_turns(app, {"log": [], "n": 0}, 8)
    assert set(_kinds(saver, "log")) == {"msgpack"}
    assert len(app.get_state(_cfg()).values["log"]) == 9


def test_replaced_and_removed_messages_are_stored_whole() -> None:
    saver, ref = InMemorySaver(), RefSaver()
    apps = [_app(StateGraph, Chat, _chat, saver), _app(RefGraph, Chat, _chat, ref)]
    for app in apps:
        _run_turns(app, {"n": 0}, 4)
    before = len(saver.blobs)
    for app in apps:  # replace a message by id, then remove one
        app.update_state(_cfg(), {"messages": [messages.AIMessage("changed", id="a2")]})
        app.update_state(_cfg(), {"messages": [messages.RemoveMessage(id="h1")]})
        app.invoke({"n": 9}, _cfg())
    new_kinds = [b[0] for b in list(saver.blobs.values())[before:]]
    assert new_kinds[:2] == ["msgpack", "msgpack"] or "msgpack" in new_kinds
    assert _history(apps[0]) == _history(apps[1])
    _assert_full_bytes(saver)


def test_direct_puts_detect_identity_exactly() -> None:
    saver = InMemorySaver()
    items = [{"i": i} for i in range(5)]
    cfg = _cfg(checkpoint_ns="")
    versions: dict[str, Any] = {}

    def put(value: Any, version: int) -> None:
        nonlocal cfg
        versions["log"] = version
        checkpoint = {
            "v": 4,
            "id": f"1ef0000{version}-0000-6000-8000-000000000000",
            "ts": "2024-01-01T00:00:00+00:00",
            "channel_values": {"log": value},
            "channel_versions": dict(versions),
            "versions_seen": {},
            "updated_channels": ["log"],
        }
        cfg = saver.put(cfg, checkpoint, {"step": version}, {"log": version})

    put(items, 1)
    put([*items, {"i": 5}], 2)  # the same objects first: a delta
    copy = [dict(x) for x in items]
    put([*copy, {"i": 5}, {"i": 6}], 3)  # equal but other objects: whole
    grown = saver.get_tuple(cfg).checkpoint["channel_values"]["log"]
    put([*grown, {"i": 7}], 4)  # the objects a get_tuple gave out: a delta
    stored4 = saver._tails.held[("t", "", "log")][0].items
    grown.append({"i": 8})  # the read list changed in place: no extension of version 4
    put(grown, 5)
    stored4[0]["i"] = 0  # (the same objects: nothing to tell apart by identity)
    swapped = [{"i": 0}, *stored4[1:]]  # an item replaced: not an extension
    put(swapped, 6)
    kinds = [saver.blobs[("t", "", "log", v)][0] for v in range(1, 7)]
    # (version 5 extends version 3's objects, but a put keeps only the tail it leaves)
    assert kinds == ["msgpack", DELTA_TYPE, "msgpack", DELTA_TYPE, "msgpack", "msgpack"]
    want = {
        1: list(range(5)),
        2: list(range(6)),
        3: list(range(7)),
        4: list(range(8)),
        5: [*range(7), 8],
        6: list(range(8)),
    }
    for version, numbers in want.items():
        tup = saver.get_tuple(_cfg(checkpoint_id=f"1ef0000{version}-0000-6000-8000-000000000000"))
        assert tup.checkpoint["channel_values"]["log"] == [{"i": i} for i in numbers]
    _assert_full_bytes(saver)


def test_periodic_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(appends, "MAX_DEPTH", 4)
    saver = InMemorySaver()
    app = _app(StateGraph, Log, _turn, saver, loop=60)
    app.invoke({"log": [], "n": 0}, _cfg())
    for blob in saver.blobs.values():
        if blob[0] == DELTA_TYPE:
            depth = ormsgpack.unpackb(blob[1])[4]
            assert 1 <= depth <= 4
    kinds = _kinds(saver, "log")
    assert kinds.count("msgpack") >= 60 // 5
    ref = RefSaver()
    ref_app = _app(RefGraph, Log, _turn, ref, loop=60)
    ref_app.invoke({"log": [], "n": 0}, _cfg())
    assert _history(app) == _history(ref_app)


def test_bytes_rule_starts_new_bases() -> None:
    saver = InMemorySaver()
    app = _app(StateGraph, Log, _turn, saver, loop=200)
    app.invoke({"log": [], "n": 0}, _cfg())
    deltas = [ormsgpack.unpackb(b[1]) for b in saver.blobs.values() if b[0] == DELTA_TYPE]
    assert deltas and all(d[5] <= d[6] for d in deltas)  # chain bytes never above the base
    bases = _kinds(saver, "log").count("msgpack")
    assert 3 <= bases <= 20  # geometric: a handful for 200 appends, not one per step
    assert len(app.get_state(_cfg()).values["log"]) == 200


def test_fork_from_an_old_checkpoint_then_append() -> None:
    saver, ref = InMemorySaver(), RefSaver()
    apps = [_app(StateGraph, Log, _turn, saver), _app(RefGraph, Log, _turn, ref)]
    start = [{"turn": -i, "text": "s" * 30} for i in range(30)]  # a base the deltas fit in
    for app in apps:
        _run_turns(app, {"log": start, "n": 0}, 6)
    old = next(h for h in apps[0].get_state_history(_cfg()) if h.metadata["step"] == 4)
    old_ref = next(h for h in apps[1].get_state_history(_cfg()) if h.metadata["step"] == 4)
    for app, snap in ((apps[0], old), (apps[1], old_ref)):
        app.invoke({"n": 100}, snap.config)
        app.invoke({"n": 200}, _cfg())
    assert _history(apps[0]) == _history(apps[1])
    # the fork's first value extends the old checkpoint's version, not the thread's latest
    old_version = saver.get_tuple(old.config).checkpoint["channel_versions"]["log"]
    head = saver.get_tuple(_cfg())
    versions = []
    cursor = head
    while cursor is not None:
        versions.append(cursor.checkpoint["channel_versions"].get("log"))
        cursor = saver.get_tuple(cursor.parent_config) if cursor.parent_config else None
    fork_versions = versions[: versions.index(old_version)]
    firsts = [
        saver.blobs[("t", "", "log", v)]
        for v in dict.fromkeys(fork_versions)
        if v is not None and saver.blobs[("t", "", "log", v)][0] == DELTA_TYPE
    ]
    assert firsts
    assert ormsgpack.unpackb(firsts[-1][1])[1] == old_version
    _assert_full_bytes(saver)


def test_prune_copy_and_delete_keep_chains() -> None:
    saver = InMemorySaver()
    app = _app(StateGraph, Log, _turn, saver)
    _run_turns(app, {"log": [], "n": 0}, 12)
    want = app.get_state(_cfg()).values
    saver.copy_thread("t", "u")
    assert app.get_state(_cfg("u")).values == want
    saver.prune(["t"])
    assert len(list(saver.list(_cfg()))) == 1
    assert app.get_state(_cfg()).values == want  # the latest's chain survived the prune
    assert DELTA_TYPE in _kinds(saver, "log")
    app.invoke({"n": 50}, _cfg())
    assert len(app.get_state(_cfg()).values["log"]) == 14
    saver.delete_thread("u")
    assert app.get_state(_cfg()).values["log"][:13] == want["log"]
    saver.delete_for_runs([])
    _assert_full_bytes(saver)


def test_delete_for_runs_keeps_chains() -> None:
    saver = InMemorySaver()
    app = _app(StateGraph, Log, _turn, saver)
    app.invoke({"log": [], "n": 0}, _cfg())
    runs = []
    for i in range(5):
        cfg = _cfg()
        cfg["run_id"] = run = f"00000000-0000-4000-8000-00000000000{i}"
        runs.append(run)
        app.invoke({"n": i + 1}, cfg)
    want = app.get_state(_cfg()).values
    saver.delete_for_runs(runs[:3])
    assert app.get_state(_cfg()).values == want


def test_version_stored_again_rebases_its_dependents() -> None:
    saver = InMemorySaver()
    items = [{"i": i} for i in range(3)]
    cfg = saver.put(_cfg(checkpoint_ns=""), _checkpoint(1, items, 1), {}, {"log": 1})
    cfg2 = saver.put(cfg, _checkpoint(2, [*items, {"i": 3}], 2), {}, {"log": 2})
    assert saver.blobs[("t", "", "log", 2)][0] == DELTA_TYPE
    saver.put(_cfg(checkpoint_ns=""), _checkpoint(1, [{"x": 1}], 1), {}, {"log": 1})
    got = saver.get_tuple(cfg2).checkpoint["channel_values"]["log"]
    assert got == [{"i": 0}, {"i": 1}, {"i": 2}, {"i": 3}]


def _checkpoint(n: int, value: Any, version: int) -> dict:
    return {
        "v": 4,
        "id": f"1ef0000{n}-0000-6000-8000-000000000000",
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": {"log": value},
        "channel_versions": {"log": version},
        "versions_seen": {},
        "updated_channels": ["log"],
    }


def _delta_saver() -> tuple[InMemorySaver, dict]:
    saver = InMemorySaver()
    items = [{"i": i} for i in range(3)]
    cfg = saver.put(_cfg(checkpoint_ns=""), _checkpoint(1, items, 1), {}, {"log": 1})
    grown = [*items, {"i": 3}, {"i": 4}]
    cfg = saver.put(cfg, _checkpoint(2, grown, 2), {}, {"log": 2})
    assert saver.blobs[("t", "", "log", 2)][0] == DELTA_TYPE
    saver._clear_reads()
    return saver, cfg


def _corrupt(saver: InMemorySaver, fields: list | bytes) -> None:
    payload = fields if isinstance(fields, bytes) else ormsgpack.packb(fields)
    saver.blobs[("t", "", "log", 2)] = (DELTA_TYPE, payload)
    saver._clear_reads()


def test_good_delta_reads() -> None:
    saver, cfg = _delta_saver()
    assert saver.get_tuple(cfg).checkpoint["channel_values"]["log"] == [{"i": i} for i in range(5)]


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda f: b"\xc1garbage", "not valid msgpack"),
        (lambda f: [1, 2, 3], "8-item array"),
        (lambda f: [9, *f[1:]], "unknown format"),
        (lambda f: [*f[:2], -1, *f[3:]], "bad prefix count"),
        (lambda f: [*f[:2], 2, *f[3:]], "holds 3 items, the delta after it extends 2"),
        (lambda f: [f[0], 7, *f[2:]], "version 7: missing"),
        (lambda f: [f[0], 2, *f[2:]], "loops"),
        (lambda f: [*f[:3], 3, *f[4:]], "do not"),  # claims 3 items, holds 2
        (lambda f: [*f[:3], 1, *f[4:]], "do not hold the counted items"),  # holds more
        (lambda f: [*f[:7], f[7][:-2]], "do not"),  # truncated item bytes
        (lambda f: [*f[:7], "text"], "items are not bytes"),
        (lambda f: [*f[:4], 0, *f[5:]], "bad depth"),
    ],
)
def test_corrupt_deltas_raise_clear_errors(change: Any, message: str) -> None:
    saver, cfg = _delta_saver()
    fields = ormsgpack.unpackb(saver.blobs[("t", "", "log", 2)][1])
    _corrupt(saver, change(fields))
    with pytest.raises(AppendDeltaError, match=message) as info:
        saver.get_tuple(cfg)
    assert "'log'" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_base_that_is_not_a_list_is_an_error() -> None:
    saver, cfg = _delta_saver()
    saver.blobs[("t", "", "log", 1)] = saver.serde.dumps_typed({"not": "a list"})
    saver._clear_reads()
    with pytest.raises(AppendDeltaError, match="not a stored list"):
        saver.get_tuple(cfg)


def test_async_runs_store_deltas_and_match_reference() -> None:
    import asyncio

    async def run(app: Any) -> list:
        await app.ainvoke({"log": [], "n": 0}, _cfg())
        for i in range(12):
            await app.ainvoke({"n": i + 1}, _cfg())
        return [h.values async for h in app.aget_state_history(_cfg())]

    saver = InMemorySaver()
    ours = asyncio.run(run(_app(StateGraph, Log, _turn, saver)))
    ref = asyncio.run(run(_app(RefGraph, Log, _turn, RefSaver())))
    assert ours == ref
    assert _kinds(saver, "log").count(DELTA_TYPE) >= 6
    _assert_full_bytes(saver)
