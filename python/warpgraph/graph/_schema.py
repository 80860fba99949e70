"""State schemas -> channels, and state objects <-> `(key, value)` updates."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Sequence
from functools import partial
from inspect import isclass, signature
from typing import Any, get_origin, get_type_hints

from warpgraph._internal._compat import NotRequired, Required
from warpgraph._internal._fields import (
    check_reducer_arity,
    get_cached_annotated_keys,
    get_update_as_tuples,
)
from warpgraph.channels.base import BaseChannel
from warpgraph.channels.binop import BinaryOperatorAggregate
from warpgraph.channels.last_value import LastValue

ROOT = "__root__"


# ---------------------------------------------------------------- managed values


def is_managed_value(value: Any) -> bool:
    """True for a managed-value spec (a `warpgraph.managed` ManagedValue subclass)."""
    if not isclass(value):
        return False
    try:
        from warpgraph.managed.base import ManagedValue  # type: ignore[import-not-found]
    except ImportError:
        return False
    return issubclass(value, ManagedValue)


def _managed_in(typ: Any) -> Any | None:
    meta = getattr(typ, "__metadata__", None)
    if meta:
        decoration = get_origin(meta[-1]) or meta[-1]
        if is_managed_value(decoration):
            return decoration
    if get_origin(typ) is not None:
        args = getattr(typ, "__args__", ())
        if args and args[0]:
            return _managed_in(args[0])
    return None


# ---------------------------------------------------------------- channels


def _strip_required(annotation: Any) -> Any:
    if getattr(annotation, "__origin__", None) in (Required, NotRequired):
        return annotation.__args__[0]
    return annotation


def _channel_in(typ: Any) -> BaseChannel | None:
    """`Annotated[T, channel]` or `Annotated[T, ChannelClass]` -> that channel."""
    for item in getattr(typ, "__metadata__", ()):
        if isinstance(item, BaseChannel):
            if hasattr(typ, "__origin__") and hasattr(item, "with_type"):  # a DeltaChannel
                return item.with_type(typ.__origin__)
            return item
        if isclass(item) and issubclass(item, BaseChannel):
            return item(getattr(typ, "__origin__", typ))
    return None


def _binop_in(typ: Any) -> BinaryOperatorAggregate | None:
    """`Annotated[T, reducer]` -> BinaryOperatorAggregate; the reducer takes exactly (a, b)."""
    meta = getattr(typ, "__metadata__", None)
    if not meta or not callable(meta[-1]):
        return None
    reducer = meta[-1]
    check_reducer_arity(reducer)
    return BinaryOperatorAggregate(typ, reducer)


def get_channel(name: str, annotation: Any, *, allow_managed: bool = True) -> Any:
    """The channel (or managed-value spec) for one state key."""
    annotation = _strip_required(annotation)
    if (managed := _managed_in(annotation)) is not None:
        if not allow_managed:
            raise ValueError(f"This {annotation} not allowed in this position")
        return managed
    channel = _channel_in(annotation) or _binop_in(annotation)
    if channel is None:
        channel = LastValue(annotation)
    channel.key = name
    return channel


def get_channels(
    schema: Any,
) -> tuple[dict[str, BaseChannel], dict[str, Any], dict[str, Any]]:
    """`(channels, managed specs, type hints)` for a state schema."""
    if not hasattr(schema, "__annotations__"):
        return {ROOT: get_channel(ROOT, schema, allow_managed=False)}, {}, {}
    hints = get_type_hints(schema, include_extras=True)
    every = {k: get_channel(k, t) for k, t in hints.items() if k != "__slots__"}
    channels = {k: v for k, v in every.items() if isinstance(v, BaseChannel)}
    managed = {k: v for k, v in every.items() if is_managed_value(v)}
    return channels, managed, hints


# ---------------------------------------------------------------- state objects


def annotated_keys(cls: type) -> tuple[str, ...]:
    """All annotated attribute names of a class, base classes first (cached)."""
    return get_cached_annotated_keys(cls)


def object_updates(obj: Any, keys: Sequence[str]) -> list[tuple[str, Any]]:
    """`(key, value)` updates of a dataclass / pydantic / annotated object."""
    return get_update_as_tuples(obj, keys)


def command_updates(cmd: Any) -> Sequence[tuple[str, Any]]:
    """`Command.update` as `(key, value)` tuples."""
    return cmd._update_as_tuples()


def _pydantic_base() -> type | None:
    """pydantic's BaseModel if pydantic is loaded (a schema can only be a pydantic model
    then: checking must not import pydantic for graphs that never use it)."""
    module = sys.modules.get("pydantic")
    return getattr(module, "BaseModel", None) if module is not None else None


def _coerce_state(schema: type, value: dict[str, Any]) -> Any:
    return schema(**value)


def pick_mapper(state_keys: Sequence[str], schema: Any) -> Callable[[Any], Any] | None:
    """Node-input mapper: build the schema object for pydantic / dataclass schemas."""
    if list(state_keys) == [ROOT]:
        return None
    if isclass(schema):
        base = _pydantic_base()
        if dataclasses.is_dataclass(schema) or (base is not None and issubclass(schema, base)):
            return partial(_coerce_state, schema)
    return None


def input_schema_of(func: Any) -> type | None:
    """The class annotated on the first parameter of `func`, if it has type hints."""
    try:
        hints = get_type_hints(func)
        if not hints:
            return None
        first = next(iter(signature(func).parameters))
    except (NameError, TypeError, StopIteration, ValueError):
        return None
    hint = hints.get(first)
    if isinstance(hint, type):
        try:
            if get_type_hints(hint):
                return hint
        except (NameError, TypeError):
            return None
    return None
