"""Turn results of either library into comparable plain data.

Library objects (Send, Interrupt, Command, StateSnapshot, PregelTask, exceptions, ...) become
tagged dicts keyed by class name, so `langgraph.types.Send` and `warpgraph.types.Send` compare
equal. Ids (uuids anywhere in a string, 32-hex interrupt ids) are replaced by their first-seen
index, timestamps by "<ts>", checkpoint version strings by their integer part (the random
suffix is the only non-deterministic piece; the integer part orders them).
"""

from __future__ import annotations

import dataclasses
import re
import reprlib
from collections.abc import Mapping
from typing import Any

try:  # langchain-core is installed in the dev venv; messages get a compact form
    from langchain_core.messages import BaseMessage
except ImportError:  # pragma: no cover
    BaseMessage = None  # type: ignore[assignment,misc]

try:
    from pydantic import BaseModel
except ImportError:  # pragma: no cover
    BaseModel = None  # type: ignore[assignment,misc]

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
HEX32_RE = re.compile(r"^[0-9a-f]{32}$")
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}:\d{2}|Z)?$")
VERSION_RE = re.compile(r"^(\d{32})\.\d")
# measured durations in error messages ("... (elapsed: 0.051s)") vary from run to run
ELAPSED_RE = re.compile(r"\(elapsed: \d+(\.\d+)?s\)")

# explicit field lists for library classes whose shape may differ in implementation
_FIELDS = {
    "Send": ("node", "arg"),
    "Interrupt": ("value", "id"),
    "Command": ("graph", "update", "resume", "goto"),
    "Overwrite": ("value",),
    "StateSnapshot": (
        "values",
        "next",
        "config",
        "metadata",
        "created_at",
        "parent_config",
        "tasks",
        "interrupts",
    ),
    "PregelTask": ("id", "name", "path", "error", "interrupts", "state", "result"),
}


class Normalizer:
    """Stateful: the same raw id always maps to the same token within one normalizer.

    With mask=True every id becomes "<id>" (used for order-independent sort keys).
    """

    def __init__(self, mask: bool = False) -> None:
        self.mask = mask
        self.ids: dict[str, str] = {}

    def _id(self, raw: str) -> str:
        if self.mask:
            return "<id>"
        tok = self.ids.get(raw)
        if tok is None:
            tok = self.ids[raw] = f"<id{len(self.ids)}>"
        return tok

    def str(self, s: str) -> str:
        if TS_RE.match(s):
            return "<ts>"
        m = VERSION_RE.match(s)
        if m:
            return f"<v{int(m.group(1))}>"
        if HEX32_RE.match(s):
            return self._id(s)
        return UUID_RE.sub(lambda mm: self._id(mm.group(0)), s)

    def __call__(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, int, float, bytes)):
            return obj
        if isinstance(obj, str):
            return self.str(obj)
        if isinstance(obj, BaseException):
            return {
                "!exc": type(obj).__name__,
                "msg": self.str(ELAPSED_RE.sub("(elapsed: <t>)", str(obj))),
                "notes": [self.str(n) for n in getattr(obj, "__notes__", ())],
            }
        if BaseMessage is not None and isinstance(obj, BaseMessage):
            out = {"!msg": obj.type, "content": self(obj.content), "id": self(obj.id)}
            if getattr(obj, "name", None):
                out["name"] = obj.name
            if getattr(obj, "tool_calls", None):
                out["tool_calls"] = self(obj.tool_calls)
            return out
        cls = type(obj).__name__
        if cls in _FIELDS and not isinstance(obj, Mapping):
            return {f"!{cls}": [self(getattr(obj, f, None)) for f in _FIELDS[cls]]}
        if isinstance(obj, Mapping):
            return {self(k): self(v) for k, v in obj.items()}
        if hasattr(obj, "_fields") and isinstance(obj, tuple):  # NamedTuple
            return {f"!{cls}": {f: self(getattr(obj, f)) for f in obj._fields}}
        if isinstance(obj, tuple):
            return tuple(self(v) for v in obj)
        if isinstance(obj, list):
            return [self(v) for v in obj]
        if isinstance(obj, (set, frozenset)):
            return {"!set": sorted((self(v) for v in obj), key=repr)}
        if BaseModel is not None and isinstance(obj, BaseModel):
            return {f"!{cls}": {k: self(getattr(obj, k)) for k in type(obj).model_fields}}
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {
                f"!{cls}": {f.name: self(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
            }
        if isinstance(obj, type):
            return {"!type": obj.__name__}
        return {"!obj": cls}


def sort_key(obj: Any) -> str:
    """Order-independent key: the repr of obj normalised with ids masked."""
    return repr(Normalizer(mask=True)(obj))


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 4, 200, 200
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 20


def _short(value: Any) -> str:
    """A bounded repr: a difference in a huge value (a state grown over many steps) is
    reported without building its whole repr."""
    return _SHORT.repr(value)


def first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """Path and both values (bounded reprs) of the first difference between two normalised
    values."""
    if type(a) is not type(b):
        return f"{path or '<root>'}: {_short(a)} != {_short(b)}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{path or '<root>'} keys: {_short(list(a))} != {_short(list(b))}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]")
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            extra = a[len(b) :] if len(a) > len(b) else b[len(a) :]
            return f"{path or '<root>'} length {len(a)} != {len(b)}; extra: {_short(extra)}"
        return None
    if a != b:
        return f"{path or '<root>'}: {_short(a)} != {_short(b)}"
    return None
