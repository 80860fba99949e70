"""Time travel: which checkpoint a run starts from, and how a replay reaches its subgraphs.

A root run addressed at a `checkpoint_id` that is not a resume replays from there. Its
stateful subgraphs must then start from the state they had at that point, not from their
latest checkpoint (written later, by the run being replayed): the root hands them a
`ReplayState` (config key `CONFIG_KEY_REPLAY_STATE`, shared by every nested run of the
replay). The first run of each subgraph namespace (task ids aside, so the same subgraph
called again in a loop counts once) loads its newest checkpoint older than the replay's
bound checkpoint; later runs load their latest, as usual.

Only runs on these paths pay for any of it: a run that is not addressed and has no
replay state loads its checkpoint with one `get_tuple`, as before.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_REPLAY_STATE,
    CONFIG_KEY_RESUMING,
    NS_END,
)
from warpgraph.pregel._records import GetTupleOp

__all__ = ("ReplayState", "load_saved", "replay_state_for")


class ReplayState:
    """A replay's bound checkpoint id and the subgraph namespaces that already loaded
    their state from before it."""

    __slots__ = ("_visited_ns", "checkpoint_id")

    def __init__(self, checkpoint_id: str) -> None:
        self.checkpoint_id = checkpoint_id
        self._visited_ns: set[str] = set()

    def first_visit(self, checkpoint_ns: str) -> bool:
        """True once per namespace (its last task id dropped)."""
        head, sep, _tid = checkpoint_ns.rpartition(NS_END)
        key = head if sep else checkpoint_ns
        if key in self._visited_ns:
            return False
        self._visited_ns.add(key)
        return True

    def __repr__(self) -> str:
        return f"ReplayState({self.checkpoint_id!r})"


def load_saved(loop: Any) -> Generator[tuple, Any, Any]:
    """The loop's first saver read (ops for the drivers): the checkpoint the run starts from.

    Addressed at a checkpoint id: that checkpoint, and whether the thread has moved past it
    (`loop._superseded`, one more read). Under a parent's replay: see the module doc (the
    run then applies its input afresh: the resuming flag is dropped). Else: the latest."""
    cc = loop.checkpoint_config
    conf = loop.conf
    replay = None if cc[CONF].get(CONFIG_KEY_CHECKPOINT_ID) else conf.get(CONFIG_KEY_REPLAY_STATE)
    if replay is None:
        saved = yield GetTupleOp("get_tuple", cc)
        if saved is not None and cc[CONF].get(CONFIG_KEY_CHECKPOINT_ID):
            latest_cfg = {
                **cc,
                CONF: {k: v for k, v in cc[CONF].items() if k != CONFIG_KEY_CHECKPOINT_ID},
            }
            latest = yield GetTupleOp("get_tuple", latest_cfg)
            loop._superseded = (
                latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]
            )
        return saved
    if replay.first_visit(conf.get(CONFIG_KEY_CHECKPOINT_NS, "")):
        saved = yield ("get_before", cc, replay.checkpoint_id)
    else:
        saved = yield GetTupleOp("get_tuple", cc)
    if CONFIG_KEY_RESUMING in conf:
        loop.conf = {k: v for k, v in conf.items() if k != CONFIG_KEY_RESUMING}
        loop.config = {**loop.config, CONF: loop.conf}
    return saved


def replay_state_for(loop: Any, replay_bound: dict | None) -> ReplayState:
    """The ReplayState a time-travelling root run hands its subgraphs: bounded by the
    checkpoint it replays, or, when that is an update/fork checkpoint (made after the
    subgraphs' checkpoints of the original run), by that checkpoint's parent."""
    cid = loop.checkpoint_id
    if replay_bound is not None:
        cid = replay_bound[CONF].get(CONFIG_KEY_CHECKPOINT_ID, cid)
    elif loop.checkpoint_metadata.get("source") in ("update", "fork") and (
        prev := loop.prev_checkpoint_config
    ):
        cid = prev[CONF].get(CONFIG_KEY_CHECKPOINT_ID, cid)
    return ReplayState(cid)
