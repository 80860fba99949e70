"""Shared pytest setup: hypothesis profiles and the `lib` fixture (langgraph / warpgraph)."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    deadline=None,
    max_examples=400,
    suppress_health_check=[HealthCheck.too_slow],
)
# `differential.libs` is importable whether or not tests/ is a package
_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

LONG = os.environ.get("WARPGRAPH_LONG_TESTS") == "1"
settings.load_profile("long" if LONG else "default")


def pytest_configure(config):
    config.addinivalue_line("markers", "long: opt-in long variant (WARPGRAPH_LONG_TESTS=1)")


def pytest_collection_modifyitems(config, items):
    if LONG:
        return
    skip = pytest.mark.skip(reason="long variant; set WARPGRAPH_LONG_TESTS=1")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["langgraph", "warpgraph"])
def lib(request):
    """Each library in turn; warpgraph is skipped while it is not importable."""
    from differential.libs import get_lib, warpgraph_import_error

    if request.param == "warpgraph" and (err := warpgraph_import_error()) is not None:
        pytest.skip(f"warpgraph not importable yet ({err})")
    return get_lib(request.param)
