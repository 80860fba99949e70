"""What the four SQL stores share: configuration, the plan drivers and the TTL sweepers.

A store class names its dialect and provides a *session* factory: `_session()` (sync) or
`_asession()` (async), a context manager whose object runs one statement,
`run(kind, sql, params)`, opening the transaction at the first write and committing (or
rolling back) when the context ends. `drive` / `adrive` feed a plan's requests to the
embeddings and to one session.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from contextlib import AsyncExitStack, ExitStack
from typing import Any

from warpgraph.store._sql.dialect import Dialect
from warpgraph.store._sql.plan import EMBED_DOCUMENTS, EMBED_QUERIES, EXEC, MANY, ROWS, Plan
from warpgraph.store._sweeper import ThreadSweeper, interval_seconds
from warpgraph.store.base import TTLConfig, ensure_embeddings
from warpgraph.store.base.embed import _tokenized_fields

__all__ = (
    "AsyncSweeping",
    "SqlSession",
    "SqlStoreConfig",
    "SyncSweeping",
    "TaskSweeper",
    "ThreadSweeper",
    "adrive",
    "aprelude",
    "drive",
)

logger = logging.getLogger("warpgraph.store")


class SqlStoreConfig:
    """Mixin: connection, value decoding, index and TTL configuration of a SQL store
    (`supports_ttl` is True)."""

    _dialect: Dialect
    _custom_loads: Callable[[Callable[[Any], Any]], Dialect]
    """The dialect decoding values with a caller's `deserializer`."""
    supports_ttl = True

    def _configure(self, conn: Any, deserializer: Any, index: Any, ttl: TTLConfig | None) -> None:
        """What every SQL store's constructor sets (the backend's base calls it)."""
        self.conn = conn
        self._deserializer = deserializer
        if deserializer is not None:
            self._dialect = self._custom_loads(deserializer)
        self.embeddings: Any = None
        self.index_config: Any = None
        if index:
            config = dict(index)
            fields = config.get("fields") or config.get("text_fields") or ["$"]
            if not isinstance(fields, (list, str)):
                raise ValueError(f"Text fields must be a list or a string. Got {fields}")
            config["__tokenized_fields"] = _tokenized_fields(fields)
            self.embeddings = ensure_embeddings(config.get("embed"))
            self.index_config = config
        self.ttl_config = ttl


class SqlSession:
    """One batch on a DB-API connection (the sync stores' sessions): reads as they come, a
    transaction from the first write (`_begin`, the driver's own way of opening one)."""

    __slots__ = ("began", "conn", "cur")

    def __init__(self, conn: Any, cur: Any) -> None:
        self.conn, self.cur, self.began = conn, cur, False

    def _begin(self) -> None:
        raise NotImplementedError

    def close(self, ok: bool) -> None:
        """End the batch: commit (`ok`) or roll back what it wrote; close the cursor."""
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(exc_type is None)  # any exception (even BaseException) rolls back

    def run(self, kind: int, sql: str, params: Any) -> Any:
        cur = self.cur
        if kind == ROWS:
            cur.execute(sql, params)
            return cur.fetchall()
        self._begin()
        if kind == EXEC:
            cur.execute(sql, params)
            return cur.rowcount
        if kind == MANY:
            cur.executemany(sql, params)
            return None
        raise ValueError(f"unknown statement kind {kind}")


def _embed(embeddings: Any, request: tuple) -> Any:
    """The reply to an embedding request of a plan (sync)."""
    if request[0] == EMBED_QUERIES:
        return [embeddings.embed_query(text) for text in request[1]]
    return embeddings.embed_documents(request[1])


async def _aembed(embeddings: Any, request: tuple) -> Any:
    """The reply to an embedding request of a plan (on the event loop)."""
    if request[0] == EMBED_QUERIES:
        return list(await asyncio.gather(*(embeddings.aembed_query(t) for t in request[1])))
    return await embeddings.aembed_documents(request[1])


_EMBEDS = (EMBED_QUERIES, EMBED_DOCUMENTS)
_DONE = -1  # the kind of `_send`'s pseudo-request for a plan that returned


def _send(plan: Plan, reply: Any) -> Any:
    """The plan's next request, or (_DONE, its result) once it returns."""
    try:
        return plan.send(reply)
    except StopIteration as stop:
        return (_DONE, stop.value)


def drive(plan: Plan, embeddings: Any, session_factory: Any, first: Any = None) -> Any:
    """Run a plan synchronously; returns its result. `first`: a request already taken
    from the plan (see `aprelude`)."""
    reply: Any = None
    with ExitStack() as stack:
        session = None
        while True:
            if first is not None:
                request, first = first, None
            else:
                request = _send(plan, reply)
            kind = request[0]
            if kind == _DONE:
                return request[1]
            if kind in _EMBEDS:
                reply = _embed(embeddings, request)
            else:
                if session is None:
                    session = stack.enter_context(session_factory())
                reply = session.run(kind, request[1], request[2])


async def adrive(plan: Plan, embeddings: Any, session_factory: Any) -> Any:
    """Run a plan on the event loop; returns its result."""
    reply: Any = None
    async with AsyncExitStack() as stack:
        session = None
        while True:
            request = _send(plan, reply)
            kind = request[0]
            if kind == _DONE:
                return request[1]
            if kind in _EMBEDS:
                reply = await _aembed(embeddings, request)
            else:
                if session is None:
                    session = await stack.enter_async_context(session_factory())
                reply = await session.run(kind, request[1], request[2])


async def aprelude(plan: Plan, embeddings: Any) -> tuple[Any, Any]:
    """Answer a plan's embedding requests on the event loop; returns (its first
    statement request, None) or (None, the plan's result) when it has no statement."""
    reply: Any = None
    while True:
        request = _send(plan, reply)
        if request[0] == _DONE:
            return None, request[1]
        if request[0] not in _EMBEDS:
            return request, None
        reply = await _aembed(embeddings, request)


class TaskSweeper:
    """The async stores' TTL sweeper: `await store.sweep_ttl()` every interval in a task."""

    def __init__(self) -> None:
        self.task: asyncio.Task[None] | None = None
        self.stop_event: asyncio.Event | None = None

    async def start(self, store: Any, minutes: float | None) -> asyncio.Task[None]:
        if not store.ttl_config:
            return asyncio.create_task(asyncio.sleep(0))
        if self.task is not None and not self.task.done():
            return self.task
        self.stop_event = stop = asyncio.Event()
        interval = interval_seconds(store, minutes)

        async def loop() -> None:
            while True:
                try:
                    await asyncio.wait_for(stop.wait(), timeout=interval)
                    return
                except asyncio.TimeoutError:
                    pass
                try:
                    swept = await store.sweep_ttl()
                    if swept:
                        logger.info("Store swept %d expired items", swept)
                except Exception:
                    logger.exception("Store TTL sweep iteration failed")

        self.task = asyncio.create_task(loop())
        return self.task

    async def stop(self, timeout: float | None) -> bool:
        task = self.task
        if task is None or task.done():
            return True
        assert self.stop_event is not None
        self.stop_event.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), timeout=timeout)
        except asyncio.TimeoutError:
            logger.warning("Timed out waiting for TTL sweeper task to stop")
            return False
        self.task = None
        return True


class SyncSweeping:
    """Mixin of the sync SQL stores: their lock (`self.lock`) and TTL sweeper thread
    (`self._sweeper`, a ThreadSweeper), stopped when the store is collected."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self._sweeper = ThreadSweeper()

    def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Any:
        """Sweep periodically on a daemon thread (interval: the argument, else the TTL
        config's `sweep_interval_minutes`, else 5 minutes); returns a future done when it
        stops."""
        return self._sweeper.start(self, sweep_interval_minutes)

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread; True once it has stopped."""
        return self._sweeper.stop(timeout)

    def __del__(self) -> None:
        sweeper = getattr(self, "_sweeper", None)
        if sweeper is not None:
            sweeper.stop(0.1)


class AsyncSweeping:
    """Mixin of the async SQL stores: their asyncio lock (`self.lock`), event loop
    (`self.loop`), TTL sweeper task (`self._sweeper`, a TaskSweeper) and `async with`,
    whose exit stops it and the batching task."""

    _task: Any

    def __init__(self) -> None:
        super().__init__()
        self.lock = asyncio.Lock()
        self.loop = asyncio.get_running_loop()
        self._sweeper = TaskSweeper()

    async def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> Any:
        """Sweep periodically in a task (interval: the argument, else the TTL config's
        `sweep_interval_minutes`, else 5 minutes); returns the task."""
        return await self._sweeper.start(self, sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper task; True once it has stopped."""
        return await self._sweeper.stop(timeout)

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop_ttl_sweeper()
        task = self._task
        if task is not None and not task.done():
            task.cancel()
