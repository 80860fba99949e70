"""Typing introspection helpers shared by the graph builder and Command."""

from __future__ import annotations

import sys
import types
import weakref
from collections.abc import Callable, Sequence
from inspect import Parameter, signature
from typing import Any

from warpgraph._internal._field_defaults import (
    _is_optional_type,
    _is_required_type,
    get_enhanced_type_hints,
    get_field_default,
)
from warpgraph._internal._typing import MISSING

__all__ = (
    "_is_optional_type",
    "_is_required_type",
    "check_reducer_arity",
    "get_cached_annotated_keys",
    "get_enhanced_type_hints",
    "get_field_default",
    "get_update_as_tuples",
)

_POSITIONAL = (Parameter.POSITIONAL_ONLY, Parameter.POSITIONAL_OR_KEYWORD)


def check_reducer_arity(reducer: Callable[..., Any]) -> None:
    """Raise ValueError unless `reducer` takes exactly two positional parameters.

    Same rule and message as LangGraph's state-schema parsing (`(a, b) -> c`).
    """
    sig = signature(reducer)
    positional = sum(p.kind in _POSITIONAL for p in sig.parameters.values())
    if positional != 2:
        raise ValueError(f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}")


_ANNOTATED_KEYS: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


def get_cached_annotated_keys(obj: type[Any]) -> tuple[str, ...]:
    """Annotated attribute names of class `obj`, base classes first (cached per class)."""
    cached = _ANNOTATED_KEYS.get(obj) if isinstance(obj, type) else None
    if cached is not None:
        return cached
    if not isinstance(obj, type):
        raise TypeError(f"Expected a type, got {type(obj)}. ")
    keys: list[str] = []
    for klass in reversed(obj.__mro__):
        annotations = klass.__dict__.get("__annotations__")  # noqa: RUF063 (own, not inherited)
        if annotations is None:
            annotations = getattr(klass, "__annotations__", None)
        if annotations is None or isinstance(annotations, types.GetSetDescriptorType):
            continue
        keys.extend(annotations)
    return _ANNOTATED_KEYS.setdefault(obj, tuple(keys))


def _pydantic_base_model() -> type | None:
    module = sys.modules.get("pydantic")
    return getattr(module, "BaseModel", None) if module is not None else None


def get_update_as_tuples(input: Any, keys: Sequence[str]) -> list[tuple[str, Any]]:
    """(key, value) pairs of an object state update.

    A None attribute is kept only if the field's default is not None or (pydantic) the field
    was set explicitly.
    """
    base_model = _pydantic_base_model()
    if base_model is not None and isinstance(input, base_model):
        explicitly_set = input.model_fields_set
        defaults = {k: f.default for k, f in type(input).model_fields.items()}
    else:
        explicitly_set = None
        defaults = {}
    pairs: list[tuple[str, Any]] = []
    for key in keys:
        value = getattr(input, key, MISSING)
        if value is MISSING:
            continue
        if (
            value is not None
            or defaults.get(key, MISSING) is not None
            or (explicitly_set is not None and key in explicitly_set)
        ):
            pairs.append((key, value))
    return pairs
