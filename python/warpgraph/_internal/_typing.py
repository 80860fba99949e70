"""Sentinels shared by channels, the engine and the loop; typing helpers LangGraph's code
imports from `langgraph._internal._typing`."""

from __future__ import annotations

from dataclasses import Field
from typing import Any, ClassVar, Final, Protocol, TypeAlias

from warpgraph._internal._compat import TypedDict


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


class TypedDictLikeV1(Protocol):
    """Anything shaped like a TypedDict class whose key sets are class variables."""

    __required_keys__: ClassVar[frozenset[str]]
    __optional_keys__: ClassVar[frozenset[str]]


class TypedDictLikeV2(Protocol):
    """Anything shaped like a TypedDict class whose key sets are plain attributes."""

    __required_keys__: frozenset[str]
    __optional_keys__: frozenset[str]


class DataclassLike(Protocol):
    """Anything shaped like a dataclass."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


class PydanticModelLike(Protocol):
    """Anything shaped like a pydantic model class (pydantic is never imported for it)."""

    model_fields: ClassVar[dict[str, Any]]


StateLike: TypeAlias = TypedDictLikeV1 | TypedDictLikeV2 | DataclassLike | PydanticModelLike
"""A state schema: a TypedDict, a dataclass or a pydantic model."""


class DeprecatedKwargs(TypedDict):
    """The type of `**kwargs` that only carry deprecated keyword arguments."""


EMPTY_SEQ: tuple[str, ...] = ()
"""An empty sequence of names."""
