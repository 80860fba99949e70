"""`langchain_core.messages`, imported the first time a message is actually met (never at
import of warpgraph), or None when langchain-core is not installed; shared by the graph
layer (`add_messages`) and the runtime (`pregel/_delta_ids.py`)."""

from __future__ import annotations

from typing import Any

__all__ = ("MESSAGES_DELTA_REDUCER", "lc_messages")

_lc: Any = None  # the module, False when not installed

MESSAGES_DELTA_REDUCER = "_wg_messages_delta"
"""Attribute (True) on the graph layer's batch reducer of message delta channels, so the
runtime recognises it without importing the graph layer."""


def lc_messages() -> Any:
    """langchain_core.messages, or None when langchain-core is not installed."""
    global _lc
    if _lc is None:
        try:
            import langchain_core.messages as lc
        except ImportError:
            lc = False
        _lc = lc
    return _lc or None
