"""Collect the user types a graph's state can hold, to allow them when decoding checkpoints.

`collect_allowlist(schemas=[...], channels={...})` walks type annotations (unions, generics,
Annotated, TypedDict fields, dataclass and pydantic fields, NewType) and returns the
dataclasses, pydantic models, NamedTuples and enums found. The graph builder passes the result to
`checkpointer.with_allowlist(...)` so that values of those types survive a checkpoint
round-trip while every other type still decodes to inert data.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import typing
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ("collect_allowlist",)

_WRAPPERS = {typing.Annotated}
for _name in ("Required", "NotRequired", "ReadOnly"):
    for _mod in (typing, sys.modules.get("typing_extensions")):
        if _mod is not None and hasattr(_mod, _name):
            _WRAPPERS.add(getattr(_mod, _name))


def _hints(tp: Any) -> dict[str, Any]:
    try:
        module = sys.modules.get(getattr(tp, "__module__", ""), None)
        return typing.get_type_hints(
            tp, globalns=getattr(module, "__dict__", None), include_extras=True
        )
    except Exception:  # noqa: BLE001 -- unresolvable forward refs: fall back below
        return {}


def _is_typeddict(tp: Any) -> bool:
    """typing or typing_extensions TypedDict class."""
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


def _is_model(tp: Any) -> bool:
    """A dataclass, pydantic (v2 or v1) model or NamedTuple class."""
    if not isinstance(tp, type):
        return False
    if dataclasses.is_dataclass(tp) or callable(getattr(tp, "model_validate", None)):
        return True
    if hasattr(tp, "__fields__") and callable(getattr(tp, "dict", None)):
        return True
    return issubclass(tp, tuple) and hasattr(tp, "_fields")


def _field_types(tp: Any) -> Iterable[Any]:
    hints = _hints(tp)
    if hints:
        return hints.values()
    if dataclasses.is_dataclass(tp):
        return [f.type for f in dataclasses.fields(tp) if not isinstance(f.type, str)]
    fields = getattr(tp, "model_fields", None) or {}
    return [getattr(f, "annotation", None) for f in fields.values()]


def collect_allowlist(
    *, schemas: Iterable[Any] = (), channels: Mapping[str, Any] | None = None
) -> set[type]:
    """The dataclasses, pydantic models, NamedTuples and Enums reachable from the annotations."""
    found: set[type] = set()
    seen: set[int] = set()
    stack: list[Any] = [s for s in schemas if s is not None]
    for channel in (channels or {}).values():
        for attr in ("ValueType", "UpdateType"):
            try:
                stack.append(getattr(channel, attr, None))
            except Exception:  # noqa: BLE001 -- a channel whose type property raises
                stack.append(None)
    while stack:
        tp = stack.pop()
        if tp is None or tp is Any or id(tp) in seen:
            continue
        seen.add(id(tp))
        origin = typing.get_origin(tp)
        if origin in _WRAPPERS:
            stack.append(typing.get_args(tp)[0])
        elif origin is typing.Literal:
            continue
        elif origin is not None or type(tp).__name__ == "UnionType":
            stack.extend(a for a in typing.get_args(tp) if a is not Ellipsis)
        elif hasattr(tp, "__supertype__"):  # NewType
            stack.append(tp.__supertype__)
        elif _is_typeddict(tp):
            stack.extend(_hints(tp).values())
        elif isinstance(tp, type) and issubclass(tp, enum.Enum):
            found.add(tp)
        elif _is_model(tp):
            found.add(tp)
            stack.extend(_field_types(tp))
    return found
