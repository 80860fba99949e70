"""Sentinels shared by channels, the engine and the loop."""

from __future__ import annotations

from typing import Any, Final


class _MissingType:
    """The 'no value' marker: distinct from None, which is a legitimate channel value.

    Exactly one instance exists (`MISSING`); copying or unpickling returns it.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __copy__(self) -> _MissingType:
        return self

    def __deepcopy__(self, memo: Any) -> _MissingType:
        return self

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _MissingType()
