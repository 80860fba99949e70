"""Checkpoint writing of the loop (`PregelLoop`'s part): the `put` op of each step's (or the
run's exit) checkpoint, and the `put_writes` ops of the pending writes saved at exit.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    TASKS,
)
from warpgraph.pregel import _engine
from warpgraph.pregel._algo import draw_checkpoint_id, fast_id, now, sanitize_send
from warpgraph.pregel._delta import COUNTERS as DELTA_COUNTERS
from warpgraph.pregel._delta import set_counters
from warpgraph.pregel._loop_writes import _record, path_str
from warpgraph.pregel._records import PutCheckpointOp, PutWritesOp
from warpgraph.types import Send


class CheckpointMixin:
    """Part of `PregelLoop` (`_loop.py`): the checkpoint ops."""

    def _put_checkpoint(self, metadata: dict) -> Generator[tuple, Any, None]:
        exiting = metadata is self.checkpoint_metadata
        if exiting and self.checkpoint_id == self.checkpoint_id_saved:
            return
        delta = self._delta
        if delta is not None:
            counters = delta.counters(
                self, metadata, exiting, self.checkpoint_metadata.get(DELTA_COUNTERS)
            )
        if not exiting:
            metadata["step"] = self.step
            metadata["parents"] = self.conf.get(CONFIG_KEY_CHECKPOINT_MAP, {})
            self.checkpoint_metadata = metadata
            draw_checkpoint_id()
        saver = self.saver
        if saver is None:
            self.checkpoint_id = fast_id(self._id_base, self.step)
            self.step += 1
            return
        do_cp = exiting or self.durability != "exit"
        if delta is not None and not do_cp:
            set_counters(metadata, counters, ())
        new_versions = envelope = None
        if do_cp and not exiting:  # id, checkpoint (+ envelope), new versions: one crossing
            packed = self.packed_puts
            # (the in-memory saver stores only new versions' values: only those are gathered
            # into the checkpoint it is handed, unless delta channels read the others)
            self.checkpoint_id, cp, envelope, new_versions = self.engine.next_checkpoint(
                self.step,
                self._cp_updated,
                self.checkpoint_previous_versions,
                packed,
                packed and delta is None,
            )
        elif not exiting:
            self.checkpoint_id = _engine.uuid6(self.step)
        if do_cp:
            if new_versions is not None:  # made above, with the id
                pass
            elif self.packed_puts:  # (the exit checkpoint)
                cp, envelope = self.engine.create_checkpoint_packed(
                    self.checkpoint_id, now(), self._cp_updated
                )
            else:
                cp = self.engine.create_checkpoint(self.checkpoint_id, now(), self._cp_updated)
            if self._untracked and TASKS in cp["channel_values"]:
                cp["channel_values"][TASKS] = [
                    sanitize_send(v, self._untracked) if isinstance(v, Send) else v
                    for v in cp["channel_values"][TASKS]
                ]
            cc = self.checkpoint_config
            self.prev_checkpoint_config = cc if cc[CONF].get(CONFIG_KEY_CHECKPOINT_ID) else None
            cconf = cc[CONF]
            if not (
                self._shares_inputs
                and CONFIG_KEY_CHECKPOINT_NS in cconf
                and cconf[CONFIG_KEY_CHECKPOINT_NS] == self.parent_ns
            ):  # (an equal config may be shared: see `_shares_inputs`)
                cc = {**cc, CONF: {**cconf, CONFIG_KEY_CHECKPOINT_NS: self.parent_ns}}
            if delta is not None:
                if new_versions is None:
                    new_versions = self.engine.new_versions(self.checkpoint_previous_versions)
                new_versions, envelope = delta.store(self, cp, counters, new_versions, envelope)
            if new_versions is None:
                new_versions = self.engine.new_versions(self.checkpoint_previous_versions)
            self.checkpoint_previous_versions = (
                cp["channel_versions"] if self._shares_inputs else dict(cp["channel_versions"])
            )
            yield _record(  # PutCheckpointOp(...)
                PutCheckpointOp, ("put", cc, cp, self.checkpoint_metadata, new_versions, envelope)
            )
            self.checkpoint_config = {
                **cc,
                CONF: {**cc[CONF], CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id},
            }
        if not exiting:
            self.step += 1

    def _put_pending_writes(self) -> Generator[tuple, Any, None]:
        if self.saver is None or not self.pending_writes:
            return
        cc = self.checkpoint_config
        config = {
            **cc,
            CONF: {
                **cc[CONF],
                CONFIG_KEY_CHECKPOINT_NS: self.parent_ns,
                CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id,
            },
        }
        by_task: dict[str, list] = {}
        for tid, c, v in self.pending_writes:
            if c in self._untracked:
                continue
            by_task.setdefault(tid, []).append((c, v))
        for tid, ws in by_task.items():
            task = self.tasks.get(tid)
            yield PutWritesOp("put_writes", config, ws, tid, path_str(task.path) if task else "")
