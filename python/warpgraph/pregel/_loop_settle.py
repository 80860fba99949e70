"""Applying a step and ending a run (`PregelLoop`'s part): LangGraph's after_tick up to the
checkpoint, interrupt_after, and the exit (its checkpoint under durability="exit", an
interrupt's output, the run's output).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from warpgraph._internal._constants import CONF, CONFIG_KEY_RESUMING, INTERRUPT, NS_END
from warpgraph.errors import GraphInterrupt
from warpgraph.pregel._algo import is_hidden_task
from warpgraph.pregel._records import TaskWrites
from warpgraph.pregel._stream import LATEST


class SettleMixin:
    """Part of `PregelLoop` (`_loop.py`): after a step, and the run's end."""

    def _apply_step(self) -> list:
        """LangGraph's after_tick up to the checkpoint: apply the step's writes, emit values."""
        tasks = list(self.tasks.values())
        step_writes: list[TaskWrites]
        if len(tasks) == 1:
            t = tasks[0]
            step_writes = [(t.name, t.path, t.triggers, t.writes)]
        else:
            step_writes = [(t.name, t.path, t.triggers, t.writes) for t in tasks]
        if self._delta is not None:
            self._delta.applied(self, tasks)
        self._applied(tasks, self.engine.apply_writes(step_writes, self.next_version))
        return tasks

    def _applied(self, tasks: Sequence[Any], updated: list[str]) -> None:
        """What follows applying the writes of a step's `tasks` (the general step's and a
        lone step's): the values chunk, and the step's pending writes are done with."""
        self._cp_updated = updated
        if (
            updated
            and (self._want_values or self._track_values)
            and not self._out_set.isdisjoint(updated)
        ):
            if self._lazy_values:  # (only writes change these output channels)
                self.latest_values = LATEST
            elif len(tasks) == 1:
                self._emit_values(tasks[0].writes)
            else:
                self._emit_values([w for t in tasks for w in t.writes])
        if self.pending_writes:
            self.pending_writes = []
            self._pending_ids = set()
        self._written = False
        self.is_replaying = False

    def _check_interrupt_after(self, tasks: list) -> None:
        """After the step's checkpoint: interrupt_after, and the first step ends resuming."""
        if self.interrupt_after and self.engine.should_interrupt(
            self.interrupt_after, [(t.name, is_hidden_task(t)) for t in tasks]
        ):
            self.status = "interrupt_after"
            self._prepare_tasks()
            raise GraphInterrupt()
        if CONFIG_KEY_RESUMING in self.conf:
            self._end_resuming()

    def _end_resuming(self) -> None:
        """The run's first step is over: later tasks' configs carry no resuming flag."""
        conf = self.conf = {k: v for k, v in self.conf.items() if k != CONFIG_KEY_RESUMING}
        self.config = {**self.config, CONF: conf}

    def _touches_output(self, updated: list[str]) -> bool:
        return not self._out_set.isdisjoint(updated)

    def _exit(self, exc: BaseException | None) -> Generator[tuple, Any, bool]:
        if not hasattr(self, "engine"):
            return False
        if self.durability == "exit" and (
            not self.is_nested or exc is not None or all(NS_END not in p for p in self.ns)
        ):
            if self._delta is not None:
                yield from self._delta.exit_ops(self)
            yield from self._put_checkpoint(self.checkpoint_metadata)
            yield from self._put_pending_writes()
        if isinstance(exc, GraphInterrupt) and not self.is_nested:
            if self.lifecycle is not None:
                found = tuple(exc.args[0]) if exc.args else ()
                self.lifecycle.append(
                    ("interrupt", self.status, self.checkpoint_id, self.ns, found)
                )
            if (self.pending_writes or self._written) and any(
                t.writes for t in self.tasks.values()
            ):
                tasks = list(self.tasks.values())
                upd = self.engine.apply_writes(
                    [(t.name, t.path, t.triggers, list(t.writes)) for t in tasks], self.next_version
                )
                if upd and self._touches_output(upd):
                    self._emit_values([w for t in tasks for w in t.writes])
            if not exc.args or not exc.args[0]:
                payload = exc.args[0] if exc.args else ()
                if self.captured is not None:
                    self.captured.extend(payload)
                if self.stream is not None and "updates" in self.modes:
                    self._emit("updates", {INTERRUPT: payload})
            return True
        return False
