"""DeltaChannel support for the run loop, the state API and update_state.

Nothing here runs for graphs without DeltaChannels: the loop keeps `loop._delta` None and
every hook is behind that check.

A DeltaChannel stores no value in its checkpoints. Loading one (`load`, `hydrated`) asks the
saver for the channel's history (`get_delta_channel_history`: the nearest stored value up
the parent chain and the writes since) and rebuilds the value; the Engine is then built
from a copy of the checkpoint holding the rebuilt values as `_DeltaSnapshot`s. Each
checkpoint advances per-channel counters `(updates, supersteps)` kept in its metadata
(`counters_since_delta_snapshot`); a channel whose counters reach its `snapshot_frequency`
or the supersteps bound, or that must start over (an Overwrite, writes a new branch must
not replay), gets a `_DeltaSnapshot` in that checkpoint. A channel that did not move since
the last stored checkpoint has its version bumped so that the saver stores the snapshot;
the nodes that had seen the old version are marked as having seen the new one
(`SNAPSHOT_BUMPS` remembers what they really read).
"""

from __future__ import annotations

import uuid
from collections.abc import Generator, Iterable, Mapping
from functools import partial
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    INPUT,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    SNAPSHOT_BUMPS,
)
from warpgraph._internal._machines import run_async, run_sync
from warpgraph._internal._typing import MISSING
from warpgraph.channels.binop import _is_delta_snapshot, _unwrap_overwrite
from warpgraph.channels.delta import DeltaChannel
from warpgraph.checkpoint.serde.types import _DeltaSnapshot
from warpgraph.pregel._delta_ids import stamp_ids
from warpgraph.pregel._records import PutCheckpointOp, PutWritesOp

__all__ = (
    "COUNTERS",
    "DELTA_HISTORY",
    "DeltaRun",
    "delta_specs",
    "exit_delta_late_task_id",
    "exit_delta_task_id",
    "hydrated",
)

DELTA_HISTORY = "get_delta_history"  # saver op: (op, config, channels) -> histories
COUNTERS = "counters_since_delta_snapshot"


def delta_specs(channels: Mapping[str, Any]) -> dict[str, DeltaChannel]:
    return {k: v for k, v in channels.items() if isinstance(v, DeltaChannel)}


def superstep_bound() -> int:
    from warpgraph.pregel import _checkpoint  # (patched there by tests)

    return _checkpoint.DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT


# ------------------------------------------------------------------ task ids of exit writes
def exit_delta_task_id(step: int, task_id: str) -> str:
    """The task id exit durability stores a step's delta writes under: the step number in
    the first group (so id order is step order), the rest of the task's id (a valid uuid,
    as Postgres needs); never NULL_TASK_ID, whose writes readers apply as the anchor's own."""
    groups = str(uuid.UUID(task_id)).split("-")
    made = "-".join([f"{step:08d}", *groups[1:]])
    return f"{step:08d}-0000-0000-0000-000000000001" if made == NULL_TASK_ID else made


def exit_delta_late_task_id(step: int, task_id: str) -> str:
    """Like `exit_delta_task_id` for the steps after the anchor's own: sorts after every
    real task id, in step order."""
    groups = str(uuid.UUID(task_id)).split("-")
    return f"ffffffff-{step >> 16:04x}-{step & 0xFFFF:04x}-{groups[3]}-{groups[4]}"


# ------------------------------------------------------------------ loading
def replay_targets(specs: Mapping[str, Any], checkpoint: Mapping[str, Any]) -> list[str]:
    """The delta channels of `checkpoint` with a version but no stored value."""
    versions = checkpoint["channel_versions"]
    values = checkpoint["channel_values"]
    return [k for k in specs if k in versions and values.get(k, MISSING) is MISSING]


def rebuilt(specs: Mapping[str, Any], checkpoint: dict, histories: Mapping[str, Any]) -> dict:
    """A copy of `checkpoint` whose values hold the replayed delta channels."""
    values = dict(checkpoint["channel_values"])
    for k, history in histories.items():
        spec = specs.get(k)
        if spec is None:
            continue
        seed = history.get("seed", MISSING)
        if _is_delta_snapshot(seed) and not isinstance(seed, _DeltaSnapshot):
            seed = _DeltaSnapshot(seed.value)  # (LangGraph's own class, from its savers)
        ch = spec.from_checkpoint(seed)
        ch.replay_writes(history.get("writes") or ())
        values[k] = _DeltaSnapshot(ch.value)
    return {**checkpoint, "channel_values": values}


def _as_snapshots(checkpoint: dict) -> dict:
    """`checkpoint` with LangGraph's `_DeltaSnapshot`s (a foreign saver's) made ours."""
    values = checkpoint["channel_values"]
    if not any(
        _is_delta_snapshot(v) and not isinstance(v, _DeltaSnapshot) for v in values.values()
    ):
        return checkpoint
    fixed = {k: _DeltaSnapshot(v.value) if _is_delta_snapshot(v) else v for k, v in values.items()}
    return {**checkpoint, "channel_values": fixed}


def load(specs: Mapping[str, Any], checkpoint: dict, config: dict) -> Generator[tuple, Any, dict]:
    """The checkpoint to build an Engine from (an op for the saver when history is needed)."""
    checkpoint = _as_snapshots(checkpoint)
    targets = replay_targets(specs, checkpoint)
    if not targets:
        return checkpoint
    histories = yield (DELTA_HISTORY, config, targets)
    return rebuilt(specs, checkpoint, histories or {})


def hydrated(graph: Any, saver: Any, saved: Any) -> Any:
    """`saved` (a CheckpointTuple) with its delta channels rebuilt, for the state API."""
    specs = graph._delta_channels
    if not specs or saved is None:
        return saved
    route = partial(_history_route, saver.get_delta_channel_history)
    return saved._replace(checkpoint=run_sync(load(specs, saved.checkpoint, saved.config), route))


async def ahydrated(graph: Any, saver: Any, saved: Any) -> Any:
    """`hydrated` with the saver's async history read."""
    specs = graph._delta_channels
    if not specs or saved is None:
        return saved
    route = partial(_history_route, saver.aget_delta_channel_history)
    machine = load(specs, saved.checkpoint, saved.config)
    return saved._replace(checkpoint=await run_async(machine, route))


def _history_route(read: Any, op: tuple) -> tuple:
    return read, (), {"config": op[1], "channels": op[2]}, None


# ------------------------------------------------------------------ cadence
def advance(specs: Iterable[str], previous: Mapping[str, Any] | None, updated: Any) -> dict:
    """Counters after one more superstep that updated the channels in `updated`."""
    prev = previous or {}
    out = {}
    for k in specs:
        u, s = prev.get(k, (0, 0))
        out[k] = (u + 1 if k in updated else u, s + 1)
    return out


def due(
    specs: Mapping[str, Any],
    counters: Mapping[str, Any],
    versions: Mapping[str, Any] | None,
    available: Any,
) -> set[str]:
    """The delta channels whose counters call for a snapshot (`available(name)`: the channel
    holds a value; a channel without a version has nothing to store)."""
    bound = superstep_bound()
    out = set()
    for k, spec in specs.items():
        if (versions is not None and k not in versions) or not available(k):
            continue
        u, s = counters.get(k, (0, 0))
        if u >= spec.snapshot_frequency or s >= bound:
            out.add(k)
    return out


def set_counters(metadata: dict, counters: Mapping[str, Any], reset: Iterable[str]) -> None:
    for k in reset:
        counters[k] = (0, 0)  # type: ignore[index]
    kept = {k: v for k, v in counters.items() if tuple(v) != (0, 0)}
    if kept:
        metadata[COUNTERS] = kept
    else:
        metadata.pop(COUNTERS, None)


def next_version_fn(nv: Any) -> Any:
    if nv == "int":
        return lambda cur: 1 if cur is None else cur + 1
    if nv == "str":  # InMemorySaver's string versions (its method uses no state)
        from warpgraph.pregel._savers import _saver_next_version

        made = _saver_next_version()
        return lambda cur: made(None, cur, None)
    return lambda cur: nv(cur, None)


def mark_bumps_seen(seen: dict, bumped: Mapping[str, tuple], t2n: Mapping[str, Any]) -> dict:
    """`seen` with every node that had seen a bumped channel's old version moved to the new
    one (a bump stores a snapshot; it is no write). A channel bumped from no version also
    advances its subscribers that never ran. `SNAPSHOT_BUMPS` keeps per "node|channel" the
    version set here and per "node:channel" the version the node really read."""
    out = dict(seen)
    for k, (old, _new) in bumped.items():
        if old is None:
            for node in t2n.get(k, ()):
                out.setdefault(node, {})
    marks = dict(seen.get(SNAPSHOT_BUMPS, {}))
    for node in list(out):
        if node == SNAPSHOT_BUMPS:
            continue
        per = out[node]
        for k, (old, new) in bumped.items():
            if per.get(k) != old:
                continue
            moved, read = f"{node}{NS_SEP}{k}", f"{node}{NS_END}{k}"
            if old is not None and marks.get(moved) != old:
                marks[read] = old
            marks[moved] = new
            per = out[node] = {**per, k: new}
    if marks:
        out[SNAPSHOT_BUMPS] = marks
    return out


def snapshot_into(
    cp: dict,
    names: set[str],
    read: Any,
    stored: Mapping[str, Any],
    nv: Any,
    t2n: Mapping[str, Any],
) -> dict:
    """Put `_DeltaSnapshot(read(k))` into `cp` for each of `names`, bumping the version of
    those that did not move since `stored`; returns the bumps `{k: (old, new)}`."""
    versions = cp["channel_versions"]
    values = cp["channel_values"]
    bump = next_version_fn(nv)
    bumped = {}
    for k in sorted(names):
        if k not in versions:
            versions[k] = bump(None)
            bumped[k] = (None, versions[k])
        elif versions[k] == stored.get(k):
            old = versions[k]
            versions[k] = bump(old)
            bumped[k] = (old, versions[k])
        values[k] = _DeltaSnapshot(read(k))
    if bumped:
        cp["versions_seen"] = mark_bumps_seen(cp["versions_seen"], bumped, t2n)
    return bumped


def overwritten(specs: Mapping[str, Any], writes: Iterable[tuple[str, Any]]) -> set[str]:
    return {c for c, v in writes if c in specs and _unwrap_overwrite(v)[0]}


def with_pending(specs: Mapping[str, Any], pending: Iterable[tuple] | None) -> set[str]:
    """Delta channels a new branch from a checkpoint with these pending writes snapshots
    (nothing says which child consumed them, so its walk must never replay them)."""
    return {w[1] for w in pending or () if w[1] in specs}


# ------------------------------------------------------------------ one run
class DeltaRun:
    """A run's delta state (`loop._delta`)."""

    __slots__ = (
        "cmd_writes",
        "exit_writes",
        "first_step",
        "forced",
        "has_parent",
        "initial_config",
        "latest",
        "loaded",
        "specs",
        "stored",
    )

    def __init__(self, specs: dict, loop: Any) -> None:
        self.specs = specs
        self.forced: set[str] = set()
        self.has_parent = False
        self.latest = False
        self.initial_config: Any = None
        self.exit_writes: list | None = (
            [] if loop.durability == "exit" and loop.saver is not None else None
        )
        self.first_step: int | None = None
        self.stored: set = set()
        self.cmd_writes: list = []
        self.loaded: list = []

    # --- enter
    def enter(self, loop: Any, saved: Any, checkpoint: dict | None) -> Generator[tuple, Any, Any]:
        self.has_parent = saved is not None
        self.latest = saved is not None and not loop._addressed
        self.initial_config = loop.checkpoint_config
        if checkpoint is None:
            return None
        return (yield from load(self.specs, checkpoint, loop.checkpoint_config))

    def first(self, loop: Any, is_resuming: bool) -> None:
        """After the enter: the pending writes the run starts from."""
        pending = loop.pending_writes
        self.stored = {(t, c) for t, c, _ in pending if t != NULL_TASK_ID and c in self.specs}
        reapplies = is_resuming and not loop.is_replaying
        if reapplies:
            self.loaded = [w for w in pending if w[0] != NULL_TASK_ID]
        else:
            self.forced |= with_pending(self.specs, pending)

    def command_writes(self, task_id: str, writes: list, forks: bool) -> None:
        stamp_ids(self.specs, writes)  # (a fork carries them: they skip put_writes)
        if forks:
            self.forced |= {c for c, _ in writes if c in self.specs}
        elif self.exit_writes is not None and task_id == NULL_TASK_ID:
            self.cmd_writes.extend((c, v) for c, v in writes if c in self.specs)

    def input(self, loop: Any, writes: list) -> None:
        """The run's input writes (ids given in place); where their delta writes are kept."""
        specs = self.specs
        stamp_ids(specs, writes)
        self.forced |= overwritten(specs, writes)
        mine = [(c, v) for c, v in writes if c in specs]
        if not mine:
            return
        if self.exit_writes is not None:
            self.exit_writes.extend((loop.step, NULL_TASK_ID, "", c, v) for c, v in mine)
            return
        if loop.saver is None:
            return
        if self.has_parent and self.latest:
            cc = loop.checkpoint_config
            config = {
                **cc,
                CONF: {
                    **cc[CONF],
                    CONFIG_KEY_CHECKPOINT_NS: loop.parent_ns,
                    CONFIG_KEY_CHECKPOINT_ID: loop.checkpoint_id,
                },
            }
            tid = str(uuid.uuid5(uuid.UUID(loop.checkpoint_id), INPUT))
            loop._io.append(PutWritesOp("put_writes", config, mine, tid, ""))
        else:
            self.forced |= {c for c, _ in mine}

    # --- steps
    def applied(self, loop: Any, tasks: list) -> None:
        """Before a step's writes are applied (its pending writes still held)."""
        specs = self.specs
        self.forced |= overwritten(specs, (w for t in tasks for w in t.writes))
        if self.loaded:
            done = {t.id for t in tasks if t.writes}
            self.forced |= with_pending(specs, [w for w in self.loaded if w[0] not in done])
            self.loaded = []
        if self.exit_writes is None:
            return
        first = self.first_step is None
        if first:
            self.first_step = loop.step
            self.exit_writes.extend((loop.step, NULL_TASK_ID, "", c, v) for c, v in self.cmd_writes)
        from warpgraph.pregel._loop import path_str

        for tid, c, v in loop.pending_writes:
            if c not in specs:
                continue
            if first and (tid == NULL_TASK_ID or (tid, c) in self.stored):
                continue
            task = loop.tasks.get(tid)
            self.exit_writes.append((loop.step, tid, path_str(task.path) if task else "", c, v))

    # --- checkpoints
    def counters(self, loop: Any, metadata: dict, exiting: bool, previous: Any) -> dict:
        if exiting:
            return dict(metadata.get(COUNTERS) or {})
        return advance(self.specs, previous, loop._cp_updated or ())

    def store(
        self, loop: Any, cp: dict, counters: dict, new_versions: dict, envelope: Any
    ) -> tuple[dict, Any]:
        """Snapshots due in the checkpoint `cp` about to be put; returns the put's
        (new_versions, envelope)."""
        engine = loop.engine
        names = due(self.specs, counters, cp["channel_versions"], engine.is_available)
        names |= self.forced
        if names:
            bumped = snapshot_into(
                cp,
                names,
                engine.read,
                loop.checkpoint_previous_versions,
                loop.next_version,
                loop.graph.trigger_to_nodes,
            )
            self.forced -= names
            if bumped:
                new_versions = {**new_versions, **{k: b[1] for k, b in bumped.items()}}
                envelope = None
                self.rebuild(loop, cp)
        set_counters(loop.checkpoint_metadata, counters, names)
        return new_versions, envelope

    def rebuild(self, loop: Any, cp: dict) -> None:
        """A new Engine at `cp`'s versions (a bump moved them), holding the same values."""
        from warpgraph.pregel import _engine

        engine = loop.engine
        values = dict(cp["channel_values"])
        for k in self.specs:
            if engine.is_available(k):
                values[k] = _DeltaSnapshot(engine.read(k))
        hint = engine.updated_channels()
        loop.engine = _engine.Engine(loop._spec, {**cp, "channel_values": values})
        loop.engine.set_updated_channels(hint)

    # --- exit durability
    def exit_ops(self, loop: Any) -> Generator[tuple, Any, None]:
        """Before the exit checkpoint: store the run's delta writes of the channels it does
        not snapshot on the checkpoint the run started from (a stub one on a new thread)."""
        writes = self.exit_writes
        if not writes or loop.saver is None:
            return
        if self.has_parent and not self.latest:
            self.forced |= {w[3] for w in writes}
        counters = dict(loop.checkpoint_metadata.get(COUNTERS) or {})
        engine = loop.engine
        skip = due(self.specs, counters, engine.channel_versions(), engine.is_available)
        skip |= self.forced
        pending = [w for w in writes if w[3] not in skip]
        if not pending:
            return
        if self.has_parent:
            anchor = self.initial_config
        else:
            from warpgraph.pregel._algo import now

            base = self.initial_config
            stub = {
                "v": 4,
                "id": loop.checkpoint_id_saved,
                "ts": now(),
                "channel_values": {},
                "channel_versions": {},
                "versions_seen": {},
            }
            stub_config = {**base, CONF: {**base[CONF], CONFIG_KEY_CHECKPOINT_ID: None}}
            yield PutCheckpointOp("put", stub_config, stub, {"step": -2}, {})
            anchor = {**base, CONF: {**base[CONF], CONFIG_KEY_CHECKPOINT_ID: stub["id"]}}
            loop.checkpoint_config = anchor
        grouped: dict[tuple[str, str], list] = {}
        for step, tid, path, c, v in pending:
            if tid == NULL_TASK_ID:
                key = (exit_delta_task_id(step, tid), "")
            elif step == self.first_step:
                key = (exit_delta_task_id(step, tid), path)
            else:
                key = (exit_delta_late_task_id(step, tid), f"~~{step:010d}{path}")
            grouped.setdefault(key, []).append((c, v))
        config = {
            **anchor,
            CONF: {
                **anchor[CONF],
                CONFIG_KEY_CHECKPOINT_NS: loop.parent_ns,
                CONFIG_KEY_CHECKPOINT_ID: anchor[CONF][CONFIG_KEY_CHECKPOINT_ID],
            },
        }
        for (tid, path), ws in grouped.items():
            yield PutWritesOp("put_writes", config, ws, tid, path)


# ------------------------------------------------------------------ update_state
class UpdateDelta:
    """One update_state superstep's delta state (`_Base.delta`)."""

    __slots__ = ("fork", "specs", "updated")

    def __init__(self, specs: dict, saved: Any, is_first: bool) -> None:
        self.specs = specs
        # a new branch from the base: the delta channels its pending writes touch
        self.fork: set[str] = (
            with_pending(specs, saved.pending_writes) if is_first and saved else set()
        )
        self.updated: set[str] = set()

    def writes(self, writes: Any, *, as_input: bool = False) -> None:
        """An update's writes (ids given in place, before they are stored or applied)."""
        stamp_ids(self.specs, writes)
        self.fork |= overwritten(self.specs, writes)
        if not as_input:
            self.updated |= {c for c, _ in writes if c != "__pregel_push"}

    def not_stored(self, writes: Iterable[tuple[str, Any]]) -> None:
        """The thread moved past the base: its other children would replay these writes."""
        self.fork |= {c for c, _ in writes if c in self.specs}

    def put(self, base: Any, cp: dict, metadata: dict, new_versions: dict, t2n: Any) -> dict:
        """Snapshots and counters of the update's checkpoint; returns its new versions."""
        engine = base.engine
        versions = cp["channel_versions"]
        saved = base.saved
        if saved is None:  # a new thread: every delta channel it wrote
            names = {k for k in self.specs if k in versions and engine.is_available(k)}
        else:
            counters = advance(self.specs, saved.metadata.get(COUNTERS), self.updated)
            names = due(self.specs, counters, versions, engine.is_available) | self.fork
            set_counters(metadata, counters, names)
        if not names:
            return new_versions
        bumped = snapshot_into(cp, names, engine.read, base.prev_versions, base.nv, t2n)
        if bumped:
            new_versions = {**new_versions, **{k: b[1] for k, b in bumped.items()}}
        return new_versions
