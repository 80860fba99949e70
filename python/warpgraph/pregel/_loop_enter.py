"""Starting a run (`PregelLoop`'s part): the saved checkpoint loaded, the engine made, and
LangGraph's first step (input, Command, resume, forks of a time travel).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from warpgraph._internal import _constants as _c
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_STREAM,
    INPUT,
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
)
from warpgraph._internal._typing import MISSING
from warpgraph.errors import EmptyInputError
from warpgraph.pregel import _engine
from warpgraph.pregel._algo import draw_checkpoint_id, fast_id, is_xxh3
from warpgraph.pregel._io import map_command, map_input
from warpgraph.pregel._records import GetTupleOp, PreparedTask
from warpgraph.pregel._replay import load_saved, replay_state_for
from warpgraph.pregel._resume import EmptyCommandError, check_resume
from warpgraph.pregel.debug import read_task_statuses
from warpgraph.types import Command


class EnterMixin:
    """Part of `PregelLoop` (`_loop.py`): the run's start."""

    def _enter(self) -> Generator[tuple, Any, None]:
        saved = None
        if self.saver is not None:
            if self._addressed:  # time travel (pregel/_replay.py)
                saved = yield from load_saved(self)
            else:
                saved = yield GetTupleOp("get_tuple", self.checkpoint_config)
        conf_cc = self.checkpoint_config
        if saved is None:
            checkpoint = None
            draw_checkpoint_id()  # (LangGraph's empty checkpoint)
            self.checkpoint_id = self.checkpoint_id_saved = (
                _engine.uuid6(-2) if self.saver is not None else fast_id(self._id_base, 0xFFFE)
            )
            self.checkpoint_metadata: dict = {"step": -2}
            self.checkpoint_config = {
                **conf_cc,
                CONF: {CONFIG_KEY_CHECKPOINT_NS: "", **conf_cc.get(CONF, {})},
            }
        else:
            checkpoint = saved.checkpoint
            self.graph._migrate_checkpoint(checkpoint)
            self.checkpoint_config = {
                **conf_cc,
                **saved.config,
                CONF: {
                    CONFIG_KEY_CHECKPOINT_NS: "",
                    **conf_cc.get(CONF, {}),
                    **saved.config.get(CONF, {}),
                },
            }
            self.prev_checkpoint_config = saved.parent_config
            self.checkpoint_id = self.checkpoint_id_saved = checkpoint["id"]
            self.checkpoint_metadata = saved.metadata
            self.pending_writes = [(str(t), c, v) for t, c, v in (saved.pending_writes or ())]
            self._pending_ids = {w[0] for w in self.pending_writes}
        if self._delta is not None:  # (its values rebuilt from the saver's history)
            checkpoint = yield from self._delta.enter(self, saved, checkpoint)
        self.checkpoint_v = checkpoint.get("v", 4) if checkpoint else 4
        self.engine = _engine.Engine(self._spec, checkpoint)
        self.has_versions = bool(checkpoint and checkpoint.get("channel_versions"))
        self.step = self.checkpoint_metadata["step"] + 1
        self.stop = self.step + self.config["recursion_limit"] + 1
        self.checkpoint_previous_versions = (
            dict(checkpoint["channel_versions"]) if checkpoint else {}
        )
        self.latest_values: Any = MISSING
        if checkpoint and "__previous__" in (checkpoint.get("channel_values") or {}):
            self._previous = checkpoint["channel_values"]["__previous__"]
        yield from self._first()

    def _first(self) -> Generator[tuple, Any, None]:
        conf = self.conf
        inp = self.input
        is_cmd = isinstance(inp, Command)
        is_resuming = self.has_versions and bool(
            conf.get(
                CONFIG_KEY_RESUMING,
                inp is None
                or is_cmd
                or (
                    not self.is_nested
                    and self.config.get("metadata", {}).get("run_id")
                    == self.checkpoint_metadata.get("run_id", MISSING)
                ),
            )
        )
        time_travel = self._addressed and (
            # a subgraph addressed through its own checkpoint_map entry (get_state's
            # subgraph configs): the parent resumes it, yet this is time travel
            (self.is_nested and self.parent_ns in conf.get(CONFIG_KEY_CHECKPOINT_MAP, {}))
            or not ((is_cmd and inp.resume is not None) or conf.get(CONFIG_KEY_RESUMING, False))
        )
        superseded = self._superseded
        self.is_replaying = time_travel or superseded
        if time_travel:
            self.pending_writes = [w for w in self.pending_writes if w[1] != RESUME]
        if self._delta is not None:
            self._delta.first(self, is_resuming)
        forks = (
            is_resuming
            and time_travel
            and (self.checkpoint_metadata.get("source") not in ("update", "fork") or superseded)
        )
        replay_bound = None
        carried: list[tuple[str, str, Any]] = []
        if is_cmd:
            resume_is_map = False
            if inp.resume is not None:
                if self.saver is None:
                    raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
                resume = inp.resume
                resume_is_map = isinstance(resume, dict) and all(is_xxh3(k) for k in resume)
                check_resume(self, resume, resume_is_map)
                if resume_is_map:
                    conf[_c.CONFIG_KEY_RESUME_MAP] = resume
            grouped: dict[str, list] = {}
            for tid, c, v in map_command(inp):
                if not (c == RESUME and resume_is_map):
                    grouped.setdefault(tid, []).append((c, v))
            if not grouped and not resume_is_map:
                raise EmptyCommandError("Received empty Command input")
            for tid, ws in grouped.items():
                if self._delta is not None:
                    self._delta.command_writes(tid, ws, forks)
                if forks:
                    carried.extend((tid, c, v) for c, v in ws)
                else:
                    self.put_writes(tid, ws)
            yield from self._flush_io()
        null_writes = (
            [(c, v) for t, c, v in (*self.pending_writes, *carried) if t == NULL_TASK_ID]
            if self.pending_writes or carried
            else None
        )
        if null_writes:
            hint = self.engine.updated_channels()
            upd = self.engine.apply_writes([(INPUT, (), (), null_writes)], self.next_version)
            self._set_hint(hint, upd)
        if is_resuming:
            self.engine.mark_interrupt_seen()
            if forks:
                if self.checkpoint_metadata.get("source") in ("update", "fork"):
                    replay_bound = self.prev_checkpoint_config
                self.pending_writes = [w for w in self.pending_writes if w[1] != INTERRUPT]
                yield from self._put_checkpoint({"source": "fork"})
            self._emit_values(True)
        elif input_writes := map_input(self.graph.input_channels, inp):
            if self._delta is not None:
                self._delta.input(self, input_writes)
                yield from self._flush_io()
            elif self.saver is None and not (is_cmd or null_writes or time_travel):
                self._input_unsaved(input_writes)
                return self._entered(False, None, False)
            discard: list[PreparedTask] = self.engine.prepare_next_tasks(
                self.checkpoint_id, self.parent_ns, self.step, self.checkpoint_v
            )
            self._cp_updated = self.engine.apply_writes(
                [
                    *((n, p, trig, ()) for _i, n, p, trig, _v in discard),
                    (INPUT, (), (), input_writes),
                ],
                self.next_version,
            )
            yield from self._put_checkpoint({"source": "input"})
        elif CONFIG_KEY_RESUMING not in conf:
            ic = self.graph.input_channels
            raise EmptyInputError(f"Received no input for {ic}")
        self._entered(is_resuming, replay_bound, time_travel)

    def _input_unsaved(self, input_writes: list) -> None:
        """The input step of a run without a saver (no Command, no time travel): its engine
        starts empty (no task of an earlier step to discard), and nothing is saved, so applying the input, the next
        id and the first step's tasks take one crossing (`Engine.advance`; the tasks are
        kept for that step: `prepared_tasks`)."""
        step = self.step
        self.checkpoint_metadata = {
            "source": "input",
            "step": step,
            "parents": self.conf.get(CONFIG_KEY_CHECKPOINT_MAP, {}),
        }
        draw_checkpoint_id()  # (as `_put_checkpoint` does)
        self._cp_updated, cid, prepared = self.engine.advance(
            [(INPUT, (), (), input_writes)],
            self.next_version,
            self._id_base,
            self.parent_ns,
            step,
            self.stop,
            self.checkpoint_v,
        )
        self.checkpoint_id = cid
        self.step = step + 1
        self._next_tasks = (step + 1, cid, prepared)

    def _entered(self, is_resuming: bool, replay_bound: Any, time_travel: bool) -> None:
        """The end of `_first`: the run's config for its tasks."""
        if not self.is_nested:
            self.conf = {
                **self.conf,
                CONFIG_KEY_RESUMING: is_resuming,
                _c.CONFIG_KEY_REPLAY_STATE: replay_state_for(self, replay_bound)
                if time_travel
                else None,
            }
        if self.subgraph_stream:
            self.conf = {**self.conf, CONFIG_KEY_STREAM: self.stream}
        self.config = {**self.config, CONF: self.conf}
        self.status = "pending"
        if is_resuming and self.lifecycle is not None:
            self.lifecycle.append(("resume", self.status, self.checkpoint_id, self.ns, ()))

    def _set_hint(self, before: list[str], added: list[str]) -> None:
        """LangGraph keeps the loaded hint plus the null writes' channels (none loaded: a
        full scan); the engine only keeps the last apply's, so restore the union."""
        setter = getattr(self.engine, "set_updated_channels", None)
        if setter is not None:
            setter(sorted(set(before) | set(added)) if before else [])

    def _pending_interrupts(self) -> set[str]:
        return {
            i.id
            for st in read_task_statuses(self.pending_writes).values()
            for i in st.pending_interrupts
        }
