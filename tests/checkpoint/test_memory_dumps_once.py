"""InMemorySaver: a list object standing in two channels of one put is encoded once."""

from __future__ import annotations

from warpgraph.checkpoint.memory import InMemorySaver, dumps_once
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


class _Counting(JsonPlusSerializer):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def dumps_typed(self, obj):  # type: ignore[override]
        self.calls.append(id(obj))
        return super().dumps_typed(obj)


def test_dumps_once_encodes_each_object_once_and_keeps_them_apart() -> None:
    serde = _Counting()
    once = dumps_once(serde.dumps_typed)
    shared, other = [{"a": 1}] * 3, [{"a": 1}] * 3
    assert once(shared) == once(shared) == once(other) == serde.dumps_typed(shared)
    assert serde.calls.count(id(shared)) == 2  # (once through the memo, once directly)
    assert serde.calls.count(id(other)) == 1


def test_a_put_encodes_a_list_shared_by_two_channels_once() -> None:
    serde = _Counting()
    saver = InMemorySaver(serde=serde)
    shared = [{"msg": "x" * 100}] * 40
    cp = {
        "v": 4,
        "id": "1f0a0000-0000-6000-8000-000000000001",
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": {"a": shared, "b": shared, "c": list(shared)},
        "channel_versions": {"a": 1, "b": 1, "c": 1},
        "versions_seen": {},
        "updated_channels": None,
    }
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saved = saver.put(config, cp, {}, {"a": 1, "b": 1, "c": 1})
    assert serde.calls.count(id(shared)) == 1
    values = saver.get_tuple(saved).checkpoint["channel_values"]
    assert values["a"] == values["b"] == values["c"] == shared
    assert values["a"] is not values["b"]  # (read back as distinct lists, as LangGraph's)
