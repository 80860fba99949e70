"""The harness itself: normalisation, difference detection, and reference self-consistency."""

import itertools

import pytest

from . import scenarios_all  # noqa: F401 - registers the scenarios
from .harness import (
    REGISTRY,
    _fixed,
    _parts,
    compare_async,
    compare_sync,
    normalise_trace,
    run_sync,
    sort_rows,
    step_segments,
)
from .libs import get_lib
from .normalize import Normalizer, first_difference

UUID_A = "1f1ec509-c5c1-682c-bfff-0123456789ab"
UUID_B = "61b69aaa-b881-cff0-3379-1970ab48aef2"


def test_ids_map_to_first_seen_index():
    norm = Normalizer()
    out = norm({"x": UUID_B, "y": [UUID_A, f"sub:{UUID_B}|inner:{UUID_A}"]})
    assert out == {"x": "<id0>", "y": ["<id1>", "sub:<id0>|inner:<id1>"]}


def test_versions_timestamps_and_interrupt_ids():
    norm = Normalizer()
    v = "00000000000000000000000000000002.0.5233189273"
    assert norm(v) == "<v2>"
    assert norm("2026-11-30T02:06:09.784453+00:00") == "<ts>"
    assert norm("0123456789abcdef0123456789abcdef") == "<id0>"


def test_library_objects_compare_by_class_name():
    lg, norm = get_lib("langgraph"), Normalizer()
    assert norm(lg.Send("n", {"a": 1})) == {"!Send": ["n", {"a": 1}]}
    assert norm(ValueError("bad")) == {"!exc": "ValueError", "msg": "bad", "notes": []}


def test_first_difference_reports_path_and_key_order():
    assert first_difference({"a": [1, 2]}, {"a": [1, 2]}) is None
    assert "['a'][1]: 2 != 3" in first_difference({"a": [1, 2]}, {"a": [1, 3]})
    assert "keys" in first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert "length" in first_difference([1], [1, 2])
    assert first_difference((1,), [1]) is not None


def test_harness_detects_a_behaviour_change():
    """A scenario whose node differs between the two runs must not compare equal."""
    scn = REGISTRY["seed"]
    ref = normalise_trace(run_sync(scn, get_lib("langgraph"), "multi", None), False)
    calls = {"n": 0}

    def altered(lib):
        calls["n"] += 1
        graph, inputs, cfg = scn.build(lib)
        return graph, [{"n": 2}] + inputs[1:], cfg

    other = normalise_trace(
        run_sync(type(scn)("altered", altered), get_lib("langgraph"), "multi", None), False
    )
    assert first_difference(ref, other) is not None


SELF_CHECK_APIS = ("invoke", "multi")


@pytest.mark.parametrize("name", list(REGISTRY))
@pytest.mark.parametrize("api", SELF_CHECK_APIS)
def test_reference_self_consistent_sync(name, api):
    """langgraph vs langgraph: the normalised trace is deterministic (no flaky comparisons)."""
    scn = REGISTRY[name]
    compare_sync(scn, api, scn.durabilities[0], target=get_lib("langgraph"))


@pytest.mark.parametrize("name", list(REGISTRY))
async def test_reference_self_consistent_async(name):
    scn = REGISTRY[name]
    await compare_async(scn, "multi", scn.durabilities[0], target=get_lib("langgraph"))


# --- order: single-mode streams compare in order; only a step's parallel chunks are free
ORDER_APIS = ("values", "updates", "tasks", "checkpoints", "debug", "multi")


def _trace(scn, api):
    return run_sync(scn, get_lib("langgraph"), api, None)


@pytest.mark.parametrize("api", ORDER_APIS)
def test_a_reversed_stream_does_not_compare_equal(api):
    scn = REGISTRY["fanout_reducers_saver"]
    assert scn.parallel
    segments = step_segments(scn, api, None, None)
    ref = normalise_trace(_trace(scn, api), True, api, segments)
    rev = _trace(scn, api)
    for rec in rev["calls"]:
        assert len(rec["chunks"]) > 2
        rec["chunks"].reverse()
    assert first_difference(ref, normalise_trace(rev, True, api, segments)) is not None


@pytest.mark.parametrize("api", ("updates", "tasks", "multi", "debug"))
def test_chunks_of_parallel_tasks_may_come_in_any_order(api):
    """Swapping two chunks that parallel tasks of one step emitted compares equal."""
    scn = REGISTRY["fanout_reducers_saver"]
    segments = step_segments(scn, api, None, None)
    ref = normalise_trace(_trace(scn, api), True, api, segments)
    other = _trace(scn, api)
    chunks = other["calls"][0]["chunks"]
    if segments is not None:  # (no fixed chunks) within the first step with several
        start = 0
        for n in segments[0]:
            if n >= 2:
                break
            start += n
        pairs = [(start, start + 1)]
    else:
        free = [i for i, c in enumerate(chunks) if not _fixed(*_parts(c, api)[1:])]
        pairs = [(i, j) for i, j in itertools.pairwise(free) if j == i + 1]
    assert pairs, chunks
    i, j = pairs[0]
    chunks[i], chunks[j] = chunks[j], chunks[i]
    assert first_difference(ref, normalise_trace(other, True, api, segments)) is None


def test_step_segments_count_each_steps_chunks():
    scn = REGISTRY["fanout_reducers_saver"]
    segments = step_segments(scn, "updates", None, None)
    trace = _trace(scn, "updates")
    for seg, rec in zip(segments, trace["calls"]):
        assert sum(seg) == len(rec["chunks"])
        assert max(seg) >= 2  # the fan-out step: its tasks' updates are free
    assert step_segments(scn, "values", None, None) is None


def test_checkpoint_rows_keep_subgraph_runs_in_creation_order():
    """Namespaces hold random task ids: rows are ordered by the masked namespace, then by
    when each namespace got its first checkpoint."""
    ns1, ns2 = (
        "sub:ffffffff-0000-0000-0000-000000000000",
        "sub:00000000-0000-0000-0000-00000000000f",
    )
    ids = [f"1f0{i}0000-0000-6000-8000-000000000000" for i in range(5)]

    def row(ns, cid):
        return {"config": {"configurable": {"checkpoint_ns": ns, "checkpoint_id": cid}}}

    rows = [row(ns2, ids[4]), row(ns2, ids[3]), row("", ids[2]), row(ns1, ids[1]), row("", ids[0])]
    got = [
        (r["config"]["configurable"]["checkpoint_ns"], r["config"]["configurable"]["checkpoint_id"])
        for r in sort_rows(rows)
    ]
    assert got == [("", ids[2]), ("", ids[0]), (ns1, ids[1]), (ns2, ids[4]), (ns2, ids[3])]


def test_parallel_subgraph_runs_are_ordered_by_what_they_hold():
    """Two runs of one subgraph started in one step (same parent checkpoint) start in any
    order: they are ordered by their values, whichever got its first checkpoint first."""
    parent = {"parents": {"": "1f000000-0000-6000-8000-000000000000"}}

    def row(ns, cid, value):
        return {
            "config": {"configurable": {"checkpoint_ns": ns, "checkpoint_id": cid}},
            "checkpoint": {"channel_values": {"x": value}},
            "metadata": parent,
        }

    a = "sub:ffffffff-0000-0000-0000-000000000000"
    b = "sub:00000000-0000-0000-0000-00000000000f"
    early, late = "1f010000-0000-6000-8000-000000000000", "1f020000-0000-6000-8000-000000000000"
    for first, second in ((early, late), (late, early)):
        rows = [row(a, first, "beta"), row(b, second, "alpha")]
        assert [r["checkpoint"]["channel_values"]["x"] for r in sort_rows(rows)] == [
            "alpha",
            "beta",
        ]
