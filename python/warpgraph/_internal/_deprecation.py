"""Keyword arguments LangGraph renamed: the old name still works, with a warning."""

from __future__ import annotations

import warnings
from typing import Any

from warpgraph._internal._typing import MISSING

__all__ = ("renamed_kwarg",)


def renamed_kwarg(kwargs: dict[str, Any], old: str, new: str, category: type, current: Any) -> Any:
    """The value for the argument now called `new`: `current`, or, when that is None, what
    the caller passed under the old name (popped from `kwargs`). Passing `old` at all warns
    (`category`), at the line that called the function taking `kwargs`."""
    value = kwargs.pop(old, MISSING)
    if value is MISSING:
        return current
    warnings.warn(
        f"`{old}` is deprecated and will be removed. Please use `{new}` instead.",
        category=category,
        stacklevel=3,
    )
    return value if current is None else current
