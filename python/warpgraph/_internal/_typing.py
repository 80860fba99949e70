"""Sentinels shared by channels, the engine and the loop."""

from __future__ import annotations

from typing import Any, Final


class _MissingType:
    """The 'no value' marker: distinct from None, which is a legitimate channel value."""

    __slots__ = ()
    _instance: _MissingType | None = None

    def __new__(cls) -> _MissingType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> Any:
        return (_MissingType, ())


MISSING: Final[Any] = _MissingType()
