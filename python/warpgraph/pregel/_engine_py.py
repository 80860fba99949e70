"""Pure-Python twin of the Rust `Engine`: the executable spec of the per-step bookkeeping.

Same API and results as `warpgraph._core.Engine` (see ARCHITECTURE.md, "Engine contract").
Algorithms follow LangGraph's `apply_writes`, `prepare_next_tasks`, `_triggers`,
`should_interrupt`, `create_checkpoint` and `get_new_channel_versions`.
"""

from __future__ import annotations

import binascii
import logging
import random
import warnings
from collections.abc import Callable, Sequence
from hashlib import sha1
from typing import Any

from warpgraph._internal._constants import (
    INTERRUPT,
    NS_SEP,
    PULL,
    PUSH,
    RESERVED,
    RESERVED_WRITE_KEYS,
    TASKS,
)
from warpgraph._internal._typing import MISSING
from warpgraph.channels.base import BaseChannel

__all__ = ("Engine", "GraphSpec", "next_version_str", "task_id", "task_path_str")

logger = logging.getLogger("warpgraph")
_PUSH_TRIGGERS = (PUSH,)


def task_path_str(path: Any) -> str:
    """LangGraph's sortable string form of a task path."""
    if isinstance(path, (tuple, list)):
        return "~" + ", ".join([task_path_str(p) for p in path])
    if isinstance(path, int):
        return f"{path:010d}"
    return str(path)


def task_id(checkpoint_id: str, parts: Sequence[str], v: int = 4) -> str:
    """Deterministic task id: xxh3_128 (v > 1) or sha1 over id bytes + concatenated parts."""
    raw = binascii.unhexlify(checkpoint_id.replace("-", "")) + "".join(parts).encode()
    from xxhash import xxh3_128_hexdigest  # test dependency: the twin is a test oracle

    h = xxh3_128_hexdigest(raw) if v > 1 else sha1(raw, usedforsecurity=False).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def next_version_str(current: Any) -> str:
    """The savers' version string: zero-padded integer part plus a random suffix."""
    n = (
        0
        if current is None
        else current
        if isinstance(current, int)
        else int(current.split(".")[0])
    )
    return f"{n + 1:032}.{random.random():016}"


def _next_int(current: Any) -> int:
    return 1 if current is None else current + 1


class GraphSpec:
    """Channel specs and node (triggers, reads) of one compiled graph."""

    __slots__ = ("channels", "nodes", "trigger_to_nodes")

    def __init__(
        self,
        channels: dict[str, BaseChannel],
        nodes: dict[str, tuple[list[str], list[str] | str]],
    ) -> None:
        for name, (triggers, _reads) in nodes.items():
            for t in triggers:
                if t not in channels:
                    raise ValueError(f"Node {name} triggers on unknown channel {t}")
        self.channels = dict(channels)
        self.nodes = {
            n: (list(t), r if isinstance(r, str) else list(r)) for n, (t, r) in nodes.items()
        }
        t2n: dict[str, list[str]] = {}
        for name, (triggers, _) in self.nodes.items():
            for t in triggers:
                t2n.setdefault(t, []).append(name)
        self.trigger_to_nodes = t2n


class Engine:
    """Per-run state: channels, channel_versions, versions_seen, updated_channels."""

    __slots__ = ("_ch", "_seen", "_spec", "_updated", "_versions")

    def __init__(self, spec: GraphSpec, checkpoint: dict | None) -> None:
        self._spec = spec
        cp = checkpoint or {}
        values = cp.get("channel_values") or {}
        self._ch = {k: c.from_checkpoint(values.get(k, MISSING)) for k, c in spec.channels.items()}
        self._versions = dict(cp.get("channel_versions") or {})
        self._seen = {k: dict(v) for k, v in (cp.get("versions_seen") or {}).items()}
        upd = cp.get("updated_channels")
        self._updated = set(upd) if upd else set()

    # --- reading
    def channel_versions(self) -> dict:
        return dict(self._versions)

    def versions_seen(self) -> dict:
        return {k: dict(v) for k, v in self._seen.items()}

    def updated_channels(self) -> list[str]:
        return sorted(self._updated)

    def set_updated_channels(self, channels: list[str]) -> None:
        """Replace the trigger hint for the next prepare_next_tasks (empty: full scan)."""
        self._updated = set(channels)

    def is_available(self, channel: str) -> bool:
        ch = self._ch.get(channel)
        return ch is not None and ch.is_available()

    def read(
        self, select: str | list[str], fresh_writes: list[tuple[str, Any]] | None = None
    ) -> Any:
        chans = self._ch
        if fresh_writes is not None:
            names = [select] if isinstance(select, str) else [k for k in select if k in chans]
            grouped: dict[str, list] = {k: [] for k in names}
            for c, v in fresh_writes:
                if c in grouped:
                    grouped[c].append(v)
            chans = {}
            for k, vals in grouped.items():
                cc = self._ch[k].copy()
                cc.update(vals)
                chans[k] = cc
        if isinstance(select, str):
            return chans[select].get()
        return {k: chans[k].get() for k in select if k in chans and chans[k].is_available()}

    def checkpoint_values(self) -> dict:
        out = {}
        versions = self._versions
        for k, ch in self._ch.items():
            if k in versions:
                v = ch.checkpoint()
                if v is not MISSING:
                    out[k] = v
        return out

    # --- one super-step
    def prepare_next_tasks(
        self, checkpoint_id: str, parent_ns: str, step: int, v: int = 4
    ) -> list[tuple[str, str, tuple, tuple, Any]]:
        nodes = self._spec.nodes
        chans = self._ch
        sstep = str(step)
        out: list[tuple[str, str, tuple, tuple, Any]] = []
        tasks_ch = chans.get(TASKS)
        if tasks_ch is not None and tasks_ch.is_available():
            from warpgraph.types import Send

            for idx, packet in enumerate(tasks_ch.get()):
                if not isinstance(packet, Send):
                    warnings.warn(f"Ignoring invalid packet type {type(packet)} in pending sends")
                    continue
                node = packet.node
                if node not in nodes:
                    warnings.warn(f"Ignoring unknown node name {node} in pending sends")
                    continue
                ns = f"{parent_ns}{NS_SEP}{node}" if parent_ns else node
                tid = task_id(checkpoint_id, (ns, sstep, node, PUSH, str(idx)), v)
                out.append((tid, node, (PUSH, idx, False), _PUSH_TRIGGERS, packet.arg))
        versions = self._versions
        if not versions:
            return out
        if self._updated and self._spec.trigger_to_nodes:
            t2n = self._spec.trigger_to_nodes
            cand: set[str] = set()
            for c in self._updated:
                cand.update(t2n.get(c, ()))
            candidates: Any = sorted(cand)
        else:
            candidates = nodes.keys()
        null = type(next(iter(versions.values())))()
        for name in candidates:
            triggers, reads = nodes[name]
            seen = self._seen.get(name)
            fire = False
            for c in triggers:
                if chans[c].is_available() and (
                    seen is None or versions.get(c, null) > seen.get(c, null)
                ):
                    fire = True
                    break
            if not fire:
                continue
            if isinstance(reads, str):
                ch = chans.get(reads)
                if ch is None or not ch.is_available():
                    continue
                val = ch.get()
            else:
                val = {k: chans[k].get() for k in reads if k in chans and chans[k].is_available()}
            trig = tuple(sorted(triggers))
            ns = f"{parent_ns}{NS_SEP}{name}" if parent_ns else name
            tid = task_id(checkpoint_id, (ns, sstep, name, PULL, *trig), v)
            out.append((tid, name, (PULL, name), trig, val))
        return out

    def advance(
        self,
        tasks: list[tuple[str, tuple, Sequence[str], Sequence[tuple[str, Any]]]],
        next_version: str | Callable | None,
        id_prefix: str,
        parent_ns: str,
        step: int,
        stop: int,
        v: int = 4,
    ) -> tuple[list[str], str, list[tuple]]:
        updated = self.apply_writes(tasks, next_version)
        cid = "%s%012x" % (id_prefix, step & 0xFFFFFFFFFFFF)  # noqa: UP031 - as the loop's ids
        nxt = self.prepare_next_tasks(cid, parent_ns, step + 1, v) if step < stop else []
        return updated, cid, nxt

    def apply_writes(
        self,
        tasks: list[tuple[str, tuple, Sequence[str], Sequence[tuple[str, Any]]]],
        next_version: str | Callable | None,
    ) -> list[str]:
        chans = self._ch
        versions = self._versions
        tasks = sorted(tasks, key=lambda t: task_path_str(t[1]))
        bump_step = any(t[2] for t in tasks)
        for name, _path, triggers, _w in tasks:
            d = self._seen.setdefault(name, {})
            for c in triggers:
                if c in versions:
                    d[c] = versions[c]
        if next_version is None:
            nv = None
        else:
            cur = max(versions.values()) if versions else None
            if next_version == "int":
                nv = _next_int(cur)
            elif next_version == "str":
                nv = next_version_str(cur)
            else:
                nv = next_version(cur, None)
        consumed = {c for t in tasks for c in t[2] if c not in RESERVED and c in chans}
        for c in consumed:
            if chans[c].consume() and nv is not None:
                versions[c] = nv
        grouped: dict[str, list] = {}
        for name, path, _t, writes in tasks:
            for c, val in writes:
                if c in RESERVED_WRITE_KEYS:
                    continue
                if c in chans:
                    grouped.setdefault(c, []).append(val)
                else:
                    logger.warning(
                        f"Task {name} with path {path} wrote to unknown channel {c}, ignoring it."
                    )
        updated: set[str] = set()
        for c, vals in grouped.items():
            ch = chans[c]
            if ch.update(vals) and nv is not None:
                versions[c] = nv
                if ch.is_available():
                    updated.add(c)
        if bump_step:
            for c, ch in chans.items():
                if c not in updated and ch.is_available() and ch.update(()) and nv is not None:
                    versions[c] = nv
                    if ch.is_available():
                        updated.add(c)
            if updated.isdisjoint(self._spec.trigger_to_nodes):
                for c, ch in chans.items():
                    if ch.finish() and nv is not None:
                        versions[c] = nv
                        if ch.is_available():
                            updated.add(c)
        self._updated = updated
        return sorted(updated)

    def mark_interrupt_seen(self) -> None:
        seen = self._seen.setdefault(INTERRUPT, {})
        versions = self._versions
        for k in self._ch:  # channel (spec) order, like LangGraph
            if k in versions:
                seen[k] = versions[k]

    def should_interrupt(self, interrupt_nodes: Any, tasks: list[tuple[str, bool]]) -> bool:
        versions = self._versions
        if not versions:
            return False
        null = type(next(iter(versions.values())))()
        seen = self._seen.get(INTERRUPT, {})
        if not any(v > seen.get(c, null) for c, v in versions.items()):
            return False
        if interrupt_nodes == "*":
            return any(not hidden for _n, hidden in tasks)
        return any(n in interrupt_nodes for n, _h in tasks)

    def create_checkpoint(
        self, checkpoint_id: str, ts: str, updated_channels: list[str] | None
    ) -> dict:
        return {
            "v": 4,
            "ts": ts,
            "id": checkpoint_id,
            "channel_values": self.checkpoint_values(),
            "channel_versions": dict(self._versions),
            "versions_seen": {k: dict(v) for k, v in self._seen.items()},
            "updated_channels": sorted(updated_channels) if updated_channels is not None else None,
        }

    def create_checkpoint_packed(
        self, checkpoint_id: str, ts: str, updated_channels: list[str] | None
    ) -> tuple[dict, None]:
        """(the checkpoint, None): the saver encodes the envelope itself."""
        return self.create_checkpoint(checkpoint_id, ts, updated_channels), None

    def next_checkpoint(
        self,
        step: int,
        updated_channels: list[str] | None,
        previous: dict,
        envelope: bool = True,
        only_new: bool = False,
    ) -> tuple[str, dict, None, dict]:
        from warpgraph import _core

        cid = _core.uuid6(step)
        cp = self.create_checkpoint(cid, _core.utc_now(), updated_channels)
        new = self.new_versions(previous)
        if only_new:  # (the values of the channels in `new` only)
            values = cp["channel_values"]
            cp["channel_values"] = {k: v for k, v in values.items() if k in new}
        return cid, cp, None, new

    def new_versions(self, previous: dict) -> dict:
        cur = self._versions
        if not previous:
            return dict(cur)
        null = type(next(iter(cur.values()), None))()
        return {k: v for k, v in cur.items() if v > previous.get(k, null)}
