"""`AsyncBatchedBaseStore`: async calls made concurrently are merged into one `abatch`.

Each async method queues its operation with a future; a background task on the store's
event loop takes everything queued so far, drops duplicate reads (and all but the last put
per (namespace, key)), runs one `abatch` and settles the futures. The sync methods hand
their call to that loop from another thread (calling them on the loop itself would
deadlock, so it raises `asyncio.InvalidStateError`).
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from warpgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchOp,
)

__all__ = ("AsyncBatchedBaseStore",)


def _off_loop(method: Callable) -> Callable:
    """A sync method that runs its async twin on the store's loop (never on the loop)."""
    name = method.__name__

    @functools.wraps(method)
    def sync(self: AsyncBatchedBaseStore, *args: Any, **kwargs: Any) -> Any:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None and running is self._loop:
            raise asyncio.InvalidStateError(
                f"Synchronous calls to {type(self).__name__} detected in the main event loop. "
                "This can lead to deadlocks or performance issues. "
                "Please use the asynchronous interface for main thread operations. "
                f"Specifically, replace `store.{name}(...)` with `await store.a{name}(...)` "
            )
        coro = getattr(self, "a" + name)(*args, **kwargs)
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    return sync


class AsyncBatchedBaseStore(BaseStore):
    """A store whose concurrent async operations run as one `abatch` call."""

    __slots__ = ("_aqueue", "_loop", "_task")

    def __init__(self) -> None:
        super().__init__()
        self._loop = asyncio.get_running_loop()
        self._aqueue: asyncio.Queue[tuple[asyncio.Future, Op]] = asyncio.Queue()
        self._task: asyncio.Task | None = None
        self._ensure_task()

    def __del__(self) -> None:
        task = getattr(self, "_task", None)
        if task is not None:
            try:
                task.cancel()
            except RuntimeError:  # the loop is closed
                pass

    def _ensure_task(self) -> None:
        """(Re)start the consumer if it is not running (e.g. it was cancelled)."""
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(_consume(self._aqueue, weakref.ref(self)))

    async def _submit(self, op: Op) -> Any:
        self._ensure_task()
        future = self._loop.create_future()
        self._aqueue.put_nowait((future, op))
        return await future

    # The async methods build their op like BaseStore's and queue it.

    async def aget(self, namespace, key, *, refresh_ttl=None):  # type: ignore[no-untyped-def]
        return await self._submit(self._get_op(namespace, key, refresh_ttl=refresh_ttl))

    async def asearch(  # type: ignore[no-untyped-def]
        self,
        namespace_prefix,
        /,
        *,
        query=None,
        filter=None,
        limit=10,
        offset=0,
        refresh_ttl=None,
    ):
        op = self._search_op(
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
        )
        return await self._submit(op)

    async def aput(self, namespace, key, value, index=None, **kw):  # type: ignore[no-untyped-def]
        await self._submit(self._put_op(namespace, key, value, index, **kw))

    async def adelete(self, namespace, key):  # type: ignore[no-untyped-def]
        await self._submit(self._delete_op(namespace, key))

    async def alist_namespaces(self, **kw):  # type: ignore[no-untyped-def]
        return await self._submit(self._list_namespaces_op(**kw))

    @_off_loop
    def batch(self, ops: Iterable[Op]) -> list[Result]:  # type: ignore[empty-body]
        """`abatch` run on the store's loop."""

    @_off_loop
    def get(self, namespace, key, *, refresh_ttl=None):  # type: ignore[no-untyped-def]
        """The item under (namespace, key), or None."""

    @_off_loop
    def search(self, namespace_prefix, /, **kw):  # type: ignore[no-untyped-def]
        """Items under `namespace_prefix` (see BaseStore.search)."""

    @_off_loop
    def put(self, namespace, key, value, index=None, **kw):  # type: ignore[no-untyped-def]
        """Store `value` under (namespace, key)."""

    @_off_loop
    def delete(self, namespace, key):  # type: ignore[no-untyped-def]
        """Delete the item under (namespace, key)."""

    @_off_loop
    def list_namespaces(self, **kw):  # type: ignore[no-untyped-def]
        """Stored namespaces (see BaseStore.list_namespaces)."""


def _dedupe(ops: list[Op]) -> tuple[list[int] | None, list[Op]]:
    """(index into the kept ops per queued op, kept ops): equal reads run once; puts to
    the same (namespace, key) keep the last value, at the first one's place."""
    if len(ops) <= 1:
        return None, ops
    kept: list[Op] = []
    where: list[int] = []
    reads: dict[Any, int] = {}
    puts: dict[tuple[tuple[str, ...], str], int] = {}
    for op in ops:
        if isinstance(op, PutOp):
            slot = puts.get((op.namespace, op.key))
            if slot is None:
                slot = puts[(op.namespace, op.key)] = len(kept)
                kept.append(op)
            else:
                kept[slot] = op
        elif isinstance(op, (GetOp, SearchOp, ListNamespacesOp)):
            try:
                slot = reads.setdefault(op, len(kept))
            except TypeError:  # a filter dict makes the op unhashable
                slot = next((i for i, k in enumerate(kept) if k == op), len(kept))
            if slot == len(kept):
                kept.append(op)
        else:
            slot = len(kept)
            kept.append(op)
        where.append(slot)
    return where, kept


async def _consume(
    queue: asyncio.Queue[tuple[asyncio.Future, Op]], ref: weakref.ReferenceType
) -> None:
    while True:
        first = await queue.get()
        store = ref()
        if store is None:
            return
        taken = [first]
        while not queue.empty():
            taken.append(queue.get_nowait())
        taken = [t for t in taken if not t[0].done()]  # cancelled callers
        if not taken:
            del store
            continue
        futures = [f for f, _ in taken]
        try:
            where, ops = _dedupe([op for _, op in taken])
            results = await store.abatch(ops)
            if where is not None:
                results = [results[i] for i in where]
        except Exception as exc:  # noqa: BLE001 - handed to every waiting caller
            for fut in futures:
                if not fut.done():
                    fut.set_exception(exc)
        else:
            for fut, result in zip(futures, results, strict=False):
                if not fut.done():
                    fut.set_result(result)
        del store
