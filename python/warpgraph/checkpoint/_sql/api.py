"""The public API of the SQL savers, written once for sync and async callers and both backends.

Each operation is ONE definition that builds a *job* (backend-specific, no I/O yet); the
saver class runs jobs: `_exec(job)` for the sync method, `await _aexec(job)` for its
`a`-prefixed async twin. `@twin` turns the definition into both methods.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from warpgraph._internal._codegen import define_like
from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp
from warpgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
)
from warpgraph.checkpoint.memory import InMemorySaver

__all__ = ("SqlSaverBase", "twin")


class twin:
    """`@twin def op(self, <params>): "doc"` declares one operation (signature and docstring;
    the body is not run) and defines `op` and its async twin `aop`:

        def op(self, <params>):        return self._exec(self._op_job(<params>))
        async def aop(self, <params>): return await self._aexec(self._op_job(<params>))

    `_op_job` is the backend's job builder (all params passed positionally). `done`: a
    method applied to the job's result; `run`: the executor's sync name (the async one
    is `_a` + the rest); `pages=True`: the job returns `(items, next job or None)` and the
    methods iterate over the pages' items. The methods are generated with the declared
    signature (no *args/**kwargs forwarding: these are the savers' hot paths)."""

    def __init__(
        self,
        build: Callable | None = None,
        *,
        done: str | None = None,
        run: str = "_exec",
        pages: bool = False,
    ) -> None:
        self.build, self.done, self.run, self.pages = build, done, run, pages

    def __call__(self, build: Callable) -> twin:
        self.build = build
        return self

    def __set_name__(self, owner: type, name: str) -> None:
        job = f"self._{name}_job({{args}})"
        if self.pages:
            sync = _PAGES.format(job=job, run="self._exec", each="yield from items")
            asyn = _PAGES.format(job=job, run="await self._aexec", each=_YIELD_EACH)
        else:
            call = f"self.{self.run}({job})"
            acall = f"await self._a{self.run[1:]}({job})"
            if self.done is not None:
                call, acall = f"self.{self.done}({call})", f"self.{self.done}({acall})"
            sync, asyn = f"return {call}", f"return {acall}"
        setattr(owner, name, _generate(self.build, name, "def", sync))
        afn = _generate(self.build, "a" + name, "async def", asyn)
        if self.pages:
            sig = inspect.signature(self.build)
            afn.__signature__ = sig.replace(return_annotation="AsyncIterator[CheckpointTuple]")
        setattr(owner, "a" + name, afn)


_PAGES = """job = {job}
while job is not None:
    items, job = {run}(job)
    {each}"""
_YIELD_EACH = "for item in items:\n        yield item"


def _generate(build: Callable, name: str, keyword: str, body: str) -> Callable:
    """`keyword name(<build's parameters>): body` (`{args}`: the parameters after self,
    positionally), with build's docstring and signature (`_codegen.define_like`)."""

    def lines(args: list[str], _: list[str]) -> list[str]:
        return body.format(args=", ".join(args)).splitlines()

    fn = define_like(keyword, name, build, lines, {})
    functools.update_wrapper(fn, build)  # docstring, annotations and signature (__wrapped__)
    fn.__name__ = name
    fn.__qualname__ = build.__qualname__.rpartition(".")[0] + "." + name
    return fn


class SqlSaverBase(BaseCheckpointSaver[str]):
    """Sync + async API of a SQL saver. Subclasses define `_exec` / `_aexec` (and
    `_exec_batch` / `_aexec_batch`), `_done_tuple` and the `_*_job` builders."""

    leaves_inputs_unchanged = True
    """Its writes never change the configs, checkpoints and versions they are given (a
    run's loop then shares them between its calls instead of copying them). A subclass
    that changes them must set this to False."""

    @twin(done="_done_tuple")
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint selected by `config` (latest of the thread/ns if no id), or None."""

    @twin(pages=True)
    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Matching checkpoints, newest first. `filter` matches top-level metadata keys
        (validated, ValueError) literally, with bound parameters only."""

    @twin
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> RunnableConfig:
        """Store a checkpoint (blobs only for `new_versions`); returns the config selecting it.

        Fenced when `expected_head` (or `configurable[CONFIG_KEY_EXPECTED_HEAD]`) is given:
        the put succeeds only if the thread/ns head is still that id (None: no checkpoint
        yet), else it raises CheckpointConflictError and stores nothing.
        """

    @twin
    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> None:
        """Store a task's writes (idempotent per (task_id, idx >= 0); special writes replace).

        Fenced like `put` when `expected_head` is given: stored only if the thread/ns
        head is still that id (whichever checkpoint the writes belong to), else
        CheckpointConflictError and nothing is stored.
        """

    @twin(run="_exec_batch")
    def put_batch(
        self, ops: Sequence[PutOp | WritesOp], *, return_exceptions: bool = False
    ) -> list[Any]:
        """Run `ops` (PutOp / WritesOp) in order; returns per-op results (a put's config,
        None for writes). return_exceptions=False: all or nothing (the first error is
        raised); True: a failing op's exception is returned in its slot."""

    @twin
    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint, blob and write of `thread_id`."""

    @twin
    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints whose metadata `run_id` is in `run_ids`, with their writes."""

    @twin
    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint, blob and write of one thread to another."""

    @twin
    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """ "keep_latest": keep each namespace's latest checkpoint with its writes (e.g. a
        pending interrupt) and the blobs it reads; "delete": delete the threads."""

    get_next_version = InMemorySaver.get_next_version
