"""State snapshots: `get_state` / `get_state_history` (+ async) built from saved checkpoints."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_THREAD_ID,
    INPUT,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    TASKS,
)
from warpgraph._internal._flags import FAST_PATHS
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel
from warpgraph.config import (
    CONFIG_KEYS,
    current_config,
    ensure_config,
    merge_configs,
    patch_checkpoint_map,
    recast_checkpoint_ns,
)
from warpgraph.pregel import _engine
from warpgraph.pregel._delta import ahydrated, hydrated
from warpgraph.pregel._derived import derived
from warpgraph.pregel._io import read_channels
from warpgraph.pregel._persist import foreign_tuple, foreign_types, from_foreign
from warpgraph.pregel._standalone import channels_from_checkpoint, empty_checkpoint
from warpgraph.pregel.debug import read_task_statuses, tasks_w_writes

__all__ = (
    "DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT",
    "SnapshotMixin",
    "channels_from_checkpoint",
    "copy_checkpoint",
    "delta_channels_to_snapshot",
    "empty_checkpoint",
    "exit_delta_task_id",
    "patch_checkpoint_map",
)

# Supersteps after which a DeltaChannel snapshots even when it is no longer written (bounds
# the history a load walks); read at each checkpoint (`_delta.superstep_bound`)
DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT = int(
    os.environ.get("LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", "5000")
)


def delta_channels_to_snapshot(
    channels: Mapping[str, Any],
    counters_since_delta_snapshot: Mapping[str, Any],
    channel_versions: Mapping[str, Any] | None = None,
) -> set[str]:
    """The DeltaChannels of `channels` (live channel objects) due for a snapshot: their
    update count reached `snapshot_frequency` or their supersteps count the bound. With
    `channel_versions`, channels without a version (never written) are left out."""
    from warpgraph.pregel._delta import delta_specs, due

    specs = delta_specs(channels)
    return due(
        specs,
        counters_since_delta_snapshot,
        channel_versions,
        lambda k: specs[k].is_available(),
    )


def exit_delta_task_id(step: int, task_id: str) -> str:
    """See `warpgraph.pregel._delta.exit_delta_task_id`."""
    from warpgraph.pregel._delta import exit_delta_task_id as made

    return made(step, task_id)


def copy_checkpoint(checkpoint: dict) -> dict:
    """A checkpoint the caller may change: values and versions copied one level, seen two
    (no `pending_sends`: current layouts keep Sends in the tasks channel)."""
    return {
        "v": checkpoint["v"],
        "ts": checkpoint["ts"],
        "id": checkpoint["id"],
        "channel_values": dict(checkpoint["channel_values"]),
        "channel_versions": dict(checkpoint["channel_versions"]),
        "versions_seen": {n: dict(s) for n, s in checkpoint["versions_seen"].items()},
        "updated_channels": checkpoint.get("updated_channels"),
    }


_CONFIG_KEY_SET = frozenset(CONFIG_KEYS)


class _SnapTask:
    """A prepared task as get_state sees it (id, name, path, writes, subgraph flag)."""

    __slots__ = ("id", "name", "path", "subgraphs", "triggers", "writes")

    def __init__(self, id: str, name: str, path: tuple, triggers: tuple, subgraphs: Any) -> None:
        self.id, self.name, self.path, self.triggers = id, name, path, triggers
        self.writes: list = []
        self.subgraphs = subgraphs


# Channel kinds a snapshot reads without restoring them in an Engine: restored from a
# stored value they hold exactly that value (available), without one they are empty;
# BinaryOperatorAggregate holds its initial value then (if it has one), and unwraps a
# stored `_DeltaSnapshot` (left to the Engine)
_PLAIN_KINDS: Any = None
_REDUCING: Any = None


def _kinds() -> tuple[tuple, type]:
    global _PLAIN_KINDS, _REDUCING
    if _PLAIN_KINDS is None:
        from warpgraph.channels import AnyValue, BinaryOperatorAggregate, EphemeralValue, LastValue

        _PLAIN_KINDS = (LastValue, EphemeralValue, AnyValue)
        _REDUCING = BinaryOperatorAggregate
    return _PLAIN_KINDS, _REDUCING


def _snapshot_plan(graph: Any, keys: Any = None) -> tuple | None:
    """How `_plain_snapshot` finds a checkpoint's tasks and values without an Engine, for
    the graph's current spec and output keys, or None when a node trigger, a node's single
    read channel or an output channel is of another kind: (the GraphSpec, per node in its
    order (name, sorted triggers, subgraphs), output
    keys, {name: spec} of the BinaryOperatorAggregates among those channels)."""
    if keys is None:  # (the caller's `graph.stream_channels_asis`, if it has them)
        keys = graph.stream_channels_asis
    d = derived(graph)  # (the spec's caches: dropped with it)
    cache_key = keys if isinstance(keys, str) else tuple(keys)
    if cache_key in d.snapshot_plans:
        return d.snapshot_plans[cache_key]
    spec = d.spec
    plain, reducing = _kinds()
    chans = {k: v for k, v in graph.channels.items() if isinstance(v, BaseChannel)}
    reducers: dict[str, Any] = {}

    def ok(name: str) -> bool:
        chan = chans.get(name)
        if type(chan) in plain:
            return True
        if type(chan) is reducing:
            reducers[name] = chan
            return True
        return False

    plan: tuple | None = None
    if not isinstance(keys, str) and all(ok(k) for k in keys):
        nodes = []
        for name, node in graph.nodes.items():
            reads = node.channels
            if not all(ok(c) for c in node.triggers) or (isinstance(reads, str) and not ok(reads)):
                break
            nodes.append((name, tuple(sorted(node.triggers)), node.subgraphs))
        else:
            if [n[0] for n in nodes] == list(spec.nodes):  # (firing_nodes: spec order)
                plan = (spec, tuple(nodes), list(keys), reducers)
    d.snapshot_plans[cache_key] = plan
    return plan


def _plain_snapshot(plan: tuple, cp: dict, parent_ns: str, step: int) -> tuple | None:
    """A checkpoint's tasks and output values as the Engine would find them (every node
    considered, in node order: the Engine's triggering rule, `GraphSpec.firing_nodes`, over
    the stored versions, less nodes whose single read channel is empty), read straight from
    the checkpoint; None when it needs the Engine (pending Sends, a stored delta snapshot,
    versions that do not compare)."""
    spec, nodes, keys, reducers = plan
    values = cp["channel_values"]
    if values.get(TASKS):
        return None
    have = values  # the channels' values once restored (available ones only)
    for k, chan in reducers.items():
        if k in values:
            if type(values[k]).__name__ == "_DeltaSnapshot":
                return None
        else:
            restored = chan.from_checkpoint(MISSING)
            if restored.is_available():
                if have is values:
                    have = dict(values)
                have[k] = restored.get()
    tasks: dict = {}
    versions = cp["channel_versions"]
    if versions:
        try:  # (the Engine's triggering rule, in Rust, over the stored versions)
            fired = spec.firing_nodes(versions, cp["versions_seen"], have)
        except TypeError:  # (versions of different types: the Engine path raises it)
            return None
        sstep = str(step)
        cid, v = cp["id"], cp.get("v", 4)
        for i in fired:
            name, strig, subgraphs = nodes[i]
            ns = f"{parent_ns}{NS_SEP}{name}" if parent_ns else name
            tid = _engine.task_id(cid, (ns, sstep, name, PULL, *strig), v)
            tasks[tid] = _SnapTask(tid, name, (PULL, name), strig, subgraphs)
    return tasks, {k: have[k] for k in keys if k in have}


_SNAPSHOT: Any = None


def _snapshot_type() -> Any:
    """`warpgraph.types.StateSnapshot` (imported on first use)."""
    global _SNAPSHOT
    if _SNAPSHOT is None:
        from warpgraph.types import StateSnapshot

        _SNAPSHOT = StateSnapshot
    return _SNAPSHOT


class SnapshotMixin:
    """get_state / get_state_history for Pregel."""

    def _state_checkpointer(self, config: dict) -> Any:
        if config and current_config() is None and _CONFIG_KEY_SET.issuperset(config):
            # (outside a task `ensure_config` would only copy `config`'s configurable)
            conf = config.get(CONF)
            saver = self._resolve_checkpointer({CONF: conf} if conf else {})  # type: ignore[attr-defined]
        else:
            saver = self._resolve_checkpointer(ensure_config(config))  # type: ignore[attr-defined]
        if saver is None or saver is True:
            raise ValueError("No checkpointer set")
        return saver

    def _snapshot_config(self, config: dict) -> dict:
        config = merge_configs(self.config, config) if self.config else config  # type: ignore[attr-defined]
        conf = config[CONF]
        if CONFIG_KEY_THREAD_ID in conf and not isinstance(conf[CONFIG_KEY_THREAD_ID], str):
            config = {
                **config,
                CONF: {**conf, CONFIG_KEY_THREAD_ID: str(conf[CONFIG_KEY_THREAD_ID])},
            }
        return config

    def _prepare_snapshot(
        self, config: dict, saved: Any, *, live: bool = False, states: dict | None = None
    ) -> Any:
        StateSnapshot = _SNAPSHOT or _snapshot_type()
        if not saved:
            return StateSnapshot({}, (), config, None, None, None, (), ())
        cp = saved.checkpoint
        self._migrate_checkpoint(cp)  # type: ignore[attr-defined]
        metadata = saved.metadata
        step = metadata.get("step", -1) + 1
        parent_ns = saved.config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
        pending = saved.pending_writes
        # (the tasks' statuses, read from the pending writes when something needs them)
        statuses = None if pending else {}
        keys = self.stream_channels_asis  # type: ignore[attr-defined]
        found = None
        plan = _snapshot_plan(self, keys) if FAST_PATHS else None
        if plan is not None:
            usable = True
            if pending:
                if live:
                    statuses = read_task_statuses(pending)
                    usable = not statuses  # (the tasks' writes are applied: the Engine's job)
                for w in pending:
                    if w[0] == NULL_TASK_ID:  # (null writes are applied: the Engine's job)
                        usable = False
                        break
            if usable:
                found = _plain_snapshot(plan, cp, parent_ns, step)
        if found is None:
            if statuses is None:
                statuses = read_task_statuses(pending)
            tasks, engine = self._engine_snapshot(cp, parent_ns, step, pending, statuses, live)
            values = read_channels(engine, keys)
        else:
            tasks, values = found
        if not tasks:  # (nothing scheduled: no next, tasks or interrupts)
            return StateSnapshot(
                values,
                (),
                patch_checkpoint_map(saved.config, metadata),
                metadata,
                cp["ts"],
                patch_checkpoint_map(saved.parent_config, metadata),
                (),
                (),
            )
        if states is None:
            states = {}
            for t in tasks.values():
                if t.subgraphs:
                    ns = f"{t.name}{NS_END}{t.id}"
                    if parent_ns:
                        ns = f"{parent_ns}{NS_SEP}{ns}"
                    states[t.id] = {
                        CONF: {
                            "thread_id": saved.config[CONF]["thread_id"],
                            CONFIG_KEY_CHECKPOINT_NS: ns,
                        }
                    }
        tww = tasks_w_writes(tasks.values(), pending, states, keys, live=live, statuses=statuses)
        return StateSnapshot(
            values,
            tuple(t.name for t in tasks.values() if not t.writes),
            patch_checkpoint_map(saved.config, metadata),
            metadata,
            cp["ts"],
            patch_checkpoint_map(saved.parent_config, metadata),
            tww,
            tuple(i for t in tww for i in t.interrupts),
        )

    def _engine_snapshot(
        self, cp: dict, parent_ns: str, step: int, pending: Any, statuses: dict, live: bool
    ) -> tuple[dict, Any]:
        """A checkpoint's tasks found by restoring it in an Engine, and that Engine (null
        writes applied, and the tasks' own writes when `live`)."""
        engine = _engine.Engine(self._graph_spec, cp)  # type: ignore[attr-defined]
        engine.set_updated_channels([])  # LangGraph's snapshots scan every node, in order
        nodes = self.nodes  # type: ignore[attr-defined]
        tasks: dict = {}
        for tid, name, path, trig, _val in engine.prepare_next_tasks(
            cp["id"], parent_ns, step, cp.get("v", 4)
        ):
            if path[0] == "__pregel_push":
                path = ("__pregel_push", path[1], False)
            tasks[tid] = _SnapTask(tid, name, path, trig, nodes[name].subgraphs)
        if pending and (null_writes := [w[1:] for w in pending if w[0] == NULL_TASK_ID]):
            engine.apply_writes([(INPUT, (), (), null_writes)], None)
        if live and statuses:
            for tid, st in statuses.items():
                if tid in tasks:
                    tasks[tid].writes.extend(st.output)
            if done := [t for t in tasks.values() if t.writes]:
                engine.apply_writes(
                    [(t.name, t.path, t.triggers, list(t.writes)) for t in done], None
                )
        return tasks, engine

    def _subgraph_for_namespace(
        self, config: dict, saver: Any, *, for_update: bool = False
    ) -> tuple[Any, dict] | None:
        """The subgraph a namespaced config addresses (lending it `saver`), else None (an
        update addressed to a namespace naming no subgraph is a ValueError)."""
        ns = config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
        if not ns or CONFIG_KEY_CHECKPOINTER in config[CONF]:
            return None
        recast = recast_checkpoint_ns(ns)
        for _, g in self.get_subgraphs(namespace=recast, recurse=True):  # type: ignore[attr-defined]
            return g, {**config, CONF: {**config[CONF], CONFIG_KEY_CHECKPOINTER: saver}}
        if for_update:
            raise ValueError(f"Subgraph {recast} not found")
        return None

    def _sub_configs(self, saved: Any, saver: Any) -> dict:
        """Per task with a subgraph: the config that reads the subgraph's own state."""
        if not saved:
            return {}
        cp = saved.checkpoint
        parent_ns = saved.config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
        engine = _engine.Engine(self._graph_spec, cp)  # type: ignore[attr-defined]
        engine.set_updated_channels([])
        out = {}
        for tid, name, _p, _t, _v in engine.prepare_next_tasks(
            cp["id"], parent_ns, saved.metadata.get("step", -1) + 1, cp.get("v", 4)
        ):
            subs = self.nodes[name].subgraphs  # type: ignore[attr-defined]
            if subs:
                ns = f"{name}{NS_END}{tid}"
                if parent_ns:
                    ns = f"{parent_ns}{NS_SEP}{ns}"
                out[tid] = (
                    subs[0],
                    {
                        CONF: {
                            CONFIG_KEY_CHECKPOINTER: saver,
                            "thread_id": saved.config[CONF]["thread_id"],
                            CONFIG_KEY_CHECKPOINT_NS: ns,
                        }
                    },
                )
        return out

    def get_state(self, config: dict, *, subgraphs: bool = False) -> Any:
        """The thread's latest (or the addressed) StateSnapshot."""
        saver = self._state_checkpointer(config)
        if sub := self._subgraph_for_namespace(config, saver):
            return sub[0].get_state(sub[1], subgraphs=subgraphs)
        config = self._own(self._snapshot_config(config))
        saved = foreign_tuple(saver, saver.get_tuple(config))
        if self._delta_channels:  # type: ignore[attr-defined]
            saved = hydrated(self, saver, saved)
        states = None
        if subgraphs:
            states = {
                tid: g.get_state(c, subgraphs=True)
                for tid, (g, c) in self._sub_configs(saved, saver).items()
            }
        return self._prepare_snapshot(
            config, saved, live=CONFIG_KEY_CHECKPOINT_ID not in config[CONF], states=states
        )

    async def aget_state(self, config: dict, *, subgraphs: bool = False) -> Any:
        saver = self._state_checkpointer(config)
        if sub := self._subgraph_for_namespace(config, saver):
            return await sub[0].aget_state(sub[1], subgraphs=subgraphs)
        config = self._own(self._snapshot_config(config))
        saved = foreign_tuple(saver, await saver.aget_tuple(config))
        if self._delta_channels:  # type: ignore[attr-defined]
            saved = await ahydrated(self, saver, saved)
        states = None
        if subgraphs:
            states = {
                tid: await g.aget_state(c, subgraphs=True)
                for tid, (g, c) in self._sub_configs(saved, saver).items()
            }
        return self._prepare_snapshot(
            config, saved, live=CONFIG_KEY_CHECKPOINT_ID not in config[CONF], states=states
        )

    def _own(self, config: dict) -> dict:
        return self._own_checkpoint_config(config)  # type: ignore[attr-defined]

    def _history_config(self, config: dict, ensured: dict | None = None) -> dict:
        """`config` for a history read (`ensured`: `ensure_config(config)`, if made)."""
        config = ensure_config(config) if ensured is None else ensured
        return merge_configs(
            self.config,
            config,
            {
                CONF: {  # type: ignore[attr-defined]
                    CONFIG_KEY_CHECKPOINT_NS: config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, ""),
                    CONFIG_KEY_THREAD_ID: str(config[CONF][CONFIG_KEY_THREAD_ID]),
                }
            },
        )

    def get_state_history(
        self,
        config: dict,
        *,
        filter: dict | None = None,
        before: dict | None = None,
        limit: int | None = None,
    ) -> Iterator[Any]:
        """Snapshots of the thread, newest first."""
        saver = self._state_checkpointer(config)
        ensured = ensure_config(config)
        if sub := self._subgraph_for_namespace(ensured, saver):
            yield from sub[0].get_state_history(sub[1], filter=filter, before=before, limit=limit)
            return
        config = self._own(self._history_config(config, ensured))
        tups = list(saver.list(config, before=before, limit=limit, filter=filter))
        types = foreign_types(saver)
        deltas = self._delta_channels  # type: ignore[attr-defined]
        prepare = self._prepare_snapshot
        for tup in tups:
            if types is not None:
                tup = from_foreign(tup, types)
            if deltas:
                tup = hydrated(self, saver, tup)
            yield prepare(tup.config, tup)

    async def aget_state_history(
        self,
        config: dict,
        *,
        filter: dict | None = None,
        before: dict | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[Any]:
        saver = self._state_checkpointer(config)
        if sub := self._subgraph_for_namespace(ensure_config(config), saver):
            async for s in sub[0].aget_state_history(
                sub[1], filter=filter, before=before, limit=limit
            ):
                yield s
            return
        config = self._own(self._history_config(config))
        tups = [t async for t in saver.alist(config, before=before, limit=limit, filter=filter)]
        for tup in tups:
            tup = foreign_tuple(saver, tup)
            if self._delta_channels:  # type: ignore[attr-defined]
                tup = await ahydrated(self, saver, tup)
            yield self._prepare_snapshot(tup.config, tup)
