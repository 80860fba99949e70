"""Every registered scenario: reference langgraph vs the target, per API, sync and async."""

import pytest

from . import scenarios_all  # noqa: F401 - registers the scenarios
from .harness import compare_async, compare_sync, params


@pytest.mark.parametrize(("scn", "api", "durability"), params(aio=False))
def test_sync(scn, api, durability):
    compare_sync(scn, api, durability)


@pytest.mark.parametrize(("scn", "api", "durability"), params(aio=True))
async def test_async(scn, api, durability):
    await compare_async(scn, api, durability)
