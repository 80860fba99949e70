"""Imports every scenario module, so that `harness.REGISTRY` holds them all: the test
modules import this one instead of listing the scenario modules each."""

from . import (  # noqa: F401 - registers the scenarios
    scenarios_cache,
    scenarios_core,
    scenarios_delta,
    scenarios_features,
    scenarios_func,
    scenarios_func_cache,
    scenarios_hitl,
    scenarios_runtime,
    scenarios_stream_errors,
    scenarios_subgraph_runs,
)
