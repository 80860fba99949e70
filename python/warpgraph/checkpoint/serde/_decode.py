"""Allowlist-only msgpack decoding: nothing outside the allowlist is imported or called."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import pathlib
import re
import sys
import threading
from collections import deque
from collections.abc import Callable
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any, Literal, Union
from uuid import UUID

import ormsgpack

from warpgraph.checkpoint.serde._msgpack import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_DELTA_SNAPSHOT,
    EXT_METHOD_SINGLE_ARG,
    EXT_NUMPY_ARRAY,
    EXT_PYDANTIC_V2,
    IP_TYPES,
    LANGGRAPH_STORE_TYPES,
    LANGGRAPH_TYPES,
    PATH_NAMES,
    SAFE_MSGPACK_METHODS,
    SAFE_MSGPACK_TYPES,
)
from warpgraph.checkpoint.serde.types import _DeltaSnapshot

logger = logging.getLogger("warpgraph.checkpoint.serde")

Allowlist = Union[set[tuple[str, ...]], Literal[True], None]  # noqa: UP007


class SerdeDecodeError(ValueError):
    """Checkpoint bytes are truncated, corrupt or not in the expected format."""


def _uuid(hex_: Any) -> UUID:
    return UUID(hex=hex_)


_BUILTIN: dict[tuple[str, str], Any] = {
    ("datetime", "datetime"): datetime,
    ("datetime", "date"): date,
    ("datetime", "time"): time,
    ("datetime", "timedelta"): timedelta,
    ("datetime", "timezone"): timezone,
    ("uuid", "UUID"): UUID,
    ("decimal", "Decimal"): Decimal,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("collections", "deque"): deque,
    ("re", "compile"): re.compile,
    **{("ipaddress", t.__name__): t for t in IP_TYPES},
    **{(mod, name): getattr(pathlib, name) for mod, name in PATH_NAMES},
}
try:
    from zoneinfo import ZoneInfo

    _BUILTIN[("zoneinfo", "ZoneInfo")] = ZoneInfo
except ImportError:  # pragma: no cover
    pass

# Source module -> (package of the target module, names): "langgraph.types.Send" and
# "warpgraph.types.Send" both decode to `<target>.types.Send` (target "warpgraph" by default).
_INTEROP = {
    "langgraph.types": ("types", LANGGRAPH_TYPES),
    "warpgraph.types": ("types", LANGGRAPH_TYPES),
    "langgraph.store.base": ("store.base", LANGGRAPH_STORE_TYPES),
    "warpgraph.store.base": ("store.base", LANGGRAPH_STORE_TYPES),
}
_MISSING = object()
_warned: set[tuple[str, str]] = set()


def _warn_once(key: tuple[str, str], msg: str, *args: Any) -> None:
    if key not in _warned and len(_warned) < 1000:
        _warned.add(key)
        logger.warning(msg, *args)


def _import_attr(module: str, name: str) -> Any:
    """getattr(import module, name), or None when the module is not installed."""
    try:
        if module not in sys.modules and importlib.util.find_spec(module) is None:
            return None
        return getattr(importlib.import_module(module), name, None)
    except Exception:  # noqa: BLE001
        return None


class Decoder:
    """Decodes msgpack bytes; reconstructs only allowlisted types, others stay plain data."""

    def __init__(
        self,
        allowed: Allowlist,
        classes: dict[tuple[str, str], type],
        target: str = "warpgraph",
    ) -> None:
        if target not in ("warpgraph", "langgraph"):
            raise ValueError(f"target must be 'warpgraph' or 'langgraph', got {target!r}")
        self.allowed = allowed
        self.classes = classes
        self.target = target
        self._resolved: dict[tuple[str, str], Any] = {}
        self._local = threading.local()

    # --- allowlist
    def resolve(self, module: str, name: str) -> Any:
        """The constructor allowed for (module, name), or None if blocked/unavailable."""
        key = (module, name)
        got = self._resolved.get(key, _MISSING)
        if got is _MISSING:
            got = self._lookup(module, name)
            self._resolved[key] = got
        return got

    def _lookup(self, module: str, name: str) -> Any:
        key = (module, name)
        if key in _BUILTIN:
            return _BUILTIN[key]
        if module in _INTEROP:
            submodule, names = _INTEROP[module]
            if name in names:
                return _import_attr(f"{self.target}.{submodule}", name)
        if key in self.classes:
            return self.classes[key]
        if key in SAFE_MSGPACK_TYPES:
            return _import_attr(module, name)
        if self.allowed is True:
            _warn_once(key, "Deserializing unregistered type %s.%s (allowlist is True).", *key)
            return _import_attr(module, name)
        if self.allowed and key in self.allowed:
            return _import_attr(module, name)
        _warn_once(
            key,
            "Blocked deserialization of %s.%s - not in allowed_msgpack_modules; "
            "returning its serialized data instead.",
            module,
            name,
        )
        return None

    # --- decoding
    def loads(self, data: Any) -> Any:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise SerdeDecodeError(f"msgpack payload must be bytes, got {type(data).__name__}")
        self._local.error = None
        try:
            return ormsgpack.unpackb(data, ext_hook=self.hook, option=ormsgpack.OPT_NON_STR_KEYS)
        except (ValueError, TypeError, RecursionError) as exc:
            cause = getattr(self._local, "error", None) or exc
            self._local.error = None
            raise SerdeDecodeError(f"invalid msgpack checkpoint data: {cause}") from cause

    def _unpack(self, data: bytes) -> Any:
        return ormsgpack.unpackb(data, ext_hook=self.hook, option=ormsgpack.OPT_NON_STR_KEYS)

    def hook(self, code: int, data: bytes) -> Any:
        try:
            return self._hook(code, data)
        except BaseException as exc:
            if getattr(self._local, "error", None) is None:
                self._local.error = exc
            raise

    def _hook(self, code: int, data: bytes) -> Any:
        if code == EXT_DELTA_SNAPSHOT:
            return _DeltaSnapshot(self._unpack(data))
        if code == EXT_NUMPY_ARRAY:
            return self._numpy(self._unpack(data))
        if code not in (0, 1, 2, 3, 4, 5):
            return ormsgpack.Ext(code, bytes(data))  # unknown extension: kept inert
        tup = self._unpack(data)
        size = 4 if code == EXT_METHOD_SINGLE_ARG else 3
        if (
            not isinstance(tup, list)
            or len(tup) < size
            or not isinstance(tup[0], str)
            or not isinstance(tup[1], str)
        ):
            raise SerdeDecodeError(
                f"malformed msgpack ext {code}: expected [module, name, payload, ...]"
            )
        module, name, payload = tup[0], tup[1], tup[2]
        if code == EXT_METHOD_SINGLE_ARG:
            if (module, name, tup[3]) not in SAFE_MSGPACK_METHODS:
                _warn_once(
                    (module, f"{name}.{tup[3]}"),
                    "Blocked method call %s.%s.%s",
                    module,
                    name,
                    tup[3],
                )
                return payload
            return self._build(module, name, payload, datetime.fromisoformat, (payload,))
        ctor = self.resolve(module, name)
        if ctor is None:
            return payload
        if code == EXT_CONSTRUCTOR_SINGLE_ARG:
            return self._build(module, name, payload, ctor, (payload,))
        if code == EXT_CONSTRUCTOR_POS_ARGS:
            if not isinstance(payload, list):
                raise SerdeDecodeError(
                    f"malformed msgpack ext 1 for {module}.{name}: args not a list"
                )
            if name == "Send" and module in _INTEROP and len(payload) == 3:
                return self._build(
                    module, name, payload, lambda n, a, t: ctor(n, a, timeout=t), payload
                )
            return self._build(module, name, payload, ctor, payload)
        if not isinstance(payload, dict) or not all(isinstance(k, str) for k in payload):
            raise SerdeDecodeError(
                f"malformed msgpack ext {code} for {module}.{name}: "
                "keyword arguments not a str-keyed map"
            )
        if code == EXT_CONSTRUCTOR_KW_ARGS:
            return self._build(module, name, payload, lambda: ctor(**payload), ())
        fallback = "model_construct" if code == EXT_PYDANTIC_V2 else "construct"
        try:
            return ctor(**payload)
        except Exception:  # noqa: BLE001
            alt = getattr(ctor, fallback, None)
            if not callable(alt):
                return payload
            return self._build(module, name, payload, lambda: alt(**payload), ())

    @staticmethod
    def _build(module: str, name: str, payload: Any, fn: Callable[..., Any], args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001
            _warn_once(
                (module, name),
                "Could not reconstruct %s.%s from checkpoint (%s); "
                "returning its serialized data instead.",
                module,
                name,
                type(exc).__name__,
            )
            return payload

    @staticmethod
    def _numpy(meta: Any) -> Any:
        np = sys.modules.get("numpy")
        if np is None:
            np = _import_attr("numpy", "ndarray") and sys.modules.get("numpy")
        if np is None or not isinstance(meta, list) or len(meta) != 4:
            return None
        try:
            dtype_str, shape, order, buf = meta
            return np.frombuffer(buf, dtype=np.dtype(dtype_str)).reshape(shape, order=order)
        except Exception:  # noqa: BLE001
            return None
