"""Public constants (mirrors `langgraph.constants`)."""

from __future__ import annotations

import sys
from typing import Final

from warpgraph._internal._constants import TAG_HIDDEN, TAG_NOSTREAM

START: Final = sys.intern("__start__")
"""The first (virtual) node of a StateGraph."""
END: Final = sys.intern("__end__")
"""The last (virtual) node of a StateGraph."""

__all__ = ("END", "START", "TAG_HIDDEN", "TAG_NOSTREAM")
