"""Human-in-the-loop pieces checked directly: checkpoint layout migrations against
LangGraph's, `copy_checkpoint`, the empty-Command error, and the writer-mode session's
re-entry wait. (Runs and their checkpoints are compared in tests/differential/
scenarios_hitl.py.)"""

from __future__ import annotations

import copy
import operator
from typing import Annotated, TypedDict

import pytest
from differential.libs import get_lib
from differential.scenarios_hitl import _old_checkpoints, _old_layout_graph, _v
from warpgraph.errors import EmptyInputError
from warpgraph.pregel._checkpoint import copy_checkpoint
from warpgraph.pregel._persist import SaverSession


class _S(TypedDict, total=False):
    n: int
    items: Annotated[list, operator.add]


def _fan_graph(lib):
    """START -> src -> {x, y} (plain edges), src -(pick)-> z; `gone` in old checkpoints only."""
    g = lib.StateGraph(_S)
    for name in ("src", "x", "y", "z"):
        g.add_node(name, lambda s: {"items": ["."]})
    g.add_edge(lib.START, "src")
    g.add_edge("src", "x")
    g.add_edge("src", "y")
    g.add_conditional_edges("src", lambda s: "z", ["z"])
    return g.compile()


def _fan_checkpoints() -> list[dict]:
    """Pre-v3 layouts with the cases the renames meet: a plain edge to two targets, the new
    name already present with a larger or smaller version and with or without a value, a
    channel of a node the graph no longer has, seen versions for a node and interrupts."""
    base = {
        "v": 2,
        "ts": "2024-07-01T00:00:00+00:00",
        "id": "1ef00000-0000-6001-8000-0000000000aa",
    }
    return [
        {
            **base,
            "channel_values": {"n": 1, "src": "src", "start:src": "__start__"},
            "channel_versions": {"n": _v(3), "src": _v(3), "start:src": _v(2)},
            "versions_seen": {
                "src": {"start:src": _v(2)},
                "x": {"src": _v(2)},
                "__interrupt__": {"src": _v(3), "start:src": _v(2)},
            },
        },
        {
            **base,
            "channel_values": {"branch:to:z": "old", "branch:src:pick:z": "src"},
            "channel_versions": {
                "branch:to:z": _v(5),
                "branch:src:pick:z": _v(4),
                "start:gone": _v(4),
                "branch:src:pick:gone": _v(4),
            },
            "versions_seen": {"z": {"branch:src:pick:z": _v(4), "branch:to:z": _v(2)}},
        },
        {
            **base,
            "channel_values": {"branch:src:pick:z": "src"},
            "channel_versions": {"branch:to:z": _v(1), "branch:src:pick:z": _v(6), "src": _v(6)},
            "versions_seen": {"z": {"branch:to:z": _v(7), "branch:src:pick:z": _v(3)}},
            "pending_sends": [],
        },
        {
            **base,
            "v": 3,
            "channel_values": {"src": 1},
            "channel_versions": {"src": _v(1)},
            "versions_seen": {},
        },
        {**base, "channel_values": {}, "channel_versions": {}, "versions_seen": {}},
    ]


def _migrated(lib, graph_fn, checkpoint: dict) -> dict:
    cp = copy.deepcopy(checkpoint)
    graph_fn(lib)._migrate_checkpoint(cp)
    return cp


@pytest.mark.parametrize("idx", range(5))
def test_state_graph_migration_matches_langgraph(idx):
    cp = _fan_checkpoints()[idx]
    want = _migrated(get_lib("langgraph"), _fan_graph, cp)
    got = _migrated(get_lib("warpgraph"), _fan_graph, cp)
    assert got == want
    assert list(got["channel_values"]) == list(want["channel_values"])


@pytest.mark.parametrize("v", [1, 2])
def test_old_layout_history_migrates_like_langgraph(v):
    for cp, _meta in _old_checkpoints(v):
        want = _migrated(get_lib("langgraph"), lambda lib: _old_layout_graph(lib, None), cp)
        got = _migrated(get_lib("warpgraph"), lambda lib: _old_layout_graph(lib, None), cp)
        assert got == want
        assert "pending_sends" in got  # an empty list stays where it was


def test_pending_sends_move_to_the_tasks_channel():
    wg = get_lib("warpgraph")
    graph = _fan_graph(wg)
    sends = [wg.Send("x", {"n": 1})]
    cp = {
        "v": 3,
        "ts": "",
        "id": "1ef00000-0000-6001-8000-0000000000ab",
        "channel_values": {"n": 1},
        "channel_versions": {"n": _v(2), "branch:to:x": _v(4)},
        "versions_seen": {},
        "pending_sends": sends,
    }
    graph._migrate_checkpoint(cp)
    assert "pending_sends" not in cp
    assert cp["channel_values"]["__pregel_tasks"] is sends
    assert cp["channel_versions"]["__pregel_tasks"] == _v(4)
    current = {**cp, "v": 4, "pending_sends": sends}
    graph._migrate_checkpoint(current)
    assert current["pending_sends"] is sends  # v4 checkpoints are left alone


def test_copy_checkpoint_copies_levels_and_drops_pending_sends():
    cp = {
        "v": 2,
        "ts": "t",
        "id": "i",
        "channel_values": {"a": [1]},
        "channel_versions": {"a": 1},
        "versions_seen": {"n": {"a": 1}},
        "pending_sends": [1],
    }
    out = copy_checkpoint(cp)
    assert out == {
        **{k: v for k, v in cp.items() if k != "pending_sends"},
        "updated_channels": None,
    }
    out["channel_values"]["b"] = 2
    out["channel_versions"]["b"] = 2
    out["versions_seen"]["n"]["b"] = 2
    assert cp["channel_values"] == {"a": [1]} and cp["versions_seen"] == {"n": {"a": 1}}
    assert out["channel_values"]["a"] is cp["channel_values"]["a"]  # values are shared


@pytest.mark.parametrize("command", [{}, {"resume": None}])
def test_empty_command_error_is_both_classes(command):
    """LangGraph 1.2.24 fails on an empty Command with an UnboundLocalError of its own code;
    warpgraph's error is one too, and an EmptyInputError whose message says what is wrong."""
    errors = {}
    for name in ("langgraph", "warpgraph"):
        lib = get_lib(name)
        g = lib.StateGraph(_S)
        g.add_node("a", lambda s: {"n": 1})
        g.add_edge(lib.START, "a")
        graph = g.compile(checkpointer=lib.InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        graph.invoke({"n": 0}, cfg)
        with pytest.raises(UnboundLocalError) as info:
            graph.invoke(lib.Command(**command), cfg)
        errors[name] = info.value
    assert isinstance(errors["warpgraph"], EmptyInputError)
    assert str(errors["warpgraph"]) == "Received empty Command input"


class _Writer:
    def __init__(self) -> None:
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


class _Saver:
    def get_tuple(self, config):
        return None


def _nested(root: SaverSession) -> SaverSession:
    s = object.__new__(SaverSession)
    for slot in SaverSession.__slots__:
        setattr(s, slot, getattr(root, slot))
    s.root, s.buffer, s.closed = root, [], False
    return s


def test_nested_session_waits_only_for_a_namespace_that_outlives_its_task():
    """A checkpointer=True subgraph's own namespace ("sub", no task id) may have checkpoints
    an earlier call of this root run queued: its read waits for the root's writer. A
    namespace with the task's id ("sub:<task>") has none: no wait."""
    root = SaverSession(_Saver(), "async", False)
    root.writer = _Writer()
    _nested(root).get_tuple({"configurable": {"thread_id": "1", "checkpoint_ns": "p:t|sub:t2"}})
    assert root.writer.flushes == 0
    _nested(root).get_tuple({"configurable": {"thread_id": "1", "checkpoint_ns": "sub"}})
    assert root.writer.flushes == 1
    _nested(root).get_tuple({"configurable": {"thread_id": "1", "checkpoint_ns": "p:t|sub"}})
    assert root.writer.flushes == 2
