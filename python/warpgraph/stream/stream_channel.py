"""`StreamChannel`: the single-consumer queue behind every v3 projection.

A channel buffers `(stamp, item)` pairs for one subscriber. Nothing is kept before somebody
subscribes (projections nobody reads cost nothing), the stamp is a counter owned by the mux
the channel belongs to (so `interleave` can merge several channels in arrival order), and a
named channel also reports every push to its mux, which turns it into a protocol event on
the run's main log. The consumer drives the run: when its buffer is empty, its cursor asks the
run for one more event (`_request_more` / `_arequest_more`, set by the run stream).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from warpgraph.stream._mux import StreamMux

T = TypeVar("T")

_PULL: Any = object()  # `_queued`'s signal: the buffer is empty, ask the run for more
_UNBOUND = "StreamChannel has not been bound yet. Register the transformer with a StreamMux first."


class StreamChannel(Generic[T]):
    """A drainable, single-subscriber stream of items (optionally mirrored on the main log).

    `name` set: the mux forwards every push as a protocol event (method `name` for native
    transformers, `custom:<name>` otherwise). `maxlen` is validated and kept for forward
    compatibility; the caller-driven pump already bounds what is buffered.
    """

    def __init__(self, name: str | None = None, *, maxlen: int | None = None) -> None:
        if maxlen is not None and maxlen <= 0:
            raise ValueError("StreamChannel maxlen must be a positive int or None")
        self.name = name
        self._maxlen = maxlen
        self._items: deque[tuple[int, T]] = deque()
        self._closed = False
        self._error: BaseException | None = None
        self._is_async: bool | None = None  # None until the mux binds the channel
        self._subscribed = False
        self._request_more: Callable[[], bool] | None = None
        self._arequest_more: Callable[[], Awaitable[bool]] | None = None
        self._wire_fn: Callable[[T], None] | None = None
        self._mux: StreamMux | None = None

    # ------------------------------------------------------------- wiring (by the mux)
    def _bind(self, *, is_async: bool) -> None:
        """Fix the iteration protocol (sync `for` or `async for`); once only."""
        if self._is_async is not None:
            raise RuntimeError("StreamChannel is already bound")
        self._is_async = is_async

    def _bind_mux(self, mux: StreamMux) -> None:
        self._mux = mux

    def _wire(self, fn: Callable[[T], None]) -> None:
        self._wire_fn = fn

    # ------------------------------------------------------------- producer side
    def push(self, item: T) -> None:
        """Buffer `item` for the subscriber (if any) and mirror it to the main log (if named)."""
        if self._subscribed:
            if self._closed:
                raise RuntimeError("Cannot push to a closed StreamChannel")
            mux = self._mux
            self._items.append((mux._next_push_seq() if mux is not None else 0, item))
        forward = self._wire_fn
        if forward is not None:
            forward(item)

    def close(self) -> None:
        self._closed = True

    def fail(self, err: BaseException) -> None:
        self._error = err
        self._closed = True

    # ------------------------------------------------------------- consumer side
    def _subscribe(self, want_async: bool) -> None:
        if self._is_async is None:
            raise TypeError(_UNBOUND)
        if self._is_async != want_async:
            if want_async:
                raise TypeError("This StreamChannel is bound to sync mode — use 'for' instead.")
            raise TypeError("This StreamChannel is bound to async mode — use 'async for' instead.")
        if self._subscribed:
            fan_out = ".atee(n)" if want_async else ".tee(n)"
            raise RuntimeError(
                f"StreamChannel already has a subscriber; use {fan_out} for fan-out."
            )
        self._subscribed = True

    def __iter__(self) -> Iterator[T]:
        self._subscribe(False)
        return self._drain()

    def __aiter__(self) -> AsyncIterator[T]:
        self._subscribe(True)
        return self._adrain()

    def _queued(self) -> Iterator[Any]:
        """What both cursors read: the buffered items as they come, `_PULL` whenever the
        buffer is empty while the channel is open (the cursor asks the run for more, then
        resumes this); ends once the channel is closed and drained, raising the error it
        failed with."""
        items = self._items
        while True:
            if items:
                yield items.popleft()[1]
            elif self._closed:
                if self._error is not None:
                    raise self._error
                return
            else:
                yield _PULL

    # a cursor ends at an empty buffer when there is no pump, or when a pull made no
    # progress and left nothing behind (nor closed the channel)
    def _drain(self) -> Iterator[T]:
        for item in self._queued():
            if item is not _PULL:
                yield item
            elif (more := self._request_more) is None or not (
                more() or self._items or self._closed
            ):
                return

    async def _adrain(self) -> AsyncIterator[T]:
        for item in self._queued():
            if item is not _PULL:
                yield item
            elif (more := self._arequest_more) is None or not (
                await more() or self._items or self._closed
            ):
                return

    # ------------------------------------------------------------- fan-out
    def tee(self, n: int = 2) -> tuple[Iterator[T], ...]:
        """Subscribe once and hand out `n` iterators that each see every item."""
        if n < 1:
            raise ValueError("tee() requires n >= 1")
        source = iter(self)
        queues: list[deque[T]] = [deque() for _ in range(n)]
        state = {"done": False}

        def branch(own: deque[T]) -> Iterator[T]:
            while True:
                if own:
                    yield own.popleft()
                    continue
                if state["done"]:
                    return
                for item in source:
                    for q in queues:
                        q.append(item)
                    break
                else:
                    state["done"] = True

        return tuple(branch(q) for q in queues)

    def atee(self, n: int = 2) -> tuple[AsyncIterator[T], ...]:
        """Async `tee`: one branch at a time pulls from the source (under a lock)."""
        if n < 1:
            raise ValueError("atee() requires n >= 1")
        source = self.__aiter__()
        queues: list[deque[T]] = [deque() for _ in range(n)]
        state: dict[str, Any] = {"done": False, "error": None}
        lock = asyncio.Lock()

        async def branch(own: deque[T]) -> AsyncIterator[T]:
            while True:
                if own:
                    yield own.popleft()
                    continue
                if state["done"]:
                    if state["error"] is not None:
                        raise state["error"]
                    return
                async with lock:
                    if own or state["done"]:
                        continue
                    try:
                        item = await source.__anext__()
                    except StopAsyncIteration:
                        state["done"] = True
                        continue
                    except Exception as exc:  # noqa: BLE001 - re-raised by every branch
                        state["done"], state["error"] = True, exc
                        continue
                    for q in queues:
                        q.append(item)

        return tuple(branch(q) for q in queues)
