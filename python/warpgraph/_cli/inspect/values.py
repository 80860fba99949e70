"""Turning decoded checkpoint contents into JSON and short text, and what runs next."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import enum
import uuid
from typing import Any

START = "__start__"
INTERRUPT = "__interrupt__"
BRANCH_PREFIX = "branch:to:"
TASKS = "__pregel_tasks"


def jsonable(value: Any, depth: int = 0) -> Any:
    """A JSON-compatible rendering of a decoded value (objects keep their type's name)."""
    if depth > 50:
        return repr(value)[:200]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"__bytes__": len(value)}
    if isinstance(value, (datetime.datetime, datetime.date, uuid.UUID)):
        return str(value)
    if isinstance(value, enum.Enum):
        return jsonable(value.value, depth + 1)
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"__type__": name, **jsonable(fields, depth + 1)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        with contextlib.suppress(Exception):  # a failing dump: fall back to the attributes
            return {"__type__": name, **jsonable(dump(), depth + 1)}
    if hasattr(value, "_asdict"):
        return {"__type__": name, **jsonable(value._asdict(), depth + 1)}
    attrs = getattr(value, "__dict__", None)
    if attrs:
        return {"__type__": name, **jsonable(attrs, depth + 1)}
    slots = [n for cls in type(value).__mro__ for n in getattr(cls, "__slots__", ())]
    if slots:
        fields = {
            n: getattr(value, n) for n in slots if not n.startswith("_") and hasattr(value, n)
        }
        return {"__type__": name, **jsonable(fields, depth + 1)}
    return repr(value)


def short(value: Any, width: int = 70) -> str:
    import json

    text = json.dumps(jsonable(value), ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def is_internal(channel: str) -> bool:
    return channel.startswith((BRANCH_PREFIX, "__"))


def _newer(version: Any, seen: Any) -> bool:
    if seen is None:
        return True
    try:
        return version > seen
    except TypeError:
        return str(version) > str(seen)


def next_nodes(checkpoint: dict[str, Any]) -> list[str]:
    """The nodes the checkpoint runs next: each NODE whose `branch:to:NODE` (or the START)
    channel holds a value written after NODE last saw it (a consumed trigger is cleared),
    sorted, then the target of each `Send` in the tasks channel, in order (one per Send,
    as LangGraph's `StateSnapshot.next` lists them)."""
    versions = checkpoint.get("channel_versions") or {}
    present = checkpoint.get("channel_values") or {}
    seen = checkpoint.get("versions_seen") or {}
    out = []
    for channel, version in versions.items():
        if channel.startswith(BRANCH_PREFIX):
            node = channel[len(BRANCH_PREFIX) :]
        elif channel == START:
            node = START
        else:
            continue
        if channel in present and _newer(version, (seen.get(node) or {}).get(channel)):
            out.append(node)
    sends = present.get(TASKS) or ()
    return sorted(out) + [
        str(node) for item in sends if (node := getattr(item, "node", None)) is not None
    ]


def interrupts(writes: list[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    out = []
    for task, channel, value in writes:
        if channel != INTERRUPT:
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            rendered = jsonable(item)
            if isinstance(rendered, dict):
                rendered.pop("__type__", None)
            out.append(
                {
                    "task_id": task,
                    **(rendered if isinstance(rendered, dict) else {"value": rendered}),
                }
            )
    return out


def diff_values(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """Per channel: added, removed or changed (lists that grew: what was appended)."""
    out: list[dict[str, Any]] = []
    for channel in sorted(set(a) | set(b)):
        if channel not in a:
            out.append({"channel": channel, "change": "added", "new": jsonable(b[channel])})
        elif channel not in b:
            out.append({"channel": channel, "change": "removed", "old": jsonable(a[channel])})
        else:
            old, new = jsonable(a[channel]), jsonable(b[channel])
            if old == new:
                continue
            entry: dict[str, Any] = {"channel": channel, "change": "changed"}
            if isinstance(old, list) and isinstance(new, list) and new[: len(old)] == old:
                entry.update(change="appended", appended=new[len(old) :])
            elif isinstance(old, dict) and isinstance(new, dict):
                entry["keys"] = {
                    k: {"old": old.get(k), "new": new.get(k)}
                    for k in sorted(set(old) | set(new))
                    if old.get(k) != new.get(k)
                }
            else:
                entry.update(old=old, new=new)
            out.append(entry)
    return out
