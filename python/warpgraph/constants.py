"""Public constants (mirrors `langgraph.constants`)."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Final

from warpgraph._internal import _constants
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINTER,
    TAG_HIDDEN,
    TAG_NOSTREAM,
    TASKS,
)
from warpgraph.warnings import LangGraphDeprecatedSinceV10

START: Final = sys.intern("__start__")
"""The first (virtual) node of a StateGraph."""
END: Final = sys.intern("__end__")
"""The last (virtual) node of a StateGraph."""

__all__ = (
    # kept importable from here for older code, as LangGraph does
    "CONF",
    "CONFIG_KEY_CHECKPOINTER",
    "END",
    "START",
    "TAG_HIDDEN",
    "TAG_NOSTREAM",
    "TASKS",
)


def __getattr__(name: str) -> Any:
    """`Send` / `Interrupt` and the private constants, still importable with a warning."""
    if name in ("Send", "Interrupt"):
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            f"Please use 'from langgraph.types import {name}' instead.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        from warpgraph import types

        return getattr(types, name)
    if not name.startswith("__") and hasattr(_constants, name):
        warnings.warn(
            f"Importing {name} from langgraph.constants is deprecated. "
            "This constant is now private and should not be used directly. "
            "Please let the LangGraph team know if you need this value.",
            LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        return getattr(_constants, name)
    raise AttributeError(f"module has no attribute '{name}'")
