"""The seeded-random scenarios of `scenarios_order.py`: reference langgraph vs the target,
per API, sync and async, with a long thread switch interval (see that module's doc)."""

import sys

import pytest

from .harness import LONG, compare_async, compare_sync
from .scenarios_order import ORDER


def _params(aio: bool) -> list:
    out = []
    for name, scn in ORDER.items():
        if aio not in scn.aio:
            continue
        for dur in scn.durabilities:
            for api in scn.all_apis():
                if dur is not None and not LONG and api not in ("invoke", "multi"):
                    continue
                out.append(pytest.param(scn, api, dur, id=f"{name}-{api}-{dur or 'default'}"))
    return out


@pytest.fixture(autouse=True)
def _long_switch_interval():
    before = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


@pytest.mark.parametrize(("scn", "api", "durability"), _params(aio=False))
def test_sync(scn, api, durability):
    compare_sync(scn, api, durability)


@pytest.mark.parametrize(("scn", "api", "durability"), _params(aio=True))
async def test_async(scn, api, durability):
    await compare_async(scn, api, durability)


def test_every_scenario_draws():
    """The scenarios' values depend on the seed (they do draw from the global random)."""
    import random

    from .libs import get_lib

    lib = get_lib("langgraph")
    graph, inputs, _ = ORDER["order_parallel"].build(lib)
    first = graph.invoke(inputs[0])
    random.seed(1)
    assert graph.invoke(inputs[0]) != first
