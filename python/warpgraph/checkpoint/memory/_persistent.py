"""`PersistentDict`: a dict kept in memory and written to one file on `sync()` / `close()`.

`InMemorySaver(factory=partial(PersistentDict, filename=...))` keeps its stores in such
dicts, so a test can reopen a saver's data from disk. The file holds msgpack, with tuples
and dicts (of any key type) as extension types, so nothing but plain data is ever loaded:
no pickle, no imports, no calls.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import ormsgpack

__all__ = ("PersistentDict",)

_TUPLE, _DICT = 1, 2


def _pack(obj: Any) -> Any:
    if isinstance(obj, tuple):
        return ormsgpack.Ext(_TUPLE, ormsgpack.packb([_pack(x) for x in obj]))
    if isinstance(obj, dict):
        pairs = [[_pack(k), _pack(v)] for k, v in obj.items()]
        return ormsgpack.Ext(_DICT, ormsgpack.packb(pairs))
    if isinstance(obj, list):
        return [_pack(x) for x in obj]
    if obj is None or isinstance(obj, (str, bytes, int, float, bool)):
        return obj
    raise TypeError(f"PersistentDict cannot store a value of type {type(obj).__name__}")


def _unpack_ext(code: int, data: bytes) -> Any:
    items = ormsgpack.unpackb(data, ext_hook=_unpack_ext)
    if code == _TUPLE:
        return tuple(items)
    if code == _DICT:
        return {_hashable(k): v for k, v in items}
    raise ValueError(f"PersistentDict file has an unknown extension type {code}")


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, (list, tuple)) else key


class PersistentDict(defaultdict):
    """A `defaultdict` written to `filename` on `sync()` (atomically) and on `close()`."""

    def __init__(self, *args: Any, filename: str, **kwargs: Any) -> None:
        self.filename = filename
        super().__init__(*args, **kwargs)

    def sync(self) -> None:
        """Write the whole dict to the file (through a temp file and an atomic rename)."""
        data = ormsgpack.packb(_pack(dict(self)))
        tmp = f"{self.filename}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.filename)

    def load(self) -> None:
        """Add what the file holds (nothing if it is missing or empty)."""
        try:
            with open(self.filename, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            return
        if not data:
            return
        try:
            loaded = ormsgpack.unpackb(data, ext_hook=_unpack_ext)
        except (ormsgpack.MsgpackDecodeError, ValueError) as exc:
            raise ValueError(f"PersistentDict file {self.filename!r} is corrupt: {exc}") from exc
        if not isinstance(loaded, dict):
            raise TypeError(f"PersistentDict file {self.filename!r} does not hold a dict")
        for key, value in loaded.items():
            self[key] = self._restore(value)

    def _restore(self, value: Any) -> Any:
        """A nested dict comes back in the container the factory makes (e.g. defaultdict)."""
        if self.default_factory is None or not isinstance(value, dict):
            return value
        made = self.default_factory()
        if not isinstance(made, dict):
            return value
        made.update(value)
        return made

    def close(self) -> None:
        self.sync()
        self.clear()

    def __enter__(self) -> PersistentDict:  # noqa: PYI034
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self) -> Any:  # a defaultdict's pickling would drop the filename
        return (_rebuild, (self.default_factory, self.filename, dict(self)))


def _rebuild(factory: Any, filename: str, items: dict) -> PersistentDict:
    d = PersistentDict(factory, filename=filename)
    d.update(items)
    return d
