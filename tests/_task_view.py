"""What a task sees of itself, in a form two libraries' runs can be compared by (shared by
the lazy-config tests of nodes and of task calls)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def mask_ids(value: Any) -> Any:
    """`value` with every uuid in its strings (in dicts, lists and tuples) replaced by <id>."""
    if isinstance(value, str):
        return UUID_RE.sub("<id>", value)
    if isinstance(value, dict):
        return {k: mask_ids(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(mask_ids(v) for v in value)
    return value


def task_view(where: str, config: dict, runtime: Any, keep_key: Callable[[str], bool]) -> tuple:
    """(where, the langgraph_* metadata, checkpoint_ns, task id, the runtime's task id /
    namespace / attempt, the sorted configurable keys `keep_key` keeps)."""
    info = runtime.execution_info
    configurable = config["configurable"]
    return (
        where,
        {k: v for k, v in config["metadata"].items() if k.startswith("langgraph_")},
        configurable["checkpoint_ns"],
        configurable["__pregel_task_id"],
        info.task_id,
        info.checkpoint_ns,
        info.node_attempt,
        sorted(k for k in configurable if keep_key(k)),
    )
