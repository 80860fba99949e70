"""The seeded-random scenarios of `scenarios_order.py`: reference langgraph vs the target,
per API, sync and async, with a long thread switch interval (see that module's doc)."""

import sys

import pytest

from .harness import comparison_tests
from .scenarios_order import ORDER


@pytest.fixture(autouse=True)
def _long_switch_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


test_sync, test_async = comparison_tests(ORDER)


def test_every_scenario_draws():
    """The scenarios' values depend on the seed (they do draw from the global random)."""
    import random

    from .libs import get_lib

    lib = get_lib("langgraph")
    graph, inputs, _ = ORDER["order_parallel"].build(lib)
    first = graph.invoke(inputs[0])
    random.seed(1)
    assert graph.invoke(inputs[0]) != first
