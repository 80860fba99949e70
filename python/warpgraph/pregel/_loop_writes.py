"""Task results of the loop (`PregelLoop`'s part): a finished task's writes become pending
writes and `put_writes` ops queued for the driver (LangGraph's commit), and the stream
chunks they make (updates, interrupts, task results).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from concurrent.futures import CancelledError
from typing import Any

from warpgraph._internal import _constants as _c
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    ERROR,
    INTERRUPT,
    NO_WRITES,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    TASKS,
)
from warpgraph.errors import GraphBubbleUp, GraphInterrupt
from warpgraph.pregel import _cache, _engine
from warpgraph.pregel._algo import CONTROL_WRITES, WRITES_IDX_MAP, is_hidden_task, sanitize_send
from warpgraph.pregel._delta_ids import stamp_ids
from warpgraph.pregel._handlers import handler_task
from warpgraph.pregel._io import interrupt_chunk, read_channels, shown_update
from warpgraph.pregel._records import PutWritesOp
from warpgraph.pregel.debug import map_debug_task_results
from warpgraph.types import Send

_record = tuple.__new__
"""`_record(Op, (kind, ...))` is `Op(kind, ...)` (all fields given) without the Python frame
of a NamedTuple's __new__: used for the ops made every step."""

_PULL_PATHS: dict[str, str] = {}


def path_str(path: tuple) -> str:
    """`task_path_str(path)`, kept per node for the (PULL, node) paths of pulled tasks
    (one per task's writes saved; other paths are computed each time)."""
    if len(path) == 2 and path[0] == PULL and type(path[1]) is str:
        found = _PULL_PATHS.get(path[1])
        if found is None:
            found = _engine.task_path_str(path)
            if len(_PULL_PATHS) < 65536:  # (node names of the graphs in use)
                _PULL_PATHS[path[1]] = found
        return found
    return _engine.task_path_str(path)


class TaskWritesMixin:
    """Part of `PregelLoop` (`_loop.py`): finished tasks' writes."""

    def _flush_io(self) -> Generator[tuple, Any, None]:
        while self._io:
            yield from self.take_queued_writes()

    def take_queued_writes(self) -> list[PutWritesOp]:
        """The finished tasks' writes queued for the saver (`put_writes`), taken."""
        ops, self._io = self._io, []
        return ops

    def on_task_done(self, task: Any, exc: BaseException | None) -> Any:
        """Runner callback: turn a finished task into put_writes (LangGraph's commit).
        Returns the error handler's task when the failure was routed to one."""
        if exc is not None:
            if isinstance(exc, GraphInterrupt):
                if exc.args and exc.args[0]:
                    ws = [(INTERRUPT, exc.args[0])]
                    ws.extend(w for w in task.writes if w[0] == RESUME)
                    self.put_writes(task.id, ws)
            elif isinstance(exc, GraphBubbleUp):
                pass
            else:
                task.writes.append((ERROR, exc))
                # (a task cancelled before it started did not fail: it runs again later)
                routed = self._handlers is not None and task.name in self._handlers
                if routed and not isinstance(exc, CancelledError):
                    # the handler runs next; a later run runs it instead of the task
                    task.writes.append((_c.ERROR_SOURCE_NODE, task.name))
                    self.put_writes(task.id, task.writes)
                    return handler_task(self, task, exc)
                self.put_writes(task.id, task.writes)
        else:
            if self._node_finished is not None and not is_hidden_task(task):
                self._node_finished(task.name)
            ws = task.writes
            if not ws or ws[0][0] in CONTROL_WRITES:  # (the call only when it may mark)
                mark_no_writes(ws)
            if self.cache is not None:
                _cache.remember(self, task)
            self.put_writes(task.id, task.writes)

    def put_writes(
        self, task_id: str, writes: Sequence[tuple[str, Any]], cached: bool = False
    ) -> None:
        if not writes:
            return
        if self._delta is not None and type(writes) is not tuple:
            stamp_ids(self._delta.specs, writes)  # (before they are saved or applied)
        self._written = True
        if self.saver is None and task_id != NULL_TASK_ID:
            # nothing reads pending writes of a run without a checkpointer except the
            # interrupt exit path, which only needs to know some exist
            if self.stream is not None or (self.captured is not None and writes[0][0] == INTERRUPT):
                task = self.tasks.get(task_id)
                if task is not None:
                    self._output_writes(task, writes, cached)
            return
        if writes[0][0] in WRITES_IDX_MAP and all(w[0] in WRITES_IDX_MAP for w in writes):
            writes = list({w[0]: w for w in writes}.values())
        pw = self.pending_writes
        if task_id == NULL_TASK_ID:
            pw = self.pending_writes = [
                w for w in pw if w[0] != task_id or w[1] not in WRITES_IDX_MAP
            ]
            writes = sorted(writes, key=lambda w: w[0] in WRITES_IDX_MAP)
            to_save = [w[1:] for w in pw if w[0] == task_id] + list(writes)
        else:
            if task_id in self._pending_ids:
                pw = self.pending_writes = [w for w in pw if w[0] != task_id]
            to_save = writes
        if self._untracked:
            to_save = [
                (c, sanitize_send(v, self._untracked))
                if c == TASKS and isinstance(v, Send)
                else (c, v)
                for c, v in to_save
                if c not in self._untracked
            ]
        self._pending_ids.add(task_id)
        for c, v in writes:
            pw.append((task_id, c, v))
        if self.durability != "exit" and self.saver is not None:
            cc = self.checkpoint_config
            wc = self._writes_config
            if wc is not None and wc[0] is cc and wc[1] == self.checkpoint_id:
                config = wc[2]  # shared by the step's put_writes (the saver keeps no config)
            elif (
                self._shares_inputs
                and cc[CONF].get(CONFIG_KEY_CHECKPOINT_ID) == self.checkpoint_id
                and cc[CONF].get(CONFIG_KEY_CHECKPOINT_NS, self) == self.parent_ns
            ):  # (the config of the checkpoint put last is the one built below: shared)
                config = cc
            else:
                config = {
                    **cc,
                    CONF: {
                        **cc[CONF],
                        CONFIG_KEY_CHECKPOINT_NS: self.parent_ns,
                        CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id,
                    },
                }
                if self._shares_inputs:
                    self._writes_config = (cc, self.checkpoint_id, config)
            task = self.tasks.get(task_id)
            self._io.append(
                _record(  # PutWritesOp(...)
                    PutWritesOp,
                    (
                        "put_writes",
                        config,
                        list(to_save),
                        task_id,
                        path_str(task.path) if task is not None else "",
                    ),
                )
            )
        # without a stream only interrupts produce output (captured for invoke)
        if self.stream is not None or (self.captured is not None and writes[0][0] == INTERRUPT):
            task = self.tasks.get(task_id)
            if task is not None:
                self._output_writes(task, writes, cached)

    def _output_writes(self, task: Any, writes: Sequence, cached: bool = False) -> None:
        if is_hidden_task(task):
            return
        if writes[0][0] == INTERRUPT:
            if task.path[0] == PUSH and task.path[-1] is True:
                return
            chunk = interrupt_chunk(writes)
            if self.captured is not None:
                self.captured.extend(chunk[INTERRUPT])
            if "updates" in self.modes:
                self._emit("updates", chunk)
            if self._want_values or self._track_values:
                cur = read_channels(self.engine, self.output_keys)
                if isinstance(cur, dict):
                    cur[INTERRUPT] = chunk[INTERRUPT]
                else:
                    cur = chunk
                if self._want_values:
                    self._emit("values", cur)
                self.latest_values = cur
        elif writes[0][0] != ERROR and "updates" in self.modes:
            keys = self.output_keys
            # (a shown task: its writes hold neither an error nor an interrupt)
            upd = shown_update(
                keys, None if isinstance(keys, str) else self._out_set, task, writes, cached
            )
            self._emit("updates", upd)
        if not cached and self._want_tasks:
            self._emit("tasks", map_debug_task_results(task, writes, self.stream_keys))


def mark_no_writes(writes: Any) -> None:
    """A finished task with no writes but control ones gets LangGraph's NO_WRITES marker."""
    if not writes or (
        writes[0][0] in CONTROL_WRITES and all(c in CONTROL_WRITES for c, _ in writes)
    ):
        writes.append((NO_WRITES, None))
