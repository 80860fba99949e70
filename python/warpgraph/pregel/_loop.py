"""The super-step loop: one generator-style step machine driven by a sync or an async driver.

`PregelLoop.run()` yields operations (`_records.py`): `RunOp` (run one step's tasks) and
saver calls (`GetTupleOp`, `PutCheckpointOp`, `PutWritesOp`; `("get_before", ...)` from
`_replay.py`, a DeltaChannel's history read, a cache call). The drivers in `_drive.py` perform
them: the sync one directly, the async one awaiting the runner / the saver's `a*` methods.
Everything else (LangGraph's loop lifecycle: input, resume, interrupts, checkpoints,
streaming) lives here once; task construction is in `_algo.py`, the per-step bookkeeping in
the Engine.

`PregelLoop` is this module's state, the step machine and the tick; its other concerns are
parts in modules of their own, one class each that `PregelLoop` inherits:
`_loop_enter.py` (the run's start: the saved checkpoint, the input, resume),
`_loop_writes.py` (finished tasks' writes: pending writes, put_writes ops, their chunks),
`_loop_lone.py` (the interface lone steps run through, `_lone.py`),
`_loop_settle.py` (applying a step, interrupt_after, the run's exit),
`_loop_checkpoint.py` (the checkpoint ops).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from warpgraph._internal import _constants as _c
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_THREAD_ID,
    NS_SEP,
)
from warpgraph._internal._scratchpad import PregelScratchpad
from warpgraph.errors import GraphInterrupt
from warpgraph.pregel import _cache
from warpgraph.pregel._algo import (
    draw_checkpoint_id,
    fast_id,
    id_prefix,
    is_hidden_task,
    make_tasks,
    now,
    task_base_config,
)
from warpgraph.pregel._delta import DeltaRun
from warpgraph.pregel._derived import derived, output_shape
from warpgraph.pregel._handlers import resume_handlers
from warpgraph.pregel._io import read_channels
from warpgraph.pregel._lone import alone_steps, lone_steps, lone_steps_ok
from warpgraph.pregel._loop_checkpoint import CheckpointMixin
from warpgraph.pregel._loop_enter import EnterMixin
from warpgraph.pregel._loop_lone import LoneStepMixin
from warpgraph.pregel._loop_settle import SettleMixin
from warpgraph.pregel._loop_writes import (  # noqa: F401 - (path_str, mark_no_writes: importable here)
    TaskWritesMixin,
    _record,
    mark_no_writes,
    path_str,
)
from warpgraph.pregel._records import RUN, PreparedTask, PutWritesOp, RunOp
from warpgraph.pregel._savers import _is_memory_saver, _saver_next_version
from warpgraph.pregel._stream import LATEST, Stream, duplex
from warpgraph.pregel.debug import map_debug_checkpoint, map_debug_tasks, read_task_statuses


class PregelLoop(EnterMixin, TaskWritesMixin, LoneStepMixin, SettleMixin, CheckpointMixin):
    """Per-run state and LangGraph's loop lifecycle as a step machine (see module doc)."""

    # the run's state in slots: a loop is made per run and has more attributes than an
    # instance dict shares keys for (a dict of its own, grown while __init__ fills it);
    # others (set by a part or a test) still go to the instance dict the parts give it
    __slots__ = (
        "_addressed",
        "_cache_pending",
        "_calls",
        "_cp_updated",
        "_delta",
        "_graph_callbacks",
        "_handlers",
        "_id_base",
        "_io",
        "_lazy_values",
        "_next_tasks",
        "_node_finished",
        "_nodes",
        "_out_set",
        "_pending_ids",
        "_previous",
        "_run_id",
        "_shares_inputs",
        "_spec",
        "_step_cache",
        "_superseded",
        "_task_base",
        "_thread_id",
        "_track_values",
        "_untracked",
        "_values_keys",
        "_want_ckpt",
        "_want_tasks",
        "_want_values",
        "_writes_config",
        "_written",
        "aio_loop",
        "awaits_lone_tasks",
        "cache",
        "captured",
        "checkpoint_config",
        "checkpoint_id",
        "checkpoint_id_saved",
        "checkpoint_metadata",
        "checkpoint_previous_versions",
        "checkpoint_v",
        "conf",
        "config",
        "control",
        "derived",
        "durability",
        "engine",
        "graph",
        "has_versions",
        "input",
        "interrupt_after",
        "interrupt_before",
        "is_nested",
        "is_replaying",
        "latest_values",
        "lifecycle",
        "lone_out",
        "lone_session",
        "modes",
        "next_version",
        "ns",
        "output_keys",
        "own_stream",
        "packed_puts",
        "parent_ns",
        "pending_writes",
        "perform_write",
        "prev_checkpoint_config",
        "run_manager",
        "runs_lone_tasks",
        "saver",
        "status",
        "step",
        "stop",
        "store",
        "stream",
        "stream_keys",
        "subgraph_stream",
        "tasks",
    )

    def __init__(
        self,
        graph: Any,
        input: Any,
        *,
        config: dict,
        checkpointer: Any,
        store: Any,
        stream: Stream | None,
        output_keys: Any,
        stream_keys: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        durability: str,
        capture_interrupts: list | None = None,
    ) -> None:
        self.graph = graph
        self.input = input
        self.config = config
        self.conf = conf = config[CONF]
        self.saver = checkpointer
        self.store = store
        self.output_keys = output_keys
        self.stream_keys = stream_keys
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.durability = durability
        self.is_nested = _c.CONFIG_KEY_TASK_ID in conf
        self.captured = capture_interrupts
        # set by a driver when lone steps may run inside the step machine (`_lone.py`); by the
        # async one with `awaits_lone_tasks`: the machine yields their tasks for it to run
        self.runs_lone_tasks = False
        self.awaits_lone_tasks = False
        # set by a driver when lone steps may run in a streamed run: its chunk queue, which
        # lone steps have the driver drain where the general path's driver does
        self.lone_out: Any = None
        # set by a driver when the loop may perform its saver write ops itself:
        # `perform_write(op)` does what the driver would; with a batching / group-commit
        # session (`lone_session`), task writes and commits go through its methods
        self.perform_write: Any = None
        self.lone_session: Any = None
        # set by a driver when `perform_write` stores puts carrying the envelope the engine
        # encoded with the checkpoint (warpgraph's InMemorySaver: `takes_packed_puts`)
        self.packed_puts = False
        self.status = "input"
        self.tasks: dict[str, Any] = {}
        self.pending_writes: list[tuple[str, str, Any]] = []
        self._pending_ids: set[str] = set()
        self._io: list[PutWritesOp] = []  # finished tasks' writes, for the driver
        # the run's own stream (no parent's), and its chain run when traced (_tracing.py)
        self.own_stream, self.run_manager = stream, None
        self.lifecycle: Any = None  # a deque of lifecycle events when a graph handler listens
        if CONFIG_KEY_STREAM in conf:  # a parent streaming with subgraphs=True
            parent = conf[CONFIG_KEY_STREAM]
            stream = duplex(stream, parent) if stream is not None else parent
        self.stream = stream
        self.modes = stream.modes if stream is not None else frozenset()
        # invoke (capture_interrupts given) keeps the latest values chunk without a stream
        self._track_values = capture_interrupts is not None
        self._want_tasks = self._wants("tasks")
        self._want_values = "values" in self.modes
        # the graph's derived caches (its node infos, task plans), taken once per run
        d = self.derived = derived(graph)
        self._values_keys, lazy_ok, self._out_set = output_shape(d, graph, output_keys)
        # invoke without a values stream: the latest values chunk is read only at the end,
        # when no later change of an output channel can go without a chunk (see lazy_values_ok)
        self._lazy_values = self._track_values and not self._want_values and lazy_ok
        self._want_ckpt = checkpointer is not None and self._wants("checkpoints")
        sp = conf.get(_c.CONFIG_KEY_SCRATCHPAD)
        if isinstance(sp, PregelScratchpad) and (cnt := sp.subgraph_counter()):
            # a task's second (third, ...) subgraph call gets its own namespace: "ns|1"
            ns = NS_SEP.join((conf[CONFIG_KEY_CHECKPOINT_NS], str(cnt)))
            conf = self.conf = {**conf, CONFIG_KEY_CHECKPOINT_NS: ns}
            self.config = {**config, CONF: conf}
        if not self.is_nested and conf.get(CONFIG_KEY_CHECKPOINT_NS):
            conf = self.conf = {
                **conf,
                CONFIG_KEY_CHECKPOINT_NS: "",
                CONFIG_KEY_CHECKPOINT_ID: None,
            }
            self.config = {**self.config, CONF: conf}
        ns = conf.get(CONFIG_KEY_CHECKPOINT_NS) or ""
        self.parent_ns = ns
        self.ns = tuple(ns.split(NS_SEP)) if ns else ()
        cmap = conf.get(CONFIG_KEY_CHECKPOINT_MAP)
        if cmap and ns in cmap:
            self.checkpoint_config = {
                **self.config,
                CONF: {**conf, CONFIG_KEY_CHECKPOINT_ID: cmap[ns]},
            }
        else:
            self.checkpoint_config = self.config
        tid = self.checkpoint_config[CONF].get(CONFIG_KEY_THREAD_ID)
        if tid is not None and not isinstance(tid, str):
            cc = self.checkpoint_config
            self.checkpoint_config = {**cc, CONF: {**cc[CONF], CONFIG_KEY_THREAD_ID: str(tid)}}
        self.prev_checkpoint_config = None
        self._addressed = bool(
            self.checkpoint_config[CONF].get(CONFIG_KEY_CHECKPOINT_ID)
            or conf.get(_c.CONFIG_KEY_REPLAY_STATE)
        )
        self._superseded = False  # addressed at a checkpoint the thread has moved past
        if checkpointer is not None:
            self.next_version: Any = checkpointer.get_next_version
            if type(checkpointer).get_next_version is _saver_next_version():
                self.next_version = "str"
        else:
            self.next_version = "int"
        self._id_base = id_prefix() if checkpointer is None else ""  # (runs without a saver)
        self._nodes = d.nodes
        self._task_base = task_base_config(self.config)
        self._written = False
        self._thread_id = self.checkpoint_config[CONF].get(CONFIG_KEY_THREAD_ID)
        rid = config.get("run_id")
        self._run_id = str(rid) if rid else None
        self._previous = None
        self._untracked = d.untracked
        self._spec = d.spec
        self._step_cache: Any = None
        # (step, checkpoint id, tasks) the engine prepared ahead (`prepared_tasks`)
        self._next_tasks: Any = None
        self._writes_config: Any = None
        # warpgraph's savers never change the configs and checkpoints they are given (nor
        # does the loop, once it handed them over), so those can be shared, not copied
        self._shares_inputs = checkpointer is not None and (
            _is_memory_saver(checkpointer)
            or getattr(type(checkpointer), "leaves_inputs_unchanged", False) is True
        )
        # LangGraph's loop.updated_channels as stored in checkpoints: None until the input
        # or a step is applied (a fork checkpoint saved on resume stores None)
        self._cp_updated: list[str] | None = None
        self.subgraph_stream = False
        # node error handlers (`_handlers.py`), None when the graph has none
        self._handlers = getattr(graph, "node_error_handler_map", None) or None
        # DeltaChannel bookkeeping (`_delta.py`), None when the graph has no DeltaChannel
        self._delta = DeltaRun(d.deltas, self) if d.deltas else None
        # the run's drain signal (`RunControl`), checked before each step runs
        rt = conf.get(_c.CONFIG_KEY_RUNTIME)
        self.control = getattr(rt, "control", None)
        # configurable["__pregel_node_finished"]: called with the name of each finished task
        self._node_finished = conf.get(_c.CONFIG_KEY_NODE_FINISHED)
        # task calls of the functional API (pregel/_calls.py): their state, made on the first
        # call; the async driver's event loop (calls then run as asyncio tasks)
        self._calls: Any = None
        self.aio_loop: Any = None
        # the node / task result cache (`_cache.py`), None for most runs
        self.cache = conf.get(_c.CONFIG_KEY_CACHE, getattr(graph, "cache", None))

    # ------------------------------------------------------------------ emit helpers
    def _emit(self, mode: str, payload: Any) -> None:
        s = self.stream
        if mode in s.modes:
            s.put((self.ns, mode, payload))
        if mode in ("checkpoints", "tasks") and "debug" in s.modes:
            s.put(
                (
                    self.ns,
                    "debug",
                    {
                        "step": self.step - 1 if mode == "checkpoints" else self.step,
                        "timestamp": now(),
                        "type": "checkpoint"
                        if mode == "checkpoints"
                        else "task_result"
                        if "result" in payload
                        else "task",
                        "payload": payload,
                    },
                )
            )

    def _wants(self, mode: str) -> bool:
        m = self.modes
        return mode in m or (mode in ("checkpoints", "tasks") and "debug" in m)

    def _emit_values(self, writes: Any) -> None:
        """values chunk after a step: `writes` True or the step's writes."""
        if not (self._want_values or self._track_values):
            return
        if writes is not True:
            out = self._out_set
            for c, _ in writes:
                if c in out:
                    break
            else:
                return
        if self._lazy_values:
            self.latest_values = LATEST
            return
        vals = self.read_values()
        if self._want_values:
            self._emit("values", vals)
        self.latest_values = vals

    @property
    def output(self) -> Any:
        """The output channels' values (LangGraph's loop keeps them when the run ends; read
        here only when asked for: nothing of the run itself reads them)."""
        return read_channels(self.engine, self.output_keys) if hasattr(self, "engine") else None

    def read_values(self) -> Any:
        """The output channels' current values, as a values chunk carries them."""
        keys = self._values_keys
        return self.engine.read(keys) if type(keys) is list else read_channels(self.engine, keys)

    # ------------------------------------------------------------------ the step machine
    def run(self) -> Generator[tuple, Any, None]:
        """Drive with `send`/`throw`; see module doc."""
        try:
            yield from self._enter()
            saver = self.saver
            lone = self.cache is None and lone_steps_ok(self)
            while True:
                if lone:
                    if self.awaits_lone_tasks:
                        yield from alone_steps(self)
                    else:
                        yield from lone_steps(self)
                if not self._tick():
                    break
                if self.cache is not None:
                    yield from _cache.step_lookup(self)
                runnable = list(self.tasks.values())
                if len(runnable) == 1:
                    if runnable[0].writes:
                        runnable = []
                else:
                    runnable = [t for t in runnable if not t.writes]
                if runnable:
                    try:
                        yield _record(RunOp, (RUN, runnable))
                    except GeneratorExit:
                        raise
                    except BaseException:
                        yield from self._flush_io()  # finished tasks' writes are kept
                        if self.cache is not None:
                            yield from _cache.store(self)
                        raise
                    if self._io:
                        yield from self._flush_io()
                    if self.cache is not None:
                        yield from _cache.store(self)
                elif self.stream is not None:
                    # every task has its writes (a resumed step): nothing runs, yet LangGraph's
                    # runner hands the queued chunks on before the step is applied
                    yield _record(RunOp, (RUN, runnable))
                tasks = self._apply_step()
                if saver is None:
                    # nothing to save: only the step and the id (task ids hash it) move on
                    draw_checkpoint_id()
                    self.checkpoint_id = fast_id(self._id_base, self.step)
                    self.step += 1
                else:
                    yield from self._put_checkpoint({"source": "loop"})
                self._check_interrupt_after(tasks)
        except GeneratorExit:
            raise  # the consumer stopped iterating: nothing more may be yielded
        except BaseException as exc:
            suppressed = yield from self._exit(exc)
            if not suppressed:
                raise
        else:
            yield from self._exit(None)

    # ------------------------------------------------------------------ tick
    def _tick(self) -> bool:
        if self.step > self.stop:
            self.status = "out_of_steps"
            self._prepare_tasks()
            return False
        self._prepare_tasks()
        if not self.tasks:
            self.status = "done"
            return False
        if not self.is_replaying and self.pending_writes:
            self._reapply_writes()
            if self._handlers is not None:
                resume_handlers(self)
        if self.interrupt_before and self.engine.should_interrupt(
            self.interrupt_before, [(t.name, is_hidden_task(t)) for t in self.tasks.values()]
        ):
            self.status = "interrupt_before"
            raise GraphInterrupt()
        # a drain stops the run here, after the breakpoint check (a resume passes the
        # next step's breakpoints: draining in front of one would skip it)
        if self.control is not None and self.control._drain_reason is not None:
            self.status = "draining"
            return False
        if self._want_tasks:
            for p in map_debug_tasks(self.tasks.values()):
                self._emit("tasks", p)
        for t in self.tasks.values():
            if t.writes:
                self._output_writes(t, t.writes, cached=True)
        return True

    def prepared_tasks(self) -> list[PreparedTask]:
        """The engine's tasks for the current step: the ones a crossing that also applied
        the previous step prepared (`_next_tasks`, kept for this step and checkpoint id
        only, taken once), else prepared now."""
        ahead, self._next_tasks = self._next_tasks, None
        if ahead is not None and ahead[0] == self.step and ahead[1] is self.checkpoint_id:
            return ahead[2]
        return self.engine.prepare_next_tasks(
            self.checkpoint_id, self.parent_ns, self.step, self.checkpoint_v
        )

    def _prepare_tasks(self) -> None:
        prepared: list[PreparedTask] = self.prepared_tasks()
        self.tasks = make_tasks(self, prepared)
        if self._want_ckpt:
            cc = self.checkpoint_config
            self._emit(
                "checkpoints",
                map_debug_checkpoint(
                    {**cc, CONF: {**cc[CONF], CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id}},
                    read_channels(self.engine, self.stream_keys),
                    self.checkpoint_metadata,
                    list(self.tasks.values()),
                    self.pending_writes,
                    self.prev_checkpoint_config,
                    self.output_keys,
                ),
            )

    def _reapply_writes(self) -> None:
        tasks = self.tasks
        for tid, st in read_task_statuses(w for w in self.pending_writes if w[0] in tasks).items():
            tasks[tid].writes.extend(st.output)


# LangGraph has a loop class per driver; here one step machine serves both drivers
SyncPregelLoop = AsyncPregelLoop = PregelLoop

__all__ = ("RUN", "AsyncPregelLoop", "PregelLoop", "Stream", "SyncPregelLoop", "duplex")
