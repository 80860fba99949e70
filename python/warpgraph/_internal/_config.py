"""Config helpers under LangGraph's private module path (`langgraph._internal._config`).

The implementations live in `warpgraph.config` (and the snapshot's checkpoint map in
`warpgraph.pregel._checkpoint`); this module only names them where LangGraph's code and
tests import them from.
"""

from __future__ import annotations

from warpgraph.config import (
    _CHECKPOINT_COORDINATE_KEYS,
    CONFIG_KEYS,
    DEFAULT_RECURSION_LIMIT,
    ensure_config,
    merge_configs,
    patch_config,
    patch_configurable,
    recast_checkpoint_ns,
)
from warpgraph.pregel._checkpoint import patch_checkpoint_map

__all__ = (
    "CONFIG_KEYS",
    "DEFAULT_RECURSION_LIMIT",
    "_CHECKPOINT_COORDINATE_KEYS",
    "ensure_config",
    "merge_configs",
    "patch_checkpoint_map",
    "patch_config",
    "patch_configurable",
    "recast_checkpoint_ns",
)
