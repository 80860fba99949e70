"""Hypothesis: update_state, bulk_update_state, replay and fork on random graphs leave the
same traces (results, snapshots, histories, saver checkpoints) on the reference and the
target. Runs with durability "sync": the reference's default durability serialises a join
barrier's live set after later steps changed it (see test_random_graphs.py)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .harness import target_lib
from .libs import get_lib
from .random_graphs import build_random, specs
from .state_scripts import Call
from .test_state_api import _compare, run_sync

SYNC = {"durability": "sync"}


def _script(spec, picks):
    def script(lib, saver):
        app, inputs, config = build_random(lib, spec)
        if saver is not None:
            app.checkpointer = saver
        c = {**config, "configurable": {"thread_id": "r1"}}
        limit = {"recursion_limit": spec.recursion_limit}  # (fan-out loops grow fast)
        yield Call("invoke", app, (inputs[0], c), SYNC)
        hist = yield Call("get_state_history", app, (c,))
        if isinstance(hist, Exception) or not hist:
            return
        su = lib.types.StateUpdate
        for i, (at, node, with_id) in enumerate(picks):
            snap = hist[at % len(hist)]
            name = spec.nodes[node % len(spec.nodes)]
            task = next((t for t in snap.tasks if t.name == name), None)
            tid = task.id if with_id and task is not None else None
            fork = yield Call("update_state", app, (snap.config, {"log": [f"u{i}"]}, name, tid))
            if isinstance(fork, Exception):
                continue
            yield Call("get_state", app, (fork,))
            yield Call("invoke", app, (None, {**fork, **limit}), SYNC)
        snap = hist[len(hist) // 2]
        yield Call("invoke", app, (None, {**snap.config, **limit}), SYNC)
        yield Call(
            "bulk_update_state",
            app,
            (c, [[su({"log": ["b0"]}, spec.nodes[0])], [su({"x": 7}, spec.nodes[-1])]]),
        )
        yield Call("update_state", app, (snap.config, None, "__copy__"))
        yield Call("get_state_history", app, (c,))
        yield Call("checkpoints", app, (c,))

    return script


picks = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 7), st.booleans()), min_size=1, max_size=3
)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@given(spec=specs(), picks=picks)
def test_random_graph_state_api(kind, spec, picks):
    target = target_lib()
    spec = replace(spec, checkpointer=True)
    script = _script(spec, picks)
    traces = [run_sync(script, lib, kind) for lib in (get_lib("langgraph"), target)]
    _compare("random", traces, f"sync, {kind}")
