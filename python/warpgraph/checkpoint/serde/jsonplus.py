"""`JsonPlusSerializer`: LangGraph's type tags and msgpack bytes, allowlist-only decoding."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from inspect import isclass
from typing import Any, Literal

from ormsgpack import packb as _packb

from warpgraph.checkpoint.serde import _encode
from warpgraph.checkpoint.serde._decode import Allowlist, Decoder, SerdeDecodeError
from warpgraph.checkpoint.serde._encode import OPTION as _OPTION
from warpgraph.checkpoint.serde._encode import default as _default
from warpgraph.checkpoint.serde._encode import pack as _pack
from warpgraph.checkpoint.serde._msgpack import (
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_DELTA_SNAPSHOT,
    EXT_METHOD_SINGLE_ARG,
    EXT_NUMPY_ARRAY,
    EXT_PYDANTIC_V1,
    EXT_PYDANTIC_V2,
    AllowedMsgpackModules,
)
from warpgraph.checkpoint.serde._repeats import pack_repeating
from warpgraph.checkpoint.serde.base import SerializerProtocol

__all__ = (
    "EXT_CONSTRUCTOR_KW_ARGS",
    "EXT_CONSTRUCTOR_POS_ARGS",
    "EXT_CONSTRUCTOR_SINGLE_ARG",
    "EXT_DELTA_SNAPSHOT",
    "EXT_METHOD_SINGLE_ARG",
    "EXT_NUMPY_ARRAY",
    "EXT_PYDANTIC_V1",
    "EXT_PYDANTIC_V2",
    "JsonPlusSerializer",
    "SerdeDecodeError",
)

EMPTY_BYTES = b""
_DEFAULT: Any = object()


class InvalidModuleError(Exception):
    """A legacy JSON constructor names a type outside the allowlist."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _normalize(modules: Any) -> tuple[Allowlist, dict[tuple[str, str], type]]:
    """Split an allowlist into (module, name) keys and directly registered classes."""
    if modules is True:
        return True, {}
    if not modules:
        return None, {}
    keys: set[tuple[str, ...]] = set()
    classes: dict[tuple[str, str], type] = {}
    for item in modules:
        if isclass(item):
            key = (item.__module__, item.__name__)
            keys.add(key)
            classes[key] = item
        elif isinstance(item, (tuple, list)) and all(isinstance(p, str) for p in item):
            keys.add(tuple(item))
        else:
            raise TypeError(
                "allowed_msgpack_modules entries must be classes or (module, name) tuples, "
                f"got {item!r}"
            )
    return keys, classes


# exact types encoded by one `packb` call, whatever their value
_ONE_CALL = frozenset((int, str, float, bool, dict))


class JsonPlusSerializer(SerializerProtocol):
    """msgpack serializer writing exactly LangGraph's bytes.

    Decoding rebuilds only the built-in safe types, LangGraph/warpgraph types and the
    types listed in `allowed_msgpack_modules` (classes or `(module, name)` tuples); any
    other object decodes to its serialized payload. Pickle is never used.
    `allowed_msgpack_modules=True` (explicit opt-in) imports any named type.
    """

    def __init__(
        self,
        *,
        pickle_fallback: bool = False,
        allowed_json_modules: Iterable[tuple[str, ...]] | Literal[True] | None = None,
        allowed_msgpack_modules: AllowedMsgpackModules | Literal[True] | None = _DEFAULT,
        __unpack_ext_hook__: Any = None,
    ) -> None:
        if pickle_fallback:
            raise ValueError("pickle_fallback=True is not supported: warpgraph never uses pickle")
        if __unpack_ext_hook__ is not None:
            raise ValueError("__unpack_ext_hook__ is not supported by warpgraph's serializer")
        if allowed_msgpack_modules is _DEFAULT:
            allowed_msgpack_modules = None
        self.pickle_fallback = False
        self._allowed_msgpack_modules, self._classes = _normalize(allowed_msgpack_modules)
        self._allowed_json_modules, json_classes = _normalize(allowed_json_modules)
        self._classes = {**json_classes, **self._classes}
        self._decoder = Decoder(self._allowed_msgpack_modules, self._classes)

    def with_msgpack_allowlist(
        self, extra_allowlist: Iterable[tuple[str, ...] | type]
    ) -> JsonPlusSerializer:
        """A copy whose msgpack allowlist also holds `extra_allowlist` (self if unchanged)."""
        if self._allowed_msgpack_modules is True:
            return self
        extra_keys, extra_classes = _normalize(tuple(extra_allowlist))
        base = set(self._allowed_msgpack_modules or ())
        merged = base | set(extra_keys or ())
        if merged == base and all(k in self._classes for k in extra_classes):
            return self
        clone = copy.copy(self)
        clone._allowed_msgpack_modules = merged or None
        clone._classes = {**self._classes, **extra_classes}
        clone._decoder = Decoder(
            clone._allowed_msgpack_modules, clone._classes, self._decoder.target
        )
        return clone

    def _with_target(self, target: str) -> JsonPlusSerializer:
        """A copy decoding LangGraph/warpgraph types to `target`'s classes."""
        clone = copy.copy(self)
        clone._decoder = Decoder(self._allowed_msgpack_modules, self._classes, target)
        return clone

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        t = type(obj)
        if t in _ONE_CALL:  # (exact types first: most channel values and writes)
            return "msgpack", _packb(obj, default=_default, option=_OPTION)
        if obj is None:
            return "null", EMPTY_BYTES
        if isinstance(obj, bytes):
            return "bytes", obj
        if isinstance(obj, bytearray):
            return "bytearray", obj
        if t is list and (joined := pack_repeating(obj, _pack)) is not None:
            return "msgpack", joined  # (the same bytes, each repeated item encoded once)
        return "msgpack", _packb(obj, default=_default, option=_OPTION)  # (`_encode.pack`)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            type_, payload = data
        except (TypeError, ValueError):
            raise SerdeDecodeError(
                f"loads_typed expects a (type, bytes) pair, got {type(data).__name__}"
            ) from None
        if type_ == "msgpack":
            return self._decoder.loads(payload)
        if type_ == "null":
            return None
        if type_ == "bytes":
            return payload
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "json":
            return self._loads_json(payload)
        if type_ == "pickle":
            raise SerdeDecodeError("refusing to load 'pickle' data: warpgraph never unpickles")
        raise NotImplementedError(f"Unknown serialization type: {type_}")

    # --- legacy "json" format: plain JSON; lc=2 constructors only for allowlisted types
    def _loads_json(self, payload: bytes) -> Any:
        try:
            return json.loads(payload, object_hook=self._revive)
        except (ValueError, TypeError, RecursionError) as exc:
            raise SerdeDecodeError(f"invalid json checkpoint data: {exc}") from exc

    def _revive(self, value: dict[str, Any]) -> Any:
        if value.get("lc") != 2 or value.get("type") != "constructor":
            return value
        ids = value.get("id")
        if not isinstance(ids, list) or len(ids) < 2 or not all(isinstance(p, str) for p in ids):
            return value
        module, name = ".".join(ids[:-1]), ids[-1]
        allowed = self._allowed_json_modules
        if allowed is not True and not (allowed and tuple(ids) in allowed):
            decoder = Decoder(None, self._classes)
        else:
            decoder = Decoder(True if allowed is True else {(module, name)}, self._classes)
        ctor = decoder.resolve(module, name)
        if ctor is None or (isclass(ctor) and issubclass(ctor, BaseException)):
            return value
        args, kwargs = value.get("args") or [], value.get("kwargs") or {}
        try:
            return ctor(*args, **kwargs)
        except Exception:  # noqa: BLE001
            return None


def _msgpack_enc(data: Any) -> bytes:
    """Encode like LangGraph's module-level `_msgpack_enc`."""
    return _encode.pack(data)


def _msgpack_dec(data: bytes) -> Any:
    """Decode with only the built-in allowlist."""
    return _STRICT.loads(data)


_STRICT = Decoder(None, {})
_option = _encode.OPTION
