"""Checkpoint layout migrations: checkpoints saved by older LangGraph releases, read in place.

Runs only when a loaded checkpoint is older than the current layout (`v` < 3 for StateGraph
channel names; `Pregel._migrate_checkpoint` moves v < 4 pending sends); current checkpoints
return at the first test.

Layouts before v3 named the channel that schedules a node after another in three ways, all
of them `branch:to:<node>` today:

- `start:<node>`: the edge from START,
- `branch:<source>:<condition>:<node>`: a conditional edge,
- `<source>`: a plain edge, one channel per source node feeding each of its targets.

A renamed channel keeps the larger of the old and new versions, moves its value when the new
name has none (a plain edge's value goes in any case), and carries the seen versions of the node it triggers and of `__interrupt__`.
"""

from __future__ import annotations

from typing import Any

from warpgraph._internal._constants import INTERRUPT
from warpgraph.constants import END, START

__all__ = ("migrate_state_graph_channels",)

_ABSENT = object()


def _carry_seen(seen: dict, node: str, old: str, new: str) -> None:
    """Move `old`'s seen version to `new` for `node` and for interrupts (larger one wins)."""
    for per_node in (seen.get(node), seen.get(INTERRUPT)):
        if not per_node or old not in per_node:
            continue
        version = per_node.pop(old)
        kept = per_node.get(new, _ABSENT)
        per_node[new] = version if kept is _ABSENT or version > kept else kept


def _rename(checkpoint: dict, old: str, node: str, version: Any, value: Any) -> None:
    """Give `branch:to:<node>` the channel `old` (already taken out of versions/values)."""
    versions = checkpoint["channel_versions"]
    values = checkpoint["channel_values"]
    new = f"branch:to:{node}"
    current = versions.get(new, _ABSENT)
    _carry_seen(checkpoint["versions_seen"], node, old, new)
    if value is not _ABSENT and new not in values:
        values[new] = value
    versions[new] = version if current is _ABSENT or version > current else current


def _target_of_named(key: str, nodes: Any) -> str | None:
    """The node a `start:<node>` / `branch:<src>:<cond>:<node>` channel triggers, if any."""
    if key.startswith("start:"):
        node = key.split(":")[1]
    elif key.startswith("branch:") and key.count(":") == 3:
        node = key.rsplit(":", 1)[1]
    else:
        return None
    return node if node in nodes else None


def migrate_state_graph_channels(checkpoint: dict, nodes: Any, edges: Any) -> None:
    """Rename pre-v3 StateGraph trigger channels (see module doc). `edges`: the builder's."""
    versions = checkpoint["channel_versions"]
    if not versions or checkpoint["v"] >= 3:
        return
    values = checkpoint["channel_values"]
    # START edges first, then conditional edges: a later name sees the earlier renames
    for prefix_pass in ("start:", "branch:"):
        for key in list(versions):
            if not key.startswith(prefix_pass):
                continue
            node = _target_of_named(key, nodes)
            if node is None:
                continue
            # the old value stays put when the new channel already has one
            value = _ABSENT if f"branch:to:{node}" in values else values.pop(key, _ABSENT)
            _rename(checkpoint, key, node, versions.pop(key), value)
    if all(k not in nodes for k in versions):
        return
    targets: dict[str, list[str]] = {}
    for src, dst in edges:
        if src != START and dst != END:
            targets.setdefault(src, []).append(dst)
    seen = checkpoint["versions_seen"]
    for key in list(versions):
        if key == START or key not in nodes:
            continue
        version = versions.pop(key)
        value = values.pop(key, _ABSENT)
        for dst in targets.get(key, ()):
            _rename(checkpoint, key, dst, version, value)
        if INTERRUPT in seen:
            seen[INTERRUPT].pop(key, None)
