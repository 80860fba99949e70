"""`update_state` / `bulk_update_state` (+ async): LangGraph's state-update API.

One step machine, `bulk_update`, does the work of every variant: it yields what needs the
outside world and is sent back the result, like the run loop does (`_loop.py`):

* `("get_tuple", config)` -> the checkpoint tuple (warpgraph's Send / Interrupt)
* `("put", config, checkpoint, metadata, new_versions)` -> the config the saver returns
* `("put_writes", config, writes, task_id, task_path)` -> None
* `("writers", runnable, values, config)` -> None (run a node's writers on `values`)

`drive_update` performs them with the saver's sync methods, `adrive_update` awaits the
`a*` twins (and the writers' `ainvoke`). The channel bookkeeping is the Engine's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Sequence
from functools import partial
from hashlib import sha1
from typing import Any
from uuid import UUID, uuid5
from weakref import WeakKeyDictionary

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_READ,
    CONFIG_KEY_SEND,
    CONFIG_KEY_TASK_ID,
    CONFIG_KEY_THREAD_ID,
    INPUT,
    INTERRUPT,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    PUSH,
    SNAPSHOT_BUMPS,
    TASKS,
)
from warpgraph._internal._machines import run_async
from warpgraph.config import ensure_config, patch_checkpoint_map, patch_config, patch_configurable
from warpgraph.constants import END
from warpgraph.errors import InvalidUpdateError
from warpgraph.pregel import _engine, _persist
from warpgraph.pregel._algo import _local_read, draw_checkpoint_id, now
from warpgraph.pregel._delta import DELTA_HISTORY, UpdateDelta, load
from warpgraph.pregel._io import map_input
from warpgraph.pregel._persist import _convert, capabilities, foreign_types, from_foreign
from warpgraph.pregel.debug import read_task_statuses

__all__ = ("adrive_update", "bulk_update", "check_supersteps", "drive_update", "infer_as_node")

COPY = "__copy__"

Ops = Generator[tuple, Any, Any]


def _new_id(step: int) -> str:
    """A checkpoint id, drawing from the global `random` what LangGraph's does."""
    draw_checkpoint_id()
    return _engine.uuid6(step)


def check_supersteps(supersteps: Sequence[Sequence[Any]]) -> None:
    if len(supersteps) == 0:
        raise ValueError("No supersteps provided")
    for updates in supersteps:
        if len(updates) == 0:
            raise ValueError("No updates provided")


# --------------------------------------------------------------------------- helpers
def _seen_as_read(versions_seen: dict) -> dict:
    """versions_seen without the snapshot bumps a LangGraph DeltaChannel may have recorded
    (`SNAPSHOT_BUMPS`: per "node|channel" the bumped version, per "node:channel" the version
    the node really read)."""
    marks = versions_seen.get(SNAPSHOT_BUMPS)
    if not marks:
        return versions_seen
    out: dict = {}
    for node, seen in versions_seen.items():
        if node == SNAPSHOT_BUMPS:
            continue
        kept = out[node] = {}
        for ch, ver in seen.items():
            if marks.get(f"{node}{NS_SEP}{ch}") != ver:
                kept[ch] = ver
            elif (read := marks.get(f"{node}{NS_END}{ch}", _NONE)) is not _NONE:
                kept[ch] = read
    return out


_NONE = object()


def infer_as_node(graph: Any, versions_seen: dict) -> str | None:
    """The node an update without `as_node` is attributed to (LangGraph's rule): the only
    node; before any node ran, the node named like the input channel; else the node that
    saw the newest version, unless two nodes saw it."""
    nodes = graph.nodes
    if len(nodes) == 1:
        return next(iter(nodes))
    seen = _seen_as_read(versions_seen)
    if not any(v for per in seen.values() for v in per.values()):
        ic = graph.input_channels
        return ic if isinstance(ic, str) and ic in nodes else None
    # the last two of the sorted (version, node) pairs of the nodes' seen versions
    top = second = None
    for n, per in seen.items():
        if n in nodes:
            for v in per.values():
                pair = (v, n)
                if top is None or top < pair:
                    top, second = pair, top
                elif second is None or second < pair:
                    second = pair
    if top is not None and (second is None or top[0] != second[0]):
        return top[1]
    return None


def _uuid5_str(namespace: str, name: str) -> str:
    """`str(uuid5(UUID(namespace), name))`, hashed directly when `namespace` is 32 hex
    digits, dashes aside (a checkpoint id: what `UUID` reads as those digits), without the
    two UUID objects; else by `uuid`."""
    digits = namespace.replace("-", "")
    if len(digits) == 32:
        try:
            raw = bytes.fromhex(digits)
        except ValueError:
            raw = b""
        if len(raw) == 16:  # (32 characters giving 16 bytes: all hex digits)
            n = int.from_bytes(sha1(raw + name.encode()).digest()[:16], "big")
            n = (n & _UUID5_KEEP) | _UUID5_MARK  # (version 5, RFC 4122 variant)
            h = f"{n:032x}"
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return str(uuid5(UUID(namespace), name))


_UUID5_KEEP = ~((0xF000 << 64) | (0xC000 << 48))
_UUID5_MARK = (0x5000 << 64) | (0x8000 << 48)


def _update_task_id(checkpoint_id: str, i: int) -> str:
    """The id of the i-th update of a superstep that reuses no prepared task."""
    return _uuid5_str(checkpoint_id, INTERRUPT if i == 0 else f"{INTERRUPT}:{i}")


def _prepared(engine: Any, checkpoint_id: str, ns: str, step: int, v: int) -> list:
    """The tasks a checkpoint schedules, found as LangGraph's update API finds them: every
    node considered in node order (no trigger hint)."""
    engine.set_updated_channels([])
    return engine.prepare_next_tasks(checkpoint_id, ns, step, v)


class _Base:
    """What a superstep reads from the checkpoint it builds on."""

    __slots__ = (
        "config",
        "cp_config",
        "delta",
        "engine",
        "id",
        "ns",
        "nv",
        "prev_versions",
        "saved",
        "step",
    )

    def __init__(
        self, graph: Any, config: dict, saved: Any, nv: Any, delta: Any = None, cp: Any = None
    ) -> None:
        self.config = config
        self.delta = delta  # `_delta.UpdateDelta` when the graph has DeltaChannels
        self.nv = nv
        self.saved = saved
        if saved is not None:
            graph._migrate_checkpoint(saved.checkpoint)
            engine_cp = cp
            cp = saved.checkpoint
            self.id = cp["id"]
            self.prev_versions = dict(cp["channel_versions"])
            self.step = saved.metadata.get("step", -1)
            self.cp_config = patch_configurable(config, saved.config[CONF])
        else:
            engine_cp = cp = None
            self.id = _new_id(-2)
            self.prev_versions = {}
            self.step = -1
            self.cp_config = patch_configurable(
                config, {CONFIG_KEY_CHECKPOINT_NS: config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")}
            )
        self.ns = self.cp_config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
        self.engine = _engine.Engine(graph._graph_spec, cp if engine_cp is None else engine_cp)

    @property
    def v(self) -> int:
        return self.saved.checkpoint.get("v", 4) if self.saved is not None else 4

    @property
    def parents(self) -> dict:
        return self.saved.metadata.get("parents", {}) if self.saved is not None else {}

    @property
    def pending(self) -> list:
        return (self.saved.pending_writes or []) if self.saved is not None else []

    def put(self, graph: Any, source: str, step: int, id_step: int) -> Ops:
        """Save the engine's state as the checkpoint after this one."""
        engine = self.engine
        cp = engine.create_checkpoint(_new_id(id_step), now(), None)
        metadata = {"source": source, "step": step, "parents": self.parents}
        new_versions = engine.new_versions(self.prev_versions)
        if self.delta is not None:
            new_versions = self.delta.put(self, cp, metadata, new_versions, graph.trigger_to_nodes)
        next_config = yield ("put", self.cp_config, cp, metadata, new_versions)
        return next_config

    def store_writes(self, saver_config: dict, tasks: list, is_first: bool) -> Ops:
        """Keep the update's writes on the checkpoint it builds on, as pending writes (not
        when the thread has moved past that checkpoint: its other children would read
        them). `tasks`: (task_id, writes, path or None)."""
        if self.saved is None:
            return
        if is_first and saver_config[CONF].get(CONFIG_KEY_CHECKPOINT_ID):
            latest = yield (
                "get_tuple",
                patch_configurable(saver_config, {CONFIG_KEY_CHECKPOINT_ID: None}),
            )
            if latest is not None and latest.checkpoint["id"] != self.id:
                if self.delta is not None:
                    self.delta.not_stored(w for _t, ws, _p in tasks for w in ws)
                return
        for task_id, writes, path in tasks:
            if own := [w for w in writes if w[0] != PUSH]:
                yield ("put_writes", self.cp_config, own, task_id, path)


# --------------------------------------------------------------------------- the machine
def bulk_update(
    graph: Any, config: dict, supersteps: Sequence[Sequence[Any]], next_version: Any
) -> Ops:
    """Apply `supersteps` of updates one after the other; returns the last config.
    `next_version`: how the Engine numbers versions (the saver's `get_next_version`)."""
    current = patch_configurable(
        config, {CONFIG_KEY_THREAD_ID: str(config[CONF][CONFIG_KEY_THREAD_ID])}
    )
    for i, updates in enumerate(supersteps):
        current = yield from _superstep(graph, current, updates, i == 0, next_version)
    return current


def _superstep(
    graph: Any, input_config: dict, updates: Sequence[Any], is_first: bool, nv: Any
) -> Ops:
    config = graph._own_checkpoint_config(ensure_config(graph.config, input_config))
    saved = yield ("get_tuple", config)
    if graph._delta_channels:  # (the engine holds their values rebuilt from the history)
        specs = graph._delta_channels
        delta = UpdateDelta(specs, saved, is_first)
        cp = None if saved is None else (yield from load(specs, saved.checkpoint, saved.config))
        base = _Base(graph, config, saved, nv, delta, cp)
    else:
        base = _Base(graph, config, saved, nv)
    values, as_node = updates[0][:2]
    if values is None and as_node == END:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when clearing state")
        return (yield from _clear(graph, base))
    if as_node == INPUT:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when updating as input")
        return (yield from _as_input(graph, base, values, is_first))
    if as_node == COPY:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot copy checkpoint with multiple updates")
        return (yield from _copy(graph, base, values))
    return (yield from _as_nodes(graph, base, updates, is_first))


def _clear(graph: Any, base: _Base) -> Ops:
    """`update_state(config, None, as_node=END)`: finish the checkpoint's tasks without
    running them (their saved writes applied), so nothing is scheduled next."""
    engine, saved = base.engine, base.saved
    if saved is not None:
        tasks = _prepared(engine, base.id, base.ns, base.step + 1, base.v)
        if null_writes := [w[1:] for w in base.pending if w[0] == NULL_TASK_ID]:
            engine.apply_writes([(INPUT, (), (), null_writes)], base.nv)
        done = {tid: st.output for tid, st in read_task_statuses(base.pending).items()}
        engine.apply_writes(
            [(name, path, trig, list(done.get(tid, ()))) for tid, name, path, trig, _ in tasks],
            base.nv,
        )
    next_config = yield from base.put(graph, "update", base.step + 1, base.step)
    return patch_checkpoint_map(next_config, saved.metadata if saved is not None else None)


def _as_input(graph: Any, base: _Base, values: Any, is_first: bool) -> Ops:
    """`as_node="__input__"`: the values applied as the graph's input."""
    writes = list(map_input(graph.input_channels, values))
    if not writes:
        raise InvalidUpdateError(f"Received no input writes for {graph.input_channels}")
    if base.delta is not None:
        base.delta.writes(writes, as_input=True)
    yield from base.store_writes(
        base.config, [(_uuid5_str(base.id, INPUT), writes, None)], is_first
    )
    base.engine.apply_writes([(INPUT, (), (), writes)], base.nv)
    saved = base.saved
    step = base.step + 1 if saved is not None and saved.metadata.get("step") is not None else -1
    next_config = yield from base.put(graph, "input", step, step)
    return patch_checkpoint_map(next_config, saved.metadata if saved is not None else None)


def _copy(graph: Any, base: _Base, values: Any) -> Ops:
    """`as_node="__copy__"`: the checkpoint saved again as a sibling (source "fork"), then,
    when `values` lists updates, those applied to the copy (each reusing the id of the
    copy's task of its node, in order)."""
    saved = base.saved
    if saved is None:
        raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
    old = saved.checkpoint
    cp = {
        "v": 4,
        "ts": now(),
        "id": _new_id(base.step),
        "channel_values": dict(old["channel_values"]),
        "channel_versions": dict(old["channel_versions"]),
        "versions_seen": {k: dict(v) for k, v in old["versions_seen"].items()},
        "updated_channels": None,
    }
    metadata = {"source": "fork", "step": base.step + 1, "parents": base.parents}
    if "counters_since_delta_snapshot" in saved.metadata:
        metadata["counters_since_delta_snapshot"] = saved.metadata["counters_since_delta_snapshot"]
    parent = saved.parent_config or patch_configurable(
        saved.config, {CONFIG_KEY_CHECKPOINT_ID: None}
    )
    # no new versions, as LangGraph's update API: the copy's values were stored with the
    # checkpoint it copies (the savers find them by version, whatever the copy's parent)
    next_config = yield ("put", parent, cp, metadata, {})
    if not (isinstance(values, list) and values):
        return patch_checkpoint_map(next_config, saved.metadata)
    from warpgraph.types import StateUpdate

    ids: dict[str, list[str]] = {}
    ns = next_config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
    for tid, name, _p, _t, _i in _prepared(base.engine, cp["id"], ns, base.step + 2, 4):
        ids.setdefault(name, []).append(tid)
    grouped: dict[str, list] = {}
    for item in values:
        if not isinstance(item, Sequence):
            raise InvalidUpdateError(f"Invalid update item: {item} when copying checkpoint")
        vals, node = item[:2]
        group = grouped.setdefault(node, [])
        known = ids.get(node, ())
        group.append(
            StateUpdate(vals, node, known[len(group)] if len(group) < len(known) else None)
        )
    return (
        yield from _superstep(
            graph,
            patch_checkpoint_map(next_config, saved.metadata),
            [u for group in grouped.values() for u in group],
            False,
            base.nv,
        )
    )


def _as_nodes(graph: Any, base: _Base, updates: Sequence[Any], is_first: bool) -> Ops:
    """Each update run through the writers of its node, as if that node had returned it;
    all of them applied as one step."""
    nodes = graph.nodes
    engine = base.engine
    prepared: dict[str, deque] = {}
    if base.saved is not None and base.saved.pending_writes is not None:
        for tid, name, _p, _t, _i in _prepared(engine, base.id, base.ns, base.step + 1, base.v):
            prepared.setdefault(name, deque()).append(tid)
    chosen: list[tuple[str, Any, str | None]] = []
    if len(updates) == 1:
        values, as_node, task_id = updates[0]
        if as_node is None:
            cp = base.saved.checkpoint if base.saved is not None else None
            as_node = infer_as_node(graph, cp["versions_seen"] if cp else {})
        if as_node is None:
            raise InvalidUpdateError("Ambiguous update, specify as_node")
        if as_node not in nodes:
            raise InvalidUpdateError(f"Node {as_node} does not exist")
        chosen.append((as_node, values, task_id))
    else:
        for values, as_node, task_id in updates:
            if as_node is None:
                raise InvalidUpdateError("as_node is required when applying multiple updates")
            if as_node not in nodes:
                raise InvalidUpdateError(f"Node {as_node} does not exist")
            chosen.append((as_node, values, task_id))
    tasks: list[tuple[str, tuple, deque, str]] = []
    for i, (as_node, values, given_id) in enumerate(chosen):
        writers = nodes[as_node].flat_writers
        if not writers:
            raise InvalidUpdateError(f"Node {as_node} has no writers")
        queue = prepared.get(as_node)
        task_id = given_id or (queue.popleft() if queue else _update_task_id(base.id, i))
        writes: deque = deque()
        run = writers[0] if len(writers) == 1 else _sequence(nodes[as_node], writers)
        run_config = patch_config(
            base.config,
            run_name=graph.name + "UpdateState",
            configurable={
                CONFIG_KEY_SEND: writes.extend,
                CONFIG_KEY_TASK_ID: task_id,
                CONFIG_KEY_READ: partial(_local_read, engine, writes),
            },
        )
        yield ("writers", run, values, run_config)
        if base.delta is not None:
            base.delta.writes(writes)
        tasks.append((task_id, (INTERRUPT, i), writes, as_node))
    yield from base.store_writes(
        base.config,
        [(tid, list(ws), _engine.task_path_str(path)) for tid, path, ws, _n in tasks],
        is_first,
    )
    engine.apply_writes(
        [(name, path, (INTERRUPT,), list(ws)) for _t, path, ws, name in tasks],
        base.nv,
    )
    next_config = yield from base.put(graph, "update", base.step + 1, base.step + 1)
    for tid, _path, ws, _n in tasks:
        if push := [w for w in ws if w[0] == PUSH]:
            yield ("put_writes", next_config, push, tid, None)
    return patch_checkpoint_map(
        next_config, base.saved.metadata if base.saved is not None else None
    )


def _sequence(node: Any, writers: list) -> Any:
    """A node's writers as one runnable, made once per node (while it has these writers:
    a RunnableSeq holds nothing of a call)."""
    try:
        held = _SEQUENCES.get(node)
    except TypeError:  # (a node type without weak references or hash: made each time)
        held = node = None
    if held is not None and held[0] is writers:
        return held[1]
    from warpgraph._internal._runnable import RunnableSeq

    seq = RunnableSeq(*writers)
    if node is not None:
        _SEQUENCES[node] = (writers, seq)
    return seq


_SEQUENCES: WeakKeyDictionary = WeakKeyDictionary()


# --------------------------------------------------------------------------- drivers
class _Saver:
    """The saver calls of one update (LangGraph's types for foreign savers)."""

    __slots__ = ("foreign", "is_async", "saver", "task_path")

    def __init__(self, saver: Any, is_async: bool) -> None:
        self.saver = saver
        self.is_async = is_async
        self.foreign = foreign_types(saver)
        self.task_path = capabilities(saver, is_async)[3]  # (detected once per saver type)

    def put_args(self, op: tuple) -> tuple:
        _, config, cp, metadata, new_versions = op
        if (
            self.foreign is not None
            and _persist.WRITE_LANGGRAPH_TYPES
            and TASKS in cp["channel_values"]
        ):
            ours, theirs = self.foreign
            cp = {**cp, "channel_values": dict(cp["channel_values"])}
            cp["channel_values"][TASKS] = _convert(cp["channel_values"][TASKS], ours, theirs)
        return config, cp, metadata, new_versions

    def writes_call(self, op: tuple) -> tuple[tuple, dict]:
        _, config, writes, task_id, path = op
        if self.foreign is not None and _persist.WRITE_LANGGRAPH_TYPES:
            ours, theirs = self.foreign
            writes = [
                (c, _convert(v, ours, theirs)) if c in (TASKS, INTERRUPT) else (c, v)
                for c, v in writes
            ]
        kw = {"task_path": path} if self.task_path and path is not None else {}
        return (config, writes, task_id), kw

    def read(self, saved: Any) -> Any:
        return saved if self.foreign is None else from_foreign(saved, self.foreign)

    def route(self, op: tuple) -> tuple:
        """The saver (or writer) call performing `op` (`_internal._machines`)."""
        kind, saver, aio = op[0], self.saver, self.is_async
        if kind == "get_tuple":
            return (saver.aget_tuple if aio else saver.get_tuple), (op[1],), None, self.read
        if kind == DELTA_HISTORY:
            call = saver.aget_delta_channel_history if aio else saver.get_delta_channel_history
            return call, (), {"config": op[1], "channels": op[2]}, None
        if kind == "put":
            return (saver.aput if aio else saver.put), self.put_args(op), None, None
        if kind == "put_writes":
            args, kw = self.writes_call(op)
            return (saver.aput_writes if aio else saver.put_writes), args, kw, None
        writer = op[1]  # ("writers", writer, input, config)
        return (writer.ainvoke if aio else writer.invoke), (op[2], op[3]), None, None


def drive_update(machine: Ops, saver: Any) -> Any:
    """Run `machine` with the saver's sync methods; its return value. (`run_sync`'s
    steps written out: each op's outcome sent back, an error raised from the call.)"""
    route = _Saver(saver, False).route
    send = machine.send
    value = None
    while True:
        try:
            op = send(value)
        except StopIteration as stop:
            return stop.value
        call, args, kwargs, post = route(op)
        value = call(*args, **kwargs) if kwargs else call(*args)
        if post is not None:
            value = post(value)


async def adrive_update(machine: Ops, saver: Any) -> Any:
    """`drive_update` with the saver's `a*` methods and the writers' `ainvoke`."""
    return await run_async(machine, _Saver(saver, True).route)


# --------------------------------------------------------------------------- the API
def _next_version(saver: Any) -> Any:
    if type(saver).get_next_version is _saver_next_version():
        return "str"
    return saver.get_next_version


def _saver_next_version() -> Any:
    global _SAVER_NEXT_VERSION
    if _SAVER_NEXT_VERSION is None:
        from warpgraph.pregel._savers import _saver_next_version as found

        _SAVER_NEXT_VERSION = found
    return _SAVER_NEXT_VERSION()


_SAVER_NEXT_VERSION: Any = None


class UpdateMixin:
    """update_state / bulk_update_state (+ async) for Pregel."""

    def bulk_update_state(self, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
        """Apply supersteps of `StateUpdate`s (values, as_node, task_id), each as one step
        of the graph; returns the config of the last checkpoint written."""
        saver = self._state_checkpointer(config)  # type: ignore[attr-defined]
        check_supersteps(supersteps)
        if sub := self._subgraph_for_namespace(config, saver, for_update=True):  # type: ignore[attr-defined]
            return sub[0].bulk_update_state(sub[1], supersteps)
        return drive_update(bulk_update(self, config, supersteps, _next_version(saver)), saver)

    async def abulk_update_state(self, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
        saver = self._state_checkpointer(config)  # type: ignore[attr-defined]
        check_supersteps(supersteps)
        if sub := self._subgraph_for_namespace(config, saver, for_update=True):  # type: ignore[attr-defined]
            return await sub[0].abulk_update_state(sub[1], supersteps)
        machine = bulk_update(self, config, supersteps, _next_version(saver))
        return await adrive_update(machine, saver)

    def update_state(
        self,
        config: dict,
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict:
        """Update the thread's state with `values` as if node `as_node` (by default the
        last node that updated the state, if that is not ambiguous) had returned them."""
        from warpgraph.types import StateUpdate

        return self.bulk_update_state(config, [[StateUpdate(values, as_node, task_id)]])

    async def aupdate_state(
        self,
        config: dict,
        values: dict[str, Any] | Any,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict:
        from warpgraph.types import StateUpdate

        return await self.abulk_update_state(config, [[StateUpdate(values, as_node, task_id)]])
