"""`ensure_config`'s handling of each config's keys: empty values (None, empty list /
tuple / dict) are no values, standard keys merge, any other key goes to the configurable
(after the standard ones, so a configurable given in the same config keeps them)."""

from __future__ import annotations

import pytest
from warpgraph.config import DEFAULT_RECURSION_LIMIT, ensure_config

_BASE = {"tags": [], "metadata": {}, "callbacks": None, "configurable": {}}

CASES = [
    ([{"recursion_limit": 5000}], {"recursion_limit": 5000}),
    (
        [None, {"recursion_limit": 7, "configurable": {"thread_id": "t"}}],
        {"recursion_limit": 7, "configurable": {"thread_id": "t"}, "metadata": {"thread_id": "t"}},
    ),
    ([{"tags": [], "metadata": {}, "configurable": {}, "run_name": None}], {}),
    (
        [{"tags": ["a"], "extra": 1, "empty_extra": [], "none_extra": None}],
        {"tags": ["a"], "configurable": {"extra": 1}},
    ),
    (
        [{"configurable": {"a": 1}, "k": "v"}, {"configurable": {"b": 2}, "k2": ()}],
        {"configurable": {"a": 1, "k": "v", "b": 2}},
    ),
    (
        [{"extra": {"x": 1}}, {"recursion_limit": 3, "max_concurrency": 2, "metadata": {"m": 1}}],
        {
            "configurable": {"extra": {"x": 1}},
            "recursion_limit": 3,
            "max_concurrency": 2,
            "metadata": {"m": 1},
        },
    ),
    (
        [{"run_id": None, "callbacks": None, "other": (1,)}],
        {"configurable": {"other": (1,)}},
    ),
]


@pytest.mark.parametrize(("configs", "expected"), CASES)
def test_ensure_config_keys(configs, expected) -> None:
    got = ensure_config(*configs)
    want = {**_BASE, **expected}
    limit = want.pop("recursion_limit", None)
    assert int(got.pop("recursion_limit")) == (
        limit if limit is not None else int(DEFAULT_RECURSION_LIMIT)
    )
    assert got == want
