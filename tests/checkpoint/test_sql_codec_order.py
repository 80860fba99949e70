"""SQL checkpoint records: a skip-delta record rebuilds versions_seen in the checkpoint's
order (nodes new to the base appended as the record lists them, not in a set's order)."""

from __future__ import annotations

from warpgraph.checkpoint._sql.codec import apply_delta


def test_new_nodes_keep_the_records_order() -> None:
    nodes = [f"node{i}" for i in range(40)]  # (enough names that a set's order differs)
    delta = {"s": {n: {"ch": 1} for n in nodes}, "sk": {"base": ["old"]}}
    _, vs = apply_delta({}, {"base": {"old": 1, "keep": 2}}, delta)
    assert list(vs) == ["base", *nodes]
    assert vs["base"] == {"keep": 2}
    assert all(vs[n] == {"ch": 1} for n in nodes)


def test_a_node_only_losing_keys_stays_in_place() -> None:
    base = {"a": {"x": 1}, "b": {"x": 1, "y": 2}, "c": {"x": 1}}
    _, vs = apply_delta({}, base, {"s": {"d": {"x": 3}}, "sk": {"b": ["y"]}})
    assert list(vs) == ["a", "b", "c", "d"] and vs["b"] == {"x": 1}
