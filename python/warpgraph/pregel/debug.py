"""Payloads of the `tasks`, `checkpoints` and `debug` stream modes, and snapshot task lists."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    ERROR,
    ERROR_SOURCE_NODE,
    INTERRUPT,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    RESUME,
    RETURN,
    TAG_HIDDEN,
)
from warpgraph._internal._typing import MISSING
from warpgraph.checkpoint.base import EXCLUDED_METADATA_KEYS
from warpgraph.config import patch_checkpoint_map

__all__ = (
    "TaskStatus",
    "get_bolded_text",
    "get_colored_text",
    "map_debug_checkpoint",
    "map_debug_task_results",
    "map_debug_tasks",
    "read_task_statuses",
    "tasks_w_writes",
)

_CONTROL = frozenset((ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME))


class TaskStatus:
    """Status of one task read from its recorded writes (finished iff it has output)."""

    __slots__ = ("error", "interrupts", "output")

    def __init__(self, output: tuple = (), interrupts: tuple = (), error: Any = None) -> None:
        self.output = output
        self.interrupts = interrupts
        self.error = error

    @property
    def finished(self) -> bool:
        return bool(self.output)

    @property
    def pending_interrupts(self) -> tuple:
        return () if self.output else self.interrupts


_NOT_STARTED = TaskStatus()


def read_task_statuses(pending_writes: Iterable[tuple[str, str, Any]]) -> dict[str, TaskStatus]:
    """Per task id: output writes, latest interrupts, error (NULL_TASK_ID excluded)."""
    output: dict[str, list] = {}
    interrupts: dict[str, list] = {}
    errors: dict[str, Any] = {}
    for tid, c, v in pending_writes:
        if tid == NULL_TASK_ID:
            continue
        output.setdefault(tid, [])
        if c == INTERRUPT:
            interrupts.setdefault(tid, []).extend(v if isinstance(v, Sequence) else [v])
        elif c == ERROR:
            errors.setdefault(tid, v)
        elif c not in _CONTROL:
            output[tid].append((c, v))
    return {
        tid: TaskStatus(tuple(o), tuple(interrupts.get(tid, ())), errors.get(tid))
        for tid, o in output.items()
    }


def _hidden(task: Any) -> bool:
    return task.config is not None and TAG_HIDDEN in (task.config.get("tags") or ())


def map_debug_tasks(tasks: Iterable[Any]) -> Iterable[dict]:
    """`tasks` mode "task started" payloads."""
    for task in tasks:
        if _hidden(task):
            continue
        payload = {"id": task.id, "name": task.name, "input": task.input, "triggers": task.triggers}
        if task.config is not None:
            md = {
                k: v
                for k, v in (task.config.get("metadata") or {}).items()
                if k not in EXCLUDED_METADATA_KEYS
            }
            tags = [t for t in (task.config.get("tags") or ()) if not t.startswith("seq:step")]
            if tags:
                md["tags"] = tags
            if md:
                payload["metadata"] = md
        yield payload


def map_task_result_writes(writes: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    """Fold writes into {channel: value}; repeated channels become {"$writes": [...]}."""
    out: dict[str, Any] = {}
    for c, v in writes:
        prev = out.get(c)
        if prev is not None:
            lst = (
                prev["$writes"]
                if isinstance(prev, dict) and isinstance(prev.get("$writes"), list)
                else [prev]
            )
            lst.append(v)
            out[c] = {"$writes": lst}
        else:
            out[c] = v
    return out


def map_debug_task_results(task: Any, writes: Sequence[tuple[str, Any]], stream_keys: Any) -> dict:
    """`tasks` mode "task finished" payload."""
    keys = [stream_keys] if isinstance(stream_keys, str) else stream_keys
    return {
        "id": task.id,
        "name": task.name,
        "error": next((w[1] for w in writes if w[0] == ERROR), None),
        "result": map_task_result_writes([w for w in writes if w[0] in keys or w[0] == RETURN]),
        "interrupts": [
            asdict(v)
            for w in writes
            if w[0] == INTERRUPT
            for v in (w[1] if isinstance(w[1], Sequence) else [w[1]])
        ],
    }


def _task_result(output: tuple, output_keys: Any) -> Any:
    """A finished task's result: its RETURN value, else its writes to `output_keys`."""
    rtn = next((v for c, v in output if c == RETURN), MISSING)
    if rtn is not MISSING:
        return rtn
    if isinstance(output_keys, str):
        m = map_task_result_writes([(c, v) for c, v in output if c == output_keys])
        return m.get(str(output_keys)) if m else None
    fw = [(c, v) for c, v in output if c in output_keys]  # (no RETURN write here)
    return map_task_result_writes(fw) if fw else {}


def tasks_w_writes(
    tasks: Iterable[Any],
    pending_writes: list | None,
    states: dict | None,
    output_keys: Any,
    *,
    live: bool = False,
    statuses: dict[str, TaskStatus] | None = None,
) -> tuple:
    """PregelTask tuples annotated with errors, interrupts, results and subgraph states
    (`statuses`: `read_task_statuses(pending_writes)` when the caller has it already)."""
    from warpgraph.types import PregelTask

    if statuses is None:
        statuses = read_task_statuses(pending_writes) if pending_writes else {}
    out = []
    for task in tasks:
        st = statuses.get(task.id, _NOT_STARTED)
        out.append(
            PregelTask(
                task.id,
                task.name,
                task.path,
                st.error,
                st.pending_interrupts if live else st.interrupts,
                states.get(task.id) if states else None,
                _task_result(st.output, output_keys) if st.output else None,
            )
        )
    return tuple(out)


def _rm_pregel_keys(config: dict | None) -> dict | None:
    if config is None:
        return None
    return {CONF: {k: v for k, v in config.get(CONF, {}).items() if not k.startswith("__pregel_")}}


def map_debug_checkpoint(
    config: dict,
    values: Any,
    metadata: dict,
    tasks: Sequence[Any],
    pending_writes: list,
    parent_config: dict | None,
    output_keys: Any,
) -> dict:
    """`checkpoints` mode payload (get_state's shape)."""
    parent_ns = config[CONF].get("checkpoint_ns", "")
    states: dict[str, Any] = {}
    for t in tasks:
        if not t.subgraphs:
            continue
        ns = f"{t.name}{NS_END}{t.id}"
        if parent_ns:
            ns = f"{parent_ns}{NS_SEP}{ns}"
        states[t.id] = {CONF: {"thread_id": config[CONF]["thread_id"], "checkpoint_ns": ns}}
    ptasks = []
    for t in tasks_w_writes(tasks, pending_writes, states, output_keys):
        if t.error:
            ptasks.append({"id": t.id, "name": t.name, "error": t.error, "state": t.state})
        elif t.result:
            ptasks.append(
                {
                    "id": t.id,
                    "name": t.name,
                    "result": t.result,
                    "interrupts": tuple(asdict(i) for i in t.interrupts),
                    "state": t.state,
                }
            )
        else:
            ptasks.append(
                {
                    "id": t.id,
                    "name": t.name,
                    "interrupts": tuple(asdict(i) for i in t.interrupts),
                    "state": t.state,
                }
            )
    return {
        "config": _rm_pregel_keys(patch_checkpoint_map(config, metadata)),
        "parent_config": _rm_pregel_keys(patch_checkpoint_map(parent_config, metadata)),
        "values": values,
        "metadata": metadata,
        "next": [t.name for t in tasks],
        "tasks": ptasks,
    }


_BASIC_COLORS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
COLOR_MAPPING = {name: f"0;3{i}" for i, name in enumerate(_BASIC_COLORS)} | {"gray": "1;30"}
"""Color name -> ANSI SGR parameters used by print_mode output."""


def _ansi(text: str, sgr: str) -> str:
    return f"\033[{sgr}m{text}\033[0m"


def get_colored_text(text: str, color: str) -> str:
    """`text` in an ANSI color (print_mode output)."""
    return _ansi(text, "1;3" + COLOR_MAPPING[color])


def get_bolded_text(text: str) -> str:
    """`text` in ANSI bold (print_mode output)."""
    return _ansi(text, "1")
