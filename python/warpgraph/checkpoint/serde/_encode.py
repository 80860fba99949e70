"""Msgpack encoding with LangGraph's ext layout (same dispatch order, same bytes)."""

from __future__ import annotations

import dataclasses
import pathlib
import re
import sys
from collections import deque
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

import ormsgpack

from warpgraph.checkpoint.serde._msgpack import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_DELTA_SNAPSHOT,
    EXT_METHOD_SINGLE_ARG,
    EXT_NUMPY_ARRAY,
    EXT_PYDANTIC_V1,
    EXT_PYDANTIC_V2,
    IP_TYPES,
)
from warpgraph.checkpoint.serde.types import SendProtocol, _DeltaSnapshot

try:
    from zoneinfo import ZoneInfo
except ImportError:  # pragma: no cover
    ZoneInfo = None  # type: ignore[assignment,misc]

OPTION = (
    ormsgpack.OPT_NON_STR_KEYS
    | ormsgpack.OPT_PASSTHROUGH_DATACLASS
    | ormsgpack.OPT_PASSTHROUGH_DATETIME
    | ormsgpack.OPT_PASSTHROUGH_ENUM
    | ormsgpack.OPT_PASSTHROUGH_UUID
    | ormsgpack.OPT_REPLACE_SURROGATES
)

# warpgraph modules whose public classes are written under LangGraph's module name.
_INTEROP_MODULES = (
    ("warpgraph.types", "langgraph.types"),
    ("warpgraph.store.base", "langgraph.store.base"),
)
_names: dict[type, tuple[str, str]] = {}


def type_name(cls: type) -> tuple[str, str]:
    """(module, class name) written for `cls`; warpgraph's own types use LangGraph's module."""
    got = _names.get(cls)
    if got is not None:
        return got
    module, name = cls.__module__, cls.__name__
    if not module.startswith("warpgraph."):
        return module, name
    got = (module, name)
    for ours, theirs in _INTEROP_MODULES:
        mod = sys.modules.get(ours)
        if mod is not None and getattr(mod, name, None) is cls:
            got = (theirs, name)
            break
    _names[cls] = got
    return got


def _is_delta_snapshot(obj: Any) -> bool:
    if isinstance(obj, _DeltaSnapshot):
        return True
    mod = sys.modules.get("langgraph.checkpoint.serde.types")
    other = getattr(mod, "_DeltaSnapshot", None) if mod is not None else None
    return other is not None and isinstance(obj, other)


def _is_store_item(obj: Any) -> bool:
    for modname in ("warpgraph.store.base", "langgraph.store.base"):
        mod = sys.modules.get(modname)
        item = getattr(mod, "Item", None) if mod is not None else None
        if item is not None and isinstance(obj, item):
            return True
    return False


def _ext(code: int, obj: Any, payload: Any, *extra: Any) -> ormsgpack.Ext:
    module, name = type_name(obj.__class__)
    return ormsgpack.Ext(code, pack((module, name, payload, *extra)))


def _numpy(obj: Any) -> ormsgpack.Ext:
    flags = obj.flags
    order = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
    if flags.c_contiguous:
        view = memoryview(obj)
        try:
            return ormsgpack.Ext(EXT_NUMPY_ARRAY, pack((obj.dtype.str, obj.shape, order, view)))
        finally:
            view.release()
    buf = obj.tobytes(order="A")
    return ormsgpack.Ext(EXT_NUMPY_ARRAY, pack((obj.dtype.str, obj.shape, order, buf)))


def default(obj: Any) -> Any:
    """ormsgpack `default` hook: the first matching rule wins, in LangGraph's order."""
    if _is_delta_snapshot(obj):
        return ormsgpack.Ext(EXT_DELTA_SNAPSHOT, pack(obj.value))
    if callable(getattr(obj, "model_dump", None)):
        return _ext(EXT_PYDANTIC_V2, obj, obj.model_dump(), "model_validate_json")
    if callable(getattr(obj, "get_secret_value", None)):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, obj.get_secret_value())
    if callable(getattr(obj, "dict", None)):
        return _ext(EXT_PYDANTIC_V1, obj, obj.dict())
    if callable(getattr(obj, "_asdict", None)):
        return _ext(EXT_CONSTRUCTOR_KW_ARGS, obj, obj._asdict())
    if isinstance(obj, pathlib.Path):
        return _ext(EXT_CONSTRUCTOR_POS_ARGS, obj, obj.parts)
    if isinstance(obj, re.Pattern):
        return ormsgpack.Ext(
            EXT_CONSTRUCTOR_POS_ARGS, pack(("re", "compile", (obj.pattern, obj.flags)))
        )
    if isinstance(obj, UUID):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, obj.hex)
    if isinstance(obj, Decimal):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, str(obj))
    if isinstance(obj, (set, frozenset, deque)):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, tuple(obj))
    if isinstance(obj, IP_TYPES):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, str(obj))
    if isinstance(obj, datetime):
        return _ext(EXT_METHOD_SINGLE_ARG, obj, obj.isoformat(), "fromisoformat")
    if isinstance(obj, timedelta):
        return _ext(EXT_CONSTRUCTOR_POS_ARGS, obj, (obj.days, obj.seconds, obj.microseconds))
    if isinstance(obj, date):
        return _ext(EXT_CONSTRUCTOR_POS_ARGS, obj, (obj.year, obj.month, obj.day))
    if isinstance(obj, time):
        fields = {
            "hour": obj.hour,
            "minute": obj.minute,
            "second": obj.second,
            "microsecond": obj.microsecond,
            "tzinfo": obj.tzinfo,
            "fold": obj.fold,
        }
        return _ext(EXT_CONSTRUCTOR_KW_ARGS, obj, fields)
    if isinstance(obj, timezone):
        return _ext(EXT_CONSTRUCTOR_POS_ARGS, obj, obj.__getinitargs__())  # type: ignore[attr-defined]
    if ZoneInfo is not None and isinstance(obj, ZoneInfo):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, obj.key)
    if isinstance(obj, Enum):
        return _ext(EXT_CONSTRUCTOR_SINGLE_ARG, obj, obj.value)
    if isinstance(obj, SendProtocol):
        timeout = getattr(obj, "timeout", None)
        args = (obj.node, obj.arg) if timeout is None else (obj.node, obj.arg, timeout)
        return _ext(EXT_CONSTRUCTOR_POS_ARGS, obj, args)
    if dataclasses.is_dataclass(obj):
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        return _ext(EXT_CONSTRUCTOR_KW_ARGS, obj, fields)
    if _is_store_item(obj):
        return _ext(EXT_CONSTRUCTOR_KW_ARGS, obj, {k: getattr(obj, k) for k in obj.__slots__})
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return _numpy(obj)
    if isinstance(obj, BaseException):
        return repr(obj)
    raise TypeError(f"Object of type {obj.__class__.__name__} is not serializable")


def pack(obj: Any) -> bytes:
    """Encode `obj` exactly as LangGraph's JsonPlusSerializer does for type "msgpack"."""
    return ormsgpack.packb(obj, default=default, option=OPTION)
