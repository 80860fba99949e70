"""Which state fields may be left out, and their defaults (LangGraph's `_internal._fields`
helpers behind its JSON schemas and config schemas)."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Optional, Union, get_origin, get_type_hints

from warpgraph._internal._compat import NotRequired, Required

__all__ = (
    "_is_optional_type",
    "_is_required_type",
    "get_enhanced_type_hints",
    "get_field_default",
)

_NONE = type(None)


def _is_optional_type(type_: Any) -> bool:
    """Whether `type_` admits None: `X | None`, `Optional[X]`, a union with a member that
    does, `Annotated` of one, a TypeVar bound to one, `None` itself (not `type(None)`); a
    parametrized generic (`list[int]`, `Callable[..]`) does not, nor does `Any`."""
    if isinstance(type_, types.UnionType):
        return any(a is _NONE or _is_optional_type(a) for a in type_.__args__)
    if hasattr(type_, "__origin__") and hasattr(type_, "__args__"):
        origin = get_origin(type_)
        if origin is Union or origin is Optional:
            return any(a is _NONE or _is_optional_type(a) for a in type_.__args__)
        if origin is Annotated:
            return _is_optional_type(type_.__args__[0])
        return origin is None
    bound = getattr(type_, "__bound__", None)
    if bound is not None:
        return _is_optional_type(bound)
    return type_ is None


def _is_required_type(type_: Any) -> bool | None:
    """True for `Required[..]`, False for `NotRequired[..]` (also inside `Annotated`, or as
    the first argument of another wrapper), None when neither is written."""
    origin = get_origin(type_)
    if origin is Required:
        return True
    if origin is NotRequired:
        return False
    if origin is Annotated or getattr(origin, "__args__", None):
        return _is_required_type(type_.__args__[0])
    return None


def get_field_default(name: str, type_: Any, schema: type[Any]) -> Any:
    """`...` for a field that must be given, else its default (None when it has none): a
    TypedDict's optional keys (total=False, NotRequired) and Optional annotations may be
    left out, Required[...] may not; a dataclass field's default (or factory's) counts."""
    required = _is_required_type(type_)
    if name in getattr(schema, "__optional_keys__", ()):
        return ... if required else None
    if required is not None:
        return ... if required else None
    if dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.name != name:
                continue
            if f.default is not dataclasses.MISSING and f.default is not ...:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
            break
    return None if _is_optional_type(type_) else ...


def _pydantic_field(schema: Any, name: str) -> tuple[Any, Any]:
    fields = getattr(schema, "model_fields", None)
    try:
        field = fields[name] if fields is not None and name in fields else None
    except (KeyError, TypeError):
        field = None
    if field is None:
        return None, None
    default = getattr(field, "default", None)
    if type(default).__name__ == "PydanticUndefinedType":
        default = None
    return default, getattr(field, "description", None)


def get_enhanced_type_hints(type: type[Any]) -> Iterator[tuple[str, Any, Any, str | None]]:
    """`(name, type, default, description)` per annotated field of a TypedDict, dataclass or
    pydantic model (None where there is none)."""
    for name, typ in get_type_hints(type).items():
        default, description = _pydantic_field(type, name)
        own = getattr(type, "__dict__", None)
        if isinstance(own, Mapping) and name in own:
            default = own[name]
        yield name, typ, default, description
