"""The super-step loop: one generator-style step machine driven by a sync or an async driver.

`PregelLoop.run()` yields operations (`_records.py`): `RunOp` (run one step's tasks) and
saver calls (`GetTupleOp`, `PutCheckpointOp`, `PutWritesOp`; `("get_before", ...)` from
`_replay.py`, a DeltaChannel's history read, a cache call). The drivers in `_drive.py` perform
them: the sync one directly, the async one awaiting the runner / the saver's `a*` methods.
Everything else (LangGraph's loop lifecycle: input, resume, interrupts, checkpoints,
streaming) lives here once; task construction is in `_algo.py`, the per-step bookkeeping in
the Engine.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from concurrent.futures import CancelledError
from typing import Any

from warpgraph._internal import _constants as _c
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RESUMING,
    CONFIG_KEY_STREAM,
    CONFIG_KEY_THREAD_ID,
    ERROR,
    INPUT,
    INTERRUPT,
    NO_WRITES,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESUME,
    TASKS,
)
from warpgraph._internal._scratchpad import PregelScratchpad
from warpgraph._internal._typing import MISSING
from warpgraph.errors import EmptyInputError, GraphBubbleUp, GraphInterrupt
from warpgraph.pregel import _cache, _engine
from warpgraph.pregel._algo import (
    CONTROL_WRITES,
    WRITES_IDX_MAP,
    draw_checkpoint_id,
    fast_id,
    id_prefix,
    is_hidden_task,
    is_xxh3,
    make_tasks,
    now,
    sanitize_send,
    task_base_config,
)
from warpgraph.pregel._delta import COUNTERS as DELTA_COUNTERS
from warpgraph.pregel._delta import DeltaRun, set_counters
from warpgraph.pregel._delta_ids import stamp_ids
from warpgraph.pregel._derived import derived, lazy_values_ok
from warpgraph.pregel._handlers import handler_task, resume_handlers
from warpgraph.pregel._io import (
    interrupt_chunk,
    map_command,
    map_input,
    map_output_updates,
    read_channels,
)
from warpgraph.pregel._lone import lone_steps, lone_steps_ok
from warpgraph.pregel._records import (
    RUN,
    GetTupleOp,
    PreparedTask,
    PutCheckpointOp,
    PutWritesOp,
    RunOp,
    TaskWrites,
)
from warpgraph.pregel._replay import load_saved, replay_state_for
from warpgraph.pregel._resume import EmptyCommandError, check_resume
from warpgraph.pregel._savers import _is_memory_saver, _saver_next_version
from warpgraph.pregel._stream import LATEST, Stream, duplex
from warpgraph.pregel.debug import (
    map_debug_checkpoint,
    map_debug_task_results,
    map_debug_tasks,
    read_task_statuses,
)
from warpgraph.types import Command, Send

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


class PregelLoop:
    """Per-run state and LangGraph's loop lifecycle as a step machine (see module doc)."""

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
        # set by the sync driver when a lone task may run inside the step machine
        self.runs_lone_tasks = False
        # set by the sync driver when the loop may perform its saver write ops itself:
        # `perform_write(op)` does what the driver would; with a batching / group-commit
        # session (`lone_session`), task writes and commits go through its methods
        self.perform_write: Any = None
        self.lone_session: Any = None
        # set by the sync driver when `perform_write` stores puts carrying the envelope the engine
        # encoded with the checkpoint (warpgraph's InMemorySaver: `takes_packed_puts`)
        self.packed_puts = False
        self.status = "input"
        self.output: Any = None
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
        self._values_keys = output_keys if isinstance(output_keys, str) else list(output_keys)
        # invoke without a values stream: the latest values chunk is read only at the end,
        # when no later change of an output channel can go without a chunk (see lazy_values_ok)
        self._lazy_values = (
            self._track_values
            and not self._want_values
            and lazy_values_ok(graph, self._values_keys)
        )
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
        self._id_base = id_prefix()
        # the graph's derived caches (its node infos, task plans), taken once per run
        self.derived = derived(graph)
        self._nodes = self.derived.nodes
        self._task_base = task_base_config(self.config)
        self._out_set = frozenset((output_keys,) if isinstance(output_keys, str) else output_keys)
        self._written = False
        self._thread_id = self.checkpoint_config[CONF].get(CONFIG_KEY_THREAD_ID)
        rid = config.get("run_id")
        self._run_id = str(rid) if rid else None
        self._previous = None
        self._untracked = graph._untracked_channels
        self._spec = self.derived.spec
        self._step_cache: Any = None
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
        self._delta = DeltaRun(graph._delta_channels, self) if graph._delta_channels else None
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
                    lone_steps(self)
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

    def _flush_io(self) -> Generator[tuple, Any, None]:
        while self._io:
            yield from self.take_queued_writes()

    def take_queued_writes(self) -> list[PutWritesOp]:
        """The finished tasks' writes queued for the saver (`put_writes`), taken."""
        ops, self._io = self._io, []
        return ops

    # ------------------------------------------------------------------ lone steps
    # A step of one planned task that `_lone.py` runs without the drivers: it asks the loop
    # for everything around running the task, through these methods (which share the
    # general step's bookkeeping).
    @property
    def has_delta_channels(self) -> bool:
        return self._delta is not None

    @property
    def traces_tasks(self) -> bool:
        """Each task runs as a child run of the run's tracing callbacks (`_tracing.py`)."""
        return "run_name" in self._task_base

    def start_lone_task(self, task: Any) -> None:
        """A lone step's task is about to run. With `perform_write` the loop records it
        as the step's task and its session commits the previous checkpoint first (the
        driver's order)."""
        if self.perform_write is not None:
            self.tasks = {task.id: task}
            if self.lone_session is not None:
                self.lone_session.flush()

    def fail_lone_task(self, task: Any, exc: BaseException) -> None:
        """A lone step's task failed (the caller raises `exc`): LangGraph's commit of the
        failure, saved at once as the driver would."""
        if self.tasks.get(task.id) is not task:  # (keeping the tasks it called)
            self.tasks = {task.id: task}
        self.on_task_done(task, exc)
        self._perform_queued_writes()

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

    # ------------------------------------------------------------------ enter / first
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
        null_writes = [(c, v) for t, c, v in (*self.pending_writes, *carried) if t == NULL_TASK_ID]
        hint = self.engine.updated_channels()
        if null_writes:
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

    def _prepare_tasks(self) -> None:
        prepared: list[PreparedTask] = self.engine.prepare_next_tasks(
            self.checkpoint_id, self.parent_ns, self.step, self.checkpoint_v
        )
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

    # ------------------------------------------------------------------ task results
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
            upd = map_output_updates(self.output_keys, [(task, writes)], cached)
            if upd is not None:
                self._emit("updates", upd)
        if not cached and self._want_tasks:
            self._emit("tasks", map_debug_task_results(task, writes, self.stream_keys))

    # ------------------------------------------------------------------ after tick
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
            conf = self.conf = {k: v for k, v in self.conf.items() if k != CONFIG_KEY_RESUMING}
            self.config = {**self.config, CONF: conf}

    def _touches_output(self, updated: list[str]) -> bool:
        return not self._out_set.isdisjoint(updated)

    # ------------------------------------------------------------------ checkpoints
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
            self.checkpoint_id, cp, envelope, new_versions = self.engine.next_checkpoint(
                self.step, self._cp_updated, self.checkpoint_previous_versions, self.packed_puts
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

    # ------------------------------------------------------------------ exit
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
            self.output = read_channels(self.engine, self.output_keys)
            return True
        if exc is None:
            self.output = read_channels(self.engine, self.output_keys)
        return False


def mark_no_writes(writes: Any) -> None:
    """A finished task with no writes but control ones gets LangGraph's NO_WRITES marker."""
    if not writes or (
        writes[0][0] in CONTROL_WRITES and all(c in CONTROL_WRITES for c, _ in writes)
    ):
        writes.append((NO_WRITES, None))


# LangGraph has a loop class per driver; here one step machine serves both drivers
SyncPregelLoop = AsyncPregelLoop = PregelLoop

__all__ = ("RUN", "AsyncPregelLoop", "PregelLoop", "Stream", "SyncPregelLoop", "duplex")
