"""The harness itself: normalisation, difference detection, and reference self-consistency."""

import pytest

from . import scenarios_core, scenarios_features, scenarios_hitl  # noqa: F401 - registers
from .harness import REGISTRY, compare_async, compare_sync, normalise_trace, run_sync
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
    compare_sync(REGISTRY[name], api, None, target=get_lib("langgraph"))


@pytest.mark.parametrize("name", list(REGISTRY))
async def test_reference_self_consistent_async(name):
    await compare_async(REGISTRY[name], "multi", None, target=get_lib("langgraph"))
