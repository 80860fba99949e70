"""LangGraph's free-standing step helpers, over warpgraph's Engine.

LangGraph's loop works on live channel objects; warpgraph keeps channel state inside an
Engine. These functions take LangGraph's arguments (a checkpoint, channel objects, the
graph's nodes) and answer by building an Engine from them, so code and tests written
against `langgraph.pregel._algo.prepare_next_tasks` or
`langgraph.pregel._checkpoint.channels_from_checkpoint` get warpgraph's answers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from functools import partial
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_READ,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    NS_END,
    NS_SEP,
    PUSH,
)
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel
from warpgraph.checkpoint.base.id import uuid6
from warpgraph.checkpoint.serde.types import _DeltaSnapshot

__all__ = ("channels_from_checkpoint", "empty_checkpoint", "prepare_next_tasks")


def empty_checkpoint() -> dict:
    """A new thread's checkpoint: no values, versions or seen versions (format 4)."""
    return {
        "v": 4,
        "id": str(uuid6(clock_seq=-2)),
        "ts": datetime.now(timezone.utc).isoformat(),
        "channel_values": {},
        "channel_versions": {},
        "versions_seen": {},
    }


def channels_from_checkpoint(
    specs: Mapping[str, Any],
    checkpoint: Mapping[str, Any],
    *,
    saver: Any = None,
    config: Any = None,
) -> tuple[dict[str, BaseChannel], dict[str, Any]]:
    """`(channels, managed)`: each channel spec restored from `checkpoint`, the managed
    value specs as they are. DeltaChannels stored as writes are rebuilt from `saver`'s
    history of the checkpoint `config` names (both are then required)."""
    from warpgraph.pregel._delta import delta_specs, rebuilt, replay_targets

    channel_specs = {k: v for k, v in specs.items() if isinstance(v, BaseChannel)}
    managed = {k: v for k, v in specs.items() if not isinstance(v, BaseChannel)}
    deltas = delta_specs(channel_specs)
    if deltas and (targets := replay_targets(deltas, checkpoint)):
        if saver is None or config is None:
            raise ValueError(
                f"DeltaChannel {targets} has history to replay but no "
                "checkpointer or config was passed to read it"
            )
        history = saver.get_delta_channel_history(config=config, channels=targets)
        checkpoint = rebuilt(deltas, dict(checkpoint), history)
    values = checkpoint["channel_values"]
    channels = {k: s.from_checkpoint(values.get(k, MISSING)) for k, s in channel_specs.items()}
    return channels, managed


def _engine_checkpoint(checkpoint: Mapping[str, Any], channels: Mapping[str, Any]) -> dict:
    from warpgraph.channels.delta import DeltaChannel

    values = {}
    for k, ch in channels.items():
        if not isinstance(ch, BaseChannel) or not ch.is_available():
            continue
        if isinstance(ch, DeltaChannel):
            values[k] = _DeltaSnapshot(ch.get())
        elif (v := ch.checkpoint()) is not MISSING:
            values[k] = v
    return {**checkpoint, "channel_values": values}


def prepare_next_tasks(
    checkpoint: Mapping[str, Any],
    pending_writes: Sequence[Any],
    processes: Mapping[str, Any],
    channels: Mapping[str, Any],
    managed: Mapping[str, Any],
    config: Mapping[str, Any],
    step: int,
    stop: int,
    *,
    for_execution: bool,
    store: Any = None,
    checkpointer: Any = None,
    manager: Any = None,
    trigger_to_nodes: Mapping[str, Sequence[str]] | None = None,
    updated_channels: set[str] | None = None,
    retry_policy: Sequence[Any] = (),
    cache_policy: Any = None,
) -> dict[str, Any]:
    """The tasks of the next step, by id in LangGraph's order: `PregelTask`s, or with
    `for_execution` `PregelExecutableTask`s whose config routes their writes to the task's
    `writes` and reads the channels' state (the caller runs and applies them)."""
    from warpgraph.pregel import _engine
    from warpgraph.types import PregelExecutableTask, PregelTask

    live = {k: v for k, v in channels.items() if isinstance(v, BaseChannel)}
    spec = _engine.GraphSpec(
        live, {n: (list(p.triggers), p.channels) for n, p in processes.items()}
    )
    engine = _engine.Engine(spec, _engine_checkpoint(checkpoint, live))
    hint = sorted(updated_channels) if updated_channels and trigger_to_nodes else []
    engine.set_updated_channels(hint)
    conf = config.get(CONF) or {}
    parent_ns = conf.get(CONFIG_KEY_CHECKPOINT_NS, "")
    raw = engine.prepare_next_tasks(checkpoint["id"], parent_ns, step, checkpoint.get("v", 4))
    out: dict[str, Any] = {}
    for tid, name, path, triggers, value in raw:
        if path[0] == PUSH:
            path = (PUSH, path[1], False)
        if not for_execution:
            out[tid] = PregelTask(tid, name, path)
            continue
        proc = processes[name]
        writes: deque = deque()
        task_ns = f"{name}{NS_END}{tid}"
        if parent_ns:
            task_ns = f"{parent_ns}{NS_SEP}{task_ns}"
        from warpgraph.pregel._algo import _local_read

        task_config = {
            **config,
            "metadata": {
                **(config.get("metadata") or {}),
                "langgraph_step": step,
                "langgraph_node": name,
                "langgraph_triggers": triggers,
                "langgraph_path": path,
                "langgraph_checkpoint_ns": task_ns,
            },
            CONF: {
                **conf,
                CONFIG_KEY_SEND: writes.extend,
                CONFIG_KEY_READ: partial(_local_read, engine, writes),
                CONFIG_KEY_TASK_ID: tid,
                CONFIG_KEY_CHECKPOINT_NS: task_ns,
            },
        }
        mapper = getattr(proc, "mapper", None)
        if mapper is not None and path[0] != PUSH:
            value = mapper(value)
        out[tid] = PregelExecutableTask(
            name,
            value,
            proc.node,
            writes,
            task_config,
            triggers,
            proc.retry_policy or retry_policy,
            None,
            tid,
            path,
            writers=proc.flat_writers,
            subgraphs=proc.subgraphs,
        )
    return out
