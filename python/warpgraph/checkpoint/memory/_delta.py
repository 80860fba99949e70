"""`InMemorySaver.get_delta_channel_history`: the parent-chain walk over the saver's dicts.

Only what the walk needs is decoded: each ancestor's envelope (for its versions), the blobs
of the channels still looking for their seed, and the writes to those channels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from warpgraph.checkpoint._sql.appends import DELTA_TYPE
from warpgraph.checkpoint.base import (
    DeltaChannelHistory,
    PendingWrite,
    RunnableConfig,
    get_checkpoint_id,
    writes_sort_key,
)

__all__ = ("memory_delta_history",)


def memory_delta_history(
    saver: Any, config: RunnableConfig, channels: Sequence[str]
) -> Mapping[str, DeltaChannelHistory]:
    wanted = list(channels)
    if not wanted:
        return {}
    conf = config["configurable"]
    thread_id = conf["thread_id"]
    ns = conf.get("checkpoint_ns", "")
    checkpoints = saver.storage.get(thread_id, {}).get(ns, {})
    target = get_checkpoint_id(config) or max(checkpoints, default="")
    entry = checkpoints.get(target)
    cursor = entry[2] if entry is not None else None
    loads = saver.serde.loads_typed
    newest_first: dict[str, list[PendingWrite]] = {c: [] for c in wanted}
    seeds: dict[str, Any] = {}
    open_ = set(wanted)
    seen: set[str] = set()
    while cursor is not None and open_ and cursor not in seen:
        entry = checkpoints.get(cursor)
        if entry is None:
            break
        seen.add(cursor)
        versions = loads(entry[0]).get("channel_versions", {})
        found = {}
        for ch in open_:
            version = versions.get(ch)
            if version is None:
                continue
            blob = saver.blobs.get((thread_id, ns, ch, version))
            if blob is not None and blob[0] != "empty":
                found[ch] = (
                    saver._rebuild(thread_id, ns, ch, version)[1]
                    if blob[0] == DELTA_TYPE
                    else loads(blob)
                )
        held = saver.writes.get((thread_id, ns, cursor))
        if held:
            # this ancestor's writes made its child: newest-first order within the step too
            for key in sorted(held, key=lambda k: writes_sort_key(held[k][3], *k), reverse=True):
                task_id, ch, blob, _path = held[key]
                if ch in open_:
                    newest_first[ch].append((task_id, ch, loads(blob)))
        for ch, value in found.items():
            seeds[ch] = value
            open_.discard(ch)
        cursor = entry[2]
    out: dict[str, DeltaChannelHistory] = {}
    for ch in wanted:
        history: DeltaChannelHistory = {"writes": newest_first[ch][::-1]}
        if ch in seeds:
            history["seed"] = seeds[ch]
        out[ch] = history
    return out
