"""Resume / human-in-the-loop pieces of the loop that only run when a run resumes or
addresses a checkpoint (kept out of the per-step path)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from warpgraph._internal._constants import CONF, CONFIG_KEY_CHECKPOINT_ID

__all__ = ("superseded",)


def superseded(config: dict, saved: Any) -> Generator[tuple, Any, bool]:
    """Step-machine part: whether the thread's latest checkpoint is not `saved`, the one
    `config` addressed (a checkpoint with a child is never the latest; a leaf of an
    abandoned branch counts as superseded too, as in LangGraph)."""
    conf = config[CONF]
    latest = yield ("get_tuple", {**config, CONF: {**conf, CONFIG_KEY_CHECKPOINT_ID: None}})
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]
