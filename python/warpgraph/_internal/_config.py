"""Config helpers under LangGraph's private module path (`langgraph._internal._config`).

The implementations live in `warpgraph.config` (the callback managers in
`warpgraph._internal._lc`); this module only names them where LangGraph's code and tests
import them from.
"""

from __future__ import annotations

from collections.abc import Sequence

from warpgraph._internal._lc import (
    async_manager_for_config as get_async_callback_manager_for_config,
)
from warpgraph._internal._lc import manager_for_config as get_callback_manager_for_config
from warpgraph.config import (
    _CHECKPOINT_COORDINATE_KEYS,
    CONFIG_KEYS,
    DEFAULT_RECURSION_LIMIT,
    _merge_callbacks,
    _merge_metadata,
    _not_empty,
    ensure_config,
    merge_configs,
    patch_checkpoint_map,
    patch_config,
    patch_configurable,
    recast_checkpoint_ns,
)

__all__ = (
    "CONFIG_KEYS",
    "DEFAULT_RECURSION_LIMIT",
    "_CHECKPOINT_COORDINATE_KEYS",
    "_is_not_empty",
    "_merge_callbacks",
    "_merge_metadata",
    "ensure_config",
    "filter_to_user_tags",
    "get_async_callback_manager_for_config",
    "get_callback_manager_for_config",
    "merge_configs",
    "patch_checkpoint_map",
    "patch_config",
    "patch_configurable",
    "recast_checkpoint_ns",
)

_is_not_empty = _not_empty


def filter_to_user_tags(tags: Sequence[str] | None) -> list[str] | None:
    """`tags` without the `seq:step:N` tags runnable sequences add (None when none is left)."""
    kept = [t for t in tags or () if not t.startswith("seq:step")]
    return kept or None
