"""Group commit: a background writer that commits queued saver operations in batches."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from warpgraph.checkpoint._sql import NO_EXPECTATION, PutOp, WritesOp

if TYPE_CHECKING:
    from typing_extensions import Self

_STOP = object()


class FailureSink:
    """Where operations queued with `GroupCommitWriter.submit_many` report: keeps the first
    failure (`error`) and nothing per operation. A run's saver session checks `error`
    before its next operation; building and resolving a `Future` per operation (a
    Condition and an RLock each) costs more than the commit's own Python work."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: BaseException | None = None

    def set_result(self, result: Any) -> None:
        pass

    def set_exception(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc


class WriterApi:
    """What both group-commit writers (this module's and the SQLite saver's native one)
    build on their `submit`, `marker` and `close`."""

    def submit(self, op: PutOp | WritesOp) -> Future:
        raise NotImplementedError

    def marker(self) -> Future:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def put(
        self,
        config: dict,
        checkpoint: Any,
        metadata: Any,
        new_versions: Any,
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> Future:
        """Queue a `put`; the future's result is the stored checkpoint's config."""
        return self.submit(PutOp(config, checkpoint, metadata, new_versions, expected_head))

    def put_writes(
        self,
        config: dict,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
        *,
        expected_head: Any = NO_EXPECTATION,
    ) -> Future:
        """Queue a `put_writes`; the future's result is None."""
        return self.submit(WritesOp(config, list(writes), task_id, task_path, expected_head))

    def flush(self, timeout: float | None = None) -> None:
        """Block until everything submitted so far is committed (errors stay in futures)."""
        self.marker().result(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GroupCommitWriter(WriterApi):
    """Commits queued `put` / `put_writes` operations from one background thread.

    Operations are serialized when submitted (later mutation of the submitted values has no
    effect; a value that cannot be serialized fails the returned future at once) and
    committed strictly in submission order; everything queued while a commit runs goes into
    the next transaction, so a checkpoint is never visible before the writes submitted
    ahead of it. Each operation's future resolves after the commit that contains it
    (result: the put's config, or None for writes; a failed op - e.g. a fencing conflict -
    is rolled back alone and fails only its own future). `submit_many` queues operations
    that report to a shared `FailureSink` instead (a run's saver session).
    """

    def __init__(
        self,
        prepare: Callable[[PutOp | WritesOp], Any],
        commit: Callable[[Sequence[Any]], list[Any]],
        *,
        max_batch: int = 512,
        name: str = "warpgraph-group-commit",
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, not {max_batch!r}")
        self._prepare = prepare
        self._commit = commit
        self.max_batch = max_batch
        self.batches = 0  # number of transactions committed (for tests / metrics)
        self.owner: Any = None  # what must stay alive while the writer runs (its saver)
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        """True once `close` was called (no more submissions)."""
        return self._closed

    @property
    def alive(self) -> bool:
        """Whether the background thread still runs."""
        return self._thread.is_alive()

    # --- submission -------------------------------------------------------------------
    def submit(self, op: PutOp | WritesOp) -> Future:
        """Queue one operation; returns a future resolved once it is committed."""
        fut: Future = Future()
        try:
            prepared = self._prepare(op)
        except Exception as exc:  # noqa: BLE001 - reported through the future
            fut.set_exception(exc)
            return fut
        self._enqueue([(prepared, fut)])
        return fut

    def submit_many(self, ops: Sequence[PutOp | WritesOp], sink: FailureSink) -> None:
        """Queue `ops` in order without a future each: a commit failure goes to `sink`.
        Serialization happens first, for all of them: when one cannot be serialized it
        raises here and none of `ops` is queued."""
        self._enqueue([(self._prepare(op), sink) for op in ops])

    def _enqueue(self, entries: list[tuple[Any, Future | FailureSink]]) -> None:
        with self._lock:
            if self._closed:
                raise RuntimeError("GroupCommitWriter is closed")
            for entry in entries:
                self._queue.put(entry)

    def marker(self) -> Future:
        """A future resolved once everything submitted before it is committed (futures
        resolve in submission order, so the earlier ones are then all done)."""
        marker: Future = Future()
        with self._lock:
            if not self._closed:
                self._queue.put((None, marker))
                return marker
        if threading.current_thread() is not self._thread:
            self._thread.join()  # closed: the thread commits what was queued, then ends
        marker.set_result(None)
        return marker

    def close(self) -> None:
        """Commit what is queued, then stop the thread (from the writer's own thread,
        e.g. a finalizer run there: only ask it to stop)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._queue.put(_STOP)
        if threading.current_thread() is not self._thread:
            self._thread.join()

    # --- background thread ------------------------------------------------------------
    def _run(self) -> None:
        stop = False
        while not stop:
            batch = [self._queue.get()]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if _STOP in batch:
                stop = True
                batch = [b for b in batch if b is not _STOP]
            ops = [b for b in batch if b[0] is not None]
            if ops:
                self._commit_batch(ops)
            for prepared, fut in batch:
                if prepared is None:
                    fut.set_result(None)

    def _commit_batch(self, ops: list[tuple[Any, Future | FailureSink]]) -> None:
        try:
            results = self._commit([p for p, _ in ops])
        except BaseException as exc:  # noqa: BLE001 - the whole transaction failed
            for _, target in ops:
                target.set_exception(exc)
            return
        self.batches += 1
        for (_, target), result in zip(ops, results):
            if isinstance(result, BaseException):
                target.set_exception(result)
            else:
                target.set_result(result)
