"""The lone-step interface of the loop (`PregelLoop`'s part that `_lone.py` calls).

A step of one planned task that `_lone.py` runs without the drivers asks the loop for
everything around running the task through these methods, which share the general step's
bookkeeping (`on_task_done`, `_applied`, `_put_checkpoint`): a change to the general step
reaches lone steps too.
"""

from __future__ import annotations

from typing import Any

from warpgraph.pregel._algo import CONTROL_WRITES, draw_checkpoint_id
from warpgraph.pregel._loop_writes import mark_no_writes
from warpgraph.pregel._records import PreparedTask, TaskWrites


class LoneStepMixin:
    """Part of `PregelLoop` (`_loop.py`): the methods lone steps run through."""

    @property
    def has_delta_channels(self) -> bool:
        return self._delta is not None

    @property
    def traces_tasks(self) -> bool:
        """Each task runs as a child run of the run's tracing callbacks (`_tracing.py`)."""
        return "run_name" in self._task_base

    def start_lone_task(self, task: Any) -> None:
        """A lone step's task is about to run. With `perform_write` (or a stream: its
        chunks name the task) the loop records it as the step's task and its session commits
        the previous checkpoint first (the driver's order)."""
        if self.perform_write is not None or self.stream is not None:
            self.tasks = {task.id: task}  # (a streamed run's chunks name it)
            if self.lone_session is not None:
                self.lone_session.flush()

    def fail_lone_task(self, task: Any, exc: BaseException) -> None:
        """A lone step's task failed (the caller raises `exc`): LangGraph's commit of the
        failure, saved at once as the driver would."""
        self.commit_lone_failure(task, exc)
        self._perform_queued_writes()

    def commit_lone_failure(self, task: Any, exc: BaseException) -> None:
        """LangGraph's commit of a lone step's failed task, its writes queued for the saver
        (a streamed run hands the chunks it made on before they are saved: `_lone.py`)."""
        if self.tasks.get(task.id) is not task:  # (keeping the tasks it called)
            self.tasks = {task.id: task}
        self.on_task_done(task, exc)

    def finish_lone_step(self, task: Any) -> list[PreparedTask] | None:
        """A lone step's task finished: LangGraph's commit of its writes (saved at once
        through `perform_write`), applying them with those of the tasks it called, what the
        general step does after applying, and the checkpoint. Without a saver, applying,
        the next id and the next step's tasks take one crossing (`Engine.advance`):
        returns those tasks (else None)."""
        perform = self.perform_write
        if perform is not None:
            self.on_task_done(task, None)  # pending writes, and the saver's put_writes
            self._perform_queued_writes()
        elif self.stream is not None:  # no saver, streamed: the commit makes its chunks
            self.on_task_done(task, None)
        else:  # no saver: nothing else of the commit applies (see `lone_steps_ok`)
            ws = task.writes
            if not ws or ws[0][0] in CONTROL_WRITES:  # (the call only when it may mark)
                mark_no_writes(ws)
        step = self.step
        step_writes: list[TaskWrites] = [(task.name, task.path, task.triggers, task.writes)]
        if self._calls is not None:  # tasks it called (functional API) apply with it
            step_writes += self._calls.applied((self.checkpoint_id, step))
        if perform is None:
            updated, self.checkpoint_id, prepared = self.engine.advance(
                step_writes,
                self.next_version,
                self._id_base,
                self.parent_ns,
                step,
                self.stop,
                self.checkpoint_v,
            )
            draw_checkpoint_id()
            self._applied((task,), updated)
            self.step = step + 1
            return prepared
        self._applied((task,), self.engine.apply_writes(step_writes, self.next_version))
        for op in self._put_checkpoint({"source": "loop"}):
            perform(op)
        return None

    def _perform_queued_writes(self) -> None:
        """The writes queued for the saver, performed now (as the runner's hook and the
        driver would)."""
        session = self.lone_session
        while self._io:
            ops, self._io = self._io, []
            if session is not None:
                session.perform_last_task_writes(ops)
            else:
                for op in ops:
                    self.perform_write(op)
