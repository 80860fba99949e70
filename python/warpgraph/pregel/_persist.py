"""A run's saver session: how the drivers hand the loop's saver operations to the saver.

One `SaverSession` per run (and per nested subgraph run) makes every decision; the sync
and async drivers only execute what it hands them (`commit` / `acommit`, `close` / `aclose`).

Write fencing: with a saver whose `put` takes `expected_head=` (warpgraph's SQL savers),
the run remembers the head of its (thread, ns) when it starts (the loop's first
`get_tuple`, or, when that addresses a `checkpoint_id` - time travel, fork - a second
lookup without the id) and each of its puts must find that head, then the id it last wrote;
otherwise the saver raises `CheckpointConflictError` and the run stops, writing nothing more.
Its `put_writes` are fenced the same way (`WritesOp.expected_head`: the head the run expects
when the writes are produced, whichever checkpoint they belong to), so a run that lost its
thread (e.g. a stalled process that wakes after another one resumed the thread) cannot
leave writes that a later resume would apply.
Other savers (LangGraph's, third-party, the in-memory one) get plain calls.

Modes (chosen once per run from durability and what the saver supports):
* "batch" (saver has `put_batch`; durability "sync", "exit", or "async" without a
  group-commit writer): operations are buffered and committed in ONE transaction when the
  driver needs the saver to be current: before a step's tasks run, before a read, before
  stream chunks reach the caller after an error, and at the run's end. A step's
  checkpoint thus commits with the writes of the task that finished last. Rule for tasks
  of a parallel step: a task that finishes while others of its step still run has its
  writes committed at once (it must not be re-run after a crash); the last one to finish
  rides with the step's checkpoint (a crash in between loses no finished step: the
  checkpoint is not there either, and only that last task runs again).
* "writer" (durability "async" and the saver has `writer()`): every operation goes to a
  group-commit writer as soon as the loop produces it (except that, as in "batch", the
  writes of a step's last task to finish go with the step's checkpoint): the saver's long-lived
  `shared_writer()` when it has one (shared by all its runs), else a per-run `writer()`.
  The writer commits in submission order, several checkpoints per transaction, so a
  checkpoint is never visible before the writes submitted ahead of it. The run's
  operations report to one `FailureSink` (no future per operation): a failed commit is
  raised at the run's next saver operation; the run's end (also on error or interrupt)
  waits for everything it submitted (the writer's `flush`, or a marker future under
  asyncio; a shared writer keeps running) and raises the first failure.
  A nested run (a subgraph called by a task) on the same saver submits to its root run's
  writer and sink, and leaves the waiting to the root run.
* "plain": one saver call per operation (LangGraph's savers, third-party savers).
  Writes of finished tasks are still handed over as each task finishes (except for
  warpgraph's InMemorySaver, whose writes stay on the loop's own path).

Foreign savers (LangGraph's own, or any saver whose serializer is not warpgraph's) give
back LangGraph's `Send` / `Interrupt` objects for what LangGraph's engine stored; the run
reads them as warpgraph's (`from_foreign`; snapshot reads in pregel/_checkpoint.py use
`foreign_tuple`), so warpgraph resumes threads LangGraph started. In the other direction
(`to_foreign`, on while `WRITE_LANGGRAPH_TYPES`) runs store LangGraph's types in such
savers, so LangGraph's engine resumes what warpgraph started.
"""

from __future__ import annotations

import asyncio
import inspect
import sys
import threading
from collections.abc import Callable, Generator
from contextvars import ContextVar
from typing import Any

from warpgraph._internal._constants import CONF, CONFIG_KEY_CHECKPOINT_ID, INTERRUPT, TASKS
from warpgraph._internal._flags import FAST_PATHS
from warpgraph._internal._machines import Stepping
from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp
from warpgraph.checkpoint._sql.writer import FailureSink
from warpgraph.pregel._records import PutCheckpointOp, PutWritesOp, WriteOp

__all__ = (
    "WRITE_LANGGRAPH_TYPES",
    "SaverSession",
    "foreign_tuple",
    "foreign_types",
    "from_foreign",
    "to_foreign",
)

_CAPS: dict[tuple[type, bool], tuple[bool, bool, bool, bool]] = {}

ACTIVE: ContextVar[Any] = ContextVar("warpgraph_saver_session", default=None)
"""The writer-mode session whose step is running (nested runs share its writer)."""


def _own_method(cls: type, name: str) -> bool:
    """`cls.name` is callable (only asked of savers taking `expected_head=`, i.e. following
    warpgraph's saver extensions, where `put_batch` / `writer` have a known meaning)."""
    return callable(getattr(cls, name, None))


def _has_param(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or (
        name == "task_path" and any(p.kind is p.VAR_POSITIONAL for p in params.values())
    )


def capabilities(saver: Any, is_async: bool) -> tuple[bool, bool, bool, bool]:
    """(fence, batch, writer, task_path) for `saver`'s type, detected once per type."""
    key = (type(saver), is_async)
    caps = _CAPS.get(key)
    if caps is None:
        cls = type(saver)
        prefix = "a" if is_async else ""
        put, pw, batch = (prefix + name for name in ("put", "put_writes", "put_batch"))
        fence = _has_param(getattr(cls, put, None), "expected_head")
        caps = _CAPS[key] = (
            fence,
            fence and _own_method(cls, batch),
            fence and _own_method(cls, "writer"),
            _has_param(getattr(saver, pw, None), "task_path"),
        )
    return caps


_WRITES_FENCE: dict[type, bool] = {}


def _fences_writes(session: SaverSession) -> bool:
    """A fencing saver whose `put_writes` takes `expected_head=` too (plain mode only)."""
    if not session.fence:
        return False
    cls = type(session.saver)
    known = _WRITES_FENCE.get(cls)
    if known is None:
        known = _WRITES_FENCE[cls] = _has_param(cls.put_writes, "expected_head")
    return known


# --- foreign savers: LangGraph's Send / Interrupt in, warpgraph's out -------------------
WRITE_LANGGRAPH_TYPES = True
"""Store LangGraph's Send / Interrupt in foreign savers (see module doc)."""


def foreign_types(saver: Any) -> tuple | None:
    """((warpgraph Send, Interrupt), (langgraph Send, Interrupt)) when `saver` stores values
    with a serializer that is not warpgraph's (LangGraph's savers) and LangGraph's types
    are loaded; else None (nothing to translate)."""
    lg = sys.modules.get("langgraph.types")
    serde = getattr(saver, "serde", None)
    if lg is None or type(serde).__module__.startswith("warpgraph."):
        return None
    from warpgraph.types import Interrupt, Send

    return (Send, Interrupt), (lg.Send, lg.Interrupt)


def foreign_tuple(saver: Any, saved: Any) -> Any:
    """`saved` (read from `saver`) with warpgraph's Send / Interrupt (for snapshot reads)."""
    types = foreign_types(saver)
    return saved if types is None else from_foreign(saved, types)


def _convert(value: Any, src: tuple, dst: tuple) -> Any:
    """A `src` Send / Interrupt (or a list of them) as the `dst` family's type."""
    if isinstance(value, list):
        return [_convert(v, src, dst) for v in value]
    if isinstance(value, tuple):
        return tuple(_convert(v, src, dst) for v in value)
    t = type(value)
    if t is src[0]:
        return dst[0](value.node, value.arg, timeout=getattr(value, "timeout", None))
    if t is src[1]:
        return dst[1](value.value, value.id, response_schema=value.response_schema)
    return value


def _convert_writes(writes: Any, src: tuple, dst: tuple) -> list:
    return [
        (c, _convert(v, src, dst)) if c == TASKS or c == INTERRUPT else (c, v) for c, v in writes
    ]


def to_foreign(item: PutOp | WritesOp, types: tuple) -> PutOp | WritesOp:
    """An item with LangGraph's Send / Interrupt in place of warpgraph's."""
    ours, theirs = types
    if type(item) is PutOp:
        values = item.checkpoint.get("channel_values") or {}
        if TASKS in values:
            cp = {**item.checkpoint, "channel_values": {**values}}
            cp["channel_values"][TASKS] = _convert(values[TASKS], ours, theirs)
            item.checkpoint = cp
    else:
        item.writes = _convert_writes(item.writes, ours, theirs)
    return item


def from_foreign(saved: Any, types: tuple) -> Any:
    """A checkpoint tuple read from a foreign saver, with warpgraph's Send / Interrupt."""
    if saved is None:
        return None
    ours, theirs = types
    cp = saved.checkpoint
    values = cp.get("channel_values") or {}
    if TASKS in values:
        cp = {**cp, "channel_values": {**values, TASKS: _convert(values[TASKS], theirs, ours)}}
    pending = saved.pending_writes
    if pending:
        pending = [
            (t, c, _convert(v, theirs, ours)) if c == TASKS or c == INTERRUPT else (t, c, v)
            for t, c, v in pending
        ]
    return saved._replace(checkpoint=cp, pending_writes=pending)


_MEMORY_SAVER: Any = None  # (InMemorySaver, imported on first use)


def _in_memory(saver: Any) -> bool:
    global _MEMORY_SAVER
    if _MEMORY_SAVER is None:
        from warpgraph.checkpoint.memory import InMemorySaver

        _MEMORY_SAVER = InMemorySaver
    return isinstance(saver, _MEMORY_SAVER)


def _sync_twins(saver: Any) -> bool:
    """`saver`'s `aput` / `aput_writes` are InMemorySaver's, which call `put` / `put_writes`."""
    from warpgraph.checkpoint.memory import InMemorySaver

    cls = type(saver)
    return (
        isinstance(saver, InMemorySaver)
        and cls.aput is InMemorySaver.aput
        and cls.aput_writes is InMemorySaver.aput_writes
    )


class SaverSession:
    """Decisions for one run's saver operations (see module doc)."""

    __slots__ = (
        "_head_known",
        "buffer",
        "closed",
        "expected",
        "failed",
        "fence",
        "foreign",
        "hooks_tasks",
        "inflight",
        "is_async",
        "lock",
        "mode",
        "passes_ops_through",
        "root",
        "saver",
        "shared",
        "sink",
        "sync_twins",
        "task_path",
        "writer",
    )

    def __init__(self, saver: Any, durability: str, is_async: bool, nested: bool = False) -> None:
        fence, batch, writer, task_path = capabilities(saver, is_async)
        self.saver = saver
        self.is_async = is_async
        self.fence = fence
        self.task_path = task_path
        if not FAST_PATHS:  # WARPGRAPH_FAST_PATHS=0: one plain (fenced) call per operation
            self.mode = "plain"
        elif writer and durability == "async":
            self.mode = "writer"
        elif batch:
            self.mode = "batch"
        else:
            self.mode = "plain"
        # whether finished tasks' writes are taken from the loop as each task finishes
        self.hooks_tasks = durability != "exit" and (self.mode != "plain" or not _in_memory(saver))
        self.foreign = None if fence else foreign_types(saver)
        self.expected: Any = NO_EXPECTATION
        self._head_known = not fence
        self.buffer: list[PutOp | WritesOp] = []
        self.failed: BaseException | None = None
        self.writer: Any = None
        self.shared = False  # `writer` is the saver's shared one (see `submit`)
        self.root: SaverSession | None = None  # whose writer this (nested) run uses
        self.lock: Any = None
        self.sink: FailureSink | None = None  # where the writer reports failed commits
        if self.mode == "writer":
            parent = ACTIVE.get() if nested else None
            if parent is not None and parent.saver is saver:
                self.root = parent.root or parent
                self.sink = self.root.sink
            else:
                self.lock = threading.Lock()
                self.sink = FailureSink()
        self.inflight: list[Any] = []  # async: commits started from task callbacks
        self.closed = False
        # plain savers without fencing or type translation get the loop's ops as they are
        self.passes_ops_through = (
            self.mode == "plain"
            and not fence
            and (self.foreign is None or not WRITE_LANGGRAPH_TYPES)
        )
        # the saver's async write methods only call its sync ones (warpgraph's InMemorySaver:
        # its own `aput` / `aput_writes`), so an async run may call those directly
        self.sync_twins = FAST_PATHS and is_async and _sync_twins(saver)

    # --- reads / the run's head -------------------------------------------------------
    def head_lookup(self, config: dict) -> dict | None:
        """After the run's first get_tuple: the config to look the head up with when the
        read addressed a checkpoint_id (else None: that read gave the head)."""
        self._head_known = True
        conf = config.get(CONF) or {}
        if conf.get(CONFIG_KEY_CHECKPOINT_ID):
            return {
                **config,
                CONF: {k: v for k, v in conf.items() if k != CONFIG_KEY_CHECKPOINT_ID},
            }
        return None

    def set_head(self, saved: Any) -> None:
        self.expected = saved.checkpoint["id"] if saved is not None else None

    # --- writes -----------------------------------------------------------------------
    def to_item(self, op: WriteOp) -> Any:
        """The loop's write op as a batch item (fenced puts expect the current head, which
        then becomes the new checkpoint); as it is when the session passes ops through."""
        if self.passes_ops_through:
            return op
        if op.kind == "put":
            expected = self.expected
            if self.fence:
                self.expected = op.checkpoint["id"]
            item: Any = PutOp(op.config, op.checkpoint, op.metadata, op.new_versions, expected)
        else:  # (fenced like puts: the head must still be the one the run expects)
            item = WritesOp(op.config, op.writes, op.task_id, op.task_path, self.expected)
        if self.foreign is None or not WRITE_LANGGRAPH_TYPES:
            return item
        return to_foreign(item, self.foreign)

    def write(self, op: WriteOp) -> list | None:
        """A write op from the loop: returns the items to commit now, or None (buffered or
        submitted to the writer)."""
        self.check()
        item = self.to_item(op)
        if self.mode == "batch":
            self.buffer.append(item)
            return None
        if self.mode == "writer":  # (with the step's last task's writes, if any)
            self.buffer.append(item)
            items, self.buffer = self.buffer, []
            self.submit(items)
            return None
        return [item]

    def task_writes(self, ops: list[PutWritesOp], last: bool) -> list | None:
        """Writes of a task that just finished (`last`: no other task of its step still
        runs); returns the items to commit now, or None."""
        self.check()
        items = [self.to_item(op) for op in ops]
        if self.mode != "plain" and last:  # they ride with the step's checkpoint
            self.buffer.extend(items)
            return None
        if self.mode == "writer":
            self.submit(items)
            return None
        return items

    def take(self) -> list | None:
        """The buffered items to commit now (None if nothing is buffered)."""
        if not self.buffer:
            return None
        items, self.buffer = self.buffer, []
        self.check()
        return items

    def check(self) -> None:
        """Raise the failure that stopped this run's writes (also a writer commit's)."""
        if self.failed is not None:
            raise self.failed
        sink = self.sink
        if sink is not None and sink.error is not None:
            self.failed = sink.error
            raise sink.error

    def submit(self, items: list) -> None:
        owner = self.root or self
        writer = owner.writer
        if writer is None:
            with owner.lock:  # nested runs of parallel tasks may get here together
                if owner.writer is None:
                    shared = getattr(self.saver, "shared_writer", None)
                    owner.shared = shared is not None
                    owner.writer = shared() if shared is not None else self.saver.writer()
                writer = owner.writer
        try:
            writer.submit_many(items, owner.sink)
        except BaseException as exc:  # a value that cannot be serialized: nothing queued
            self.failed = exc
            raise

    def _hand_over(self) -> bool:
        """A nested run's end: its pending commits become its root run's to wait for."""
        if self.root is None:
            return False
        items = self.take()
        if items:
            self.commit(items)
        self.check()
        return True

    def hook(self, loop: Any, n_tasks: int, run: Callable[[list], None]) -> Callable:
        """A runner `on_done` wrapping the loop's: takes the writes the loop queued for a
        finished task and hands them to `run` (commit now) or the buffer."""
        on_task_done = loop.on_task_done
        done = 0

        def on_done(task: Any, exc: BaseException | None) -> Any:
            nonlocal done
            handler = on_task_done(task, exc)  # (an error handler's task: one more to run)
            done += 1
            ops = loop.take_queued_writes()
            if ops:
                items = self.task_writes(ops, done >= n_tasks and handler is None)
                if items:
                    run(items)
            return handler

        return on_done

    def calls(self, items: list) -> list[tuple[str, tuple, dict]]:
        """The saver calls committing `items`: (sync method name, args, kwargs); the async
        executor calls the `a`-prefixed twin."""
        if self.mode != "plain":
            return [("put_batch", (items,), {})]
        out = []
        for it in items:
            if type(it) is PutCheckpointOp or type(it) is PutWritesOp:  # an op passed through
                out.append((*_passed_op_call(it, self.task_path), {}))
            elif type(it) is PutOp:
                kw = {"expected_head": it.expected_head} if self.fence else {}
                out.append(("put", (it.config, it.checkpoint, it.metadata, it.new_versions), kw))
            else:
                args = (it.config, it.writes, it.task_id)
                kw = {"expected_head": it.expected_head} if _fences_writes(self) else {}
                out.append(("put_writes", (*args, it.task_path) if self.task_path else args, kw))
        return out

    # --- what the drivers do with the loop's write ops --------------------------------
    def perform_write(self, op: WriteOp) -> None:
        """What the sync driver does with a write op (`write`, then commit what is due);
        lone steps (`pregel/_lone.py`) call it for their checkpoints."""
        items = self.write(op)
        if items:
            self.commit(items)

    def perform_last_task_writes(self, ops: list[PutWritesOp]) -> None:
        """What the runner's `hook` does with the writes of a step's only task (they ride
        with the step's checkpoint unless the session commits each op); lone steps call it."""
        items = self.task_writes(ops, True)
        if items:
            self.commit(items)

    # --- plans ------------------------------------------------------------------------
    # Each operation with a sync and an async form is written once, as a plan: a generator
    # yielding the saver calls `(method, args, kwargs)` (sync names; the async executor
    # awaits the `a`-prefixed twin) and the waits below (pairs: the sync executor's method
    # and the async one's), and returning the result. The executors (`_run`, `_arun`: one
    # `Stepping` each) perform each step and send its result back (or throw its error in).

    def _commit_plan(self, items: list) -> Plan:
        if self.mode == "writer":
            self.submit(items)
            return
        try:
            if self.mode != "plain":  # what `calls` gives, without building it
                yield ("put_batch", (items,), {})
            else:
                for call in self.calls(items):  # noqa: UP028 - each gets its result sent
                    yield call
        except BaseException as exc:
            self.failed = exc
            raise

    def _flush_plan(self) -> Plan:
        if self.inflight:  # (async only: commits started from task callbacks)
            yield _AWAIT_INFLIGHT
        items = self.take()
        if items:
            yield from self._commit_plan(items)
        else:
            self.check()

    def _read_plan(self, config: dict, call: tuple, head: str | None) -> Plan:
        """A read once this run's writes are stored. `head`: how a fenced run that does
        not know its head yet learns it: "read" (this read gave it, unless it addressed a
        checkpoint_id), "latest" (the thread's latest), None (not from this read)."""
        yield from self._flush_plan()
        if self.root is not None and self._settles(config):
            yield _SETTLE
        saved = yield call
        if head is None:
            return saved
        if self.foreign is not None:
            saved = from_foreign(saved, self.foreign)
        if not self._head_known:
            lookup = self.head_lookup(config)
            if lookup is None and head == "read":
                self.set_head(saved)
            else:
                self.set_head((yield ("get_tuple", (lookup or config,), {})))
        return saved

    def _close_plan(self) -> Plan:
        if self.closed:
            return
        self.closed = True
        if self._hand_over():
            return
        try:
            yield from self._flush_plan()
        finally:
            if self.writer is not None:  # (None: nothing was submitted)
                # shared: this run's submissions committed, the writer goes on; else the
                # run's own writer commits what it holds and stops
                yield _WAIT_SHARED_WRITER if self.shared else _CLOSE_WRITER
        self.check()

    def _settles(self, config: dict) -> bool:
        """Whether a nested run's read must first wait for what its root run submitted to
        the writer: when its namespace outlives a task (a `checkpointer=True` subgraph's
        own, without task ids), an earlier call of it in this root run may still be
        queued. (A namespace with the task's id has no earlier checkpoints in this run.)"""
        root = self.root
        if root is None or root.writer is None:
            return False
        ns = (config.get(CONF) or {}).get("checkpoint_ns") or ""
        return ":" not in ns.rpartition("|")[2]

    # --- sync executor ----------------------------------------------------------------
    def _run(self, plan: Plan) -> Any:
        steps = Stepping(plan)
        for step in steps:
            try:
                steps.value = self._perform(step)
            except BaseException as e:  # noqa: BLE001 - thrown into the plan
                steps.error = e
        return steps.result

    def _perform(self, step: tuple) -> Any:
        """One step of a plan: a wait (this executor's method of it) or a saver call."""
        if len(step) == 2:
            return getattr(self, step[0])()
        name, args, kw = step
        if name == _LIST_FIRST:
            return next(iter(self.saver.list(*args, **kw)), None)
        return getattr(self.saver, name)(*args, **kw)

    def _settle_root(self) -> None:
        self.root.writer.flush()  # type: ignore[union-attr]

    def _close_writer(self) -> None:
        self.writer.close()

    def _wait_shared(self) -> None:
        self.writer.flush()

    def _no_inflight(self) -> None:  # (never: only async commits run in flight)
        raise RuntimeError("async commits in flight in a sync run")

    def commit(self, items: list) -> None:
        """Commit `items` (one transaction when the saver batches; in writer mode: hand
        them to the writer)."""
        self._run(self._commit_plan(items))

    def flush(self) -> None:
        """Commit what is buffered; raise a writer failure seen so far. (Once per step: with
        nothing buffered, only the failure check.)"""
        if self.buffer:
            self._run(self._flush_plan())
        else:
            self.check()

    def call_saver(self, op: WriteOp) -> None:
        """A write op of a session passing ops through, called on the saver as it is (a put with its
        envelope encoded by the engine - `loop.packed_puts` - stored as such)."""
        saver = self.saver
        if op.kind != "put":  # (written out: once or twice per step)
            if self.task_path:
                saver.put_writes(op.config, op.writes, op.task_id, op.task_path)
            else:
                saver.put_writes(op.config, op.writes, op.task_id)
        elif op.envelope is not None:
            saver._store_packed(op.config, op.checkpoint, op.metadata, op.new_versions, op.envelope)
        else:
            saver.put(op.config, op.checkpoint, op.metadata, op.new_versions)

    def get_tuple(self, config: dict) -> Any:
        return self._run(self._read_plan(config, ("get_tuple", (config,), {}), "read"))

    def get_before(self, config: dict, checkpoint_id: str) -> Any:
        """The newest checkpoint of `config`'s thread and namespace older than
        `checkpoint_id` (a subgraph's state when a replay of its parent starts)."""
        return self._run(self._read_plan(config, _list_first(config, checkpoint_id), "latest"))

    def get_delta_history(self, config: dict, channels: list[str]) -> Any:
        """The saver's `get_delta_channel_history` (once this run's writes are stored)."""
        return self._run(self._read_plan(config, _delta_history(config, channels), None))

    def close(self) -> None:
        """End of the run: commit everything and wait for it; raise the first failure."""
        self._run(self._close_plan())

    # --- async executor ---------------------------------------------------------------
    async def _arun(self, plan: Plan) -> Any:
        steps = Stepping(plan)
        for step in steps:
            try:
                steps.value = await self._aperform(step)
            except BaseException as e:  # noqa: BLE001 - thrown into the plan
                steps.error = e
        return steps.result

    async def _aperform(self, step: tuple) -> Any:
        """`_perform` awaiting: the wait's async method, the saver's `a`-prefixed twin."""
        if len(step) == 2:
            return await getattr(self, step[1])()
        name, args, kw = step
        if name != _LIST_FIRST:
            return await getattr(self.saver, "a" + name)(*args, **kw)
        async for tup in self.saver.alist(*args, **kw):
            return tup
        return None

    async def _aclose_writer(self) -> None:
        # the writer's commits may need this event loop (aiosqlite): wait off-loop
        await asyncio.to_thread(self.writer.close)

    async def _await_shared(self) -> None:
        await asyncio.wrap_future(self.writer.marker())

    async def acommit(self, items: list) -> None:
        await self._arun(self._commit_plan(items))

    async def aflush(self) -> None:
        if self.buffer or self.inflight:
            await self._arun(self._flush_plan())
        else:
            self.check()

    async def acall_saver(self, op: WriteOp) -> None:
        """`call_saver` for the async driver (engine-encoded puts only with `sync_twins`)."""
        if self.sync_twins:
            return self.call_saver(op)
        name, args = _passed_op_call(op, self.task_path)
        await getattr(self.saver, "a" + name)(*args)

    async def aget_tuple(self, config: dict) -> Any:
        return await self._arun(self._read_plan(config, ("get_tuple", (config,), {}), "read"))

    async def aget_before(self, config: dict, checkpoint_id: str) -> Any:
        plan = self._read_plan(config, _list_first(config, checkpoint_id), "latest")
        return await self._arun(plan)

    async def aget_delta_history(self, config: dict, channels: list[str]) -> Any:
        return await self._arun(self._read_plan(config, _delta_history(config, channels), None))

    async def aclose(self) -> None:
        await self._arun(self._close_plan())

    def start_commit(self, items: list) -> None:
        """From a task callback on the event loop: start committing `items` now."""
        self.inflight.append(asyncio.ensure_future(self.acommit(items)))

    async def await_inflight(self) -> None:
        """Wait for the commits started from task callbacks; raise the first failure."""
        tasks, self.inflight = self.inflight, []
        for res in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(res, BaseException):
                raise res

    async def _asettle(self) -> None:
        """A nested run's read waits for what its root run submitted (see `_settles`)."""
        root = self.root
        if root is None or root.writer is None:
            return
        if root.shared:
            await asyncio.wrap_future(root.writer.marker())
        else:
            await asyncio.to_thread(root.writer.flush)


Plan = Generator[Any, Any, Any]
"""A session operation as steps (see the session's "plans")."""


# the waits a plan may yield besides saver calls: (the sync executor's method performing
# it, the async executor's)
_SETTLE = ("_settle_root", "_asettle")  # a nested run's read waits for its root's writer
_CLOSE_WRITER = ("_close_writer", "_aclose_writer")  # the run's own writer: commit all, stop
_WAIT_SHARED_WRITER = ("_wait_shared", "_await_shared")  # the shared writer: this run's commits
_AWAIT_INFLIGHT = ("_no_inflight", "await_inflight")  # async: commits started from callbacks
_LIST_FIRST = "list_first"  # a call step: the first tuple `list(*args, **kw)` gives


def _list_first(config: dict, checkpoint_id: str) -> tuple:
    return (_LIST_FIRST, (config,), {"before": _before(checkpoint_id), "limit": 1})


def _delta_history(config: dict, channels: list[str]) -> tuple:
    return ("get_delta_channel_history", (), {"config": config, "channels": channels})


def _passed_op_call(op: WriteOp, task_path: bool) -> tuple[str, tuple]:
    """The saver call (sync name) performing an op passed through (without an envelope)."""
    if op.kind == "put":
        return "put", (op.config, op.checkpoint, op.metadata, op.new_versions)
    args = (op.config, op.writes, op.task_id)
    return "put_writes", (*args, op.task_path) if task_path else args


def _before(checkpoint_id: str) -> dict:
    return {CONF: {CONFIG_KEY_CHECKPOINT_ID: checkpoint_id}}
