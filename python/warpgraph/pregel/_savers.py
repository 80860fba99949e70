"""Recognising warpgraph's own InMemorySaver, whose versions the engine computes natively."""

from __future__ import annotations

from typing import Any


def _is_memory_saver(saver: Any) -> bool:
    nv = _saver_next_version()
    return (
        bool(nv)
        and type(saver).__module__ == "warpgraph.checkpoint.memory"
        and (type(saver).__name__ in ("InMemorySaver", "MemorySaver"))
    )


_SAVER_NV: Any = None


def _saver_next_version() -> Any:
    """InMemorySaver's get_next_version (string versions), which the engine computes natively."""
    global _SAVER_NV
    if _SAVER_NV is None:
        try:
            from warpgraph.checkpoint.memory import InMemorySaver

            _SAVER_NV = InMemorySaver.get_next_version
        except ImportError:
            _SAVER_NV = False
    return _SAVER_NV
