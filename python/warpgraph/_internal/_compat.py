"""Typing features newer than Python 3.10, from `typing` where it has them.

Python >= 3.13 has all of them in `typing`; older versions get them from the
`typing_extensions` backport, a runtime dependency only there (see pyproject.toml).
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 13):
    from typing import (
        NotRequired,
        Required,
        Self,
        TypeAliasType,
        TypedDict,
        TypeVar,
        Unpack,
        is_typeddict,
    )
else:  # pragma: no cover - exercised on the older interpreters
    from typing_extensions import (
        NotRequired,
        Required,
        Self,
        TypeAliasType,
        TypedDict,
        TypeVar,
        Unpack,
        is_typeddict,
    )

__all__ = (
    "NotRequired",
    "Required",
    "Self",
    "TypeAliasType",
    "TypeVar",
    "TypedDict",
    "Unpack",
    "is_typeddict",
)
