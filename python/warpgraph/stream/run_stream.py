"""Run streams: what `stream_events(version="v3")` returns.

A run stream owns the graph's v2 part iterator and a `StreamMux`. There is no background
thread or task: whoever iterates a projection (or the raw event log, or asks for `output`)
pulls the next part from the graph, converts it to a protocol event and pushes it through
the mux, which fills the projections. Subgraph handles are run streams over a child
mini-mux whose pump is the root run's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any

from warpgraph._internal._compat import Self
from warpgraph.stream._convert import convert_to_protocol_event
from warpgraph.stream._mux import StreamMux
from warpgraph.stream._types import ProtocolEvent
from warpgraph.stream.stream_channel import StreamChannel

if TYPE_CHECKING:
    from warpgraph.stream.transformers import LifecyclePayload, SubgraphStatus


class _RunStreamBase:
    """State shared by both lanes: the mux, its projections and what the run's own
    values events said (latest state, interrupts) -- kept whatever transformers run."""

    values: StreamChannel[dict[str, Any]]
    messages: StreamChannel[Any]
    lifecycle: StreamChannel[LifecyclePayload]
    subgraphs: StreamChannel[Any]
    updates: StreamChannel[dict[str, Any]]
    custom: StreamChannel[Any]
    checkpoints: StreamChannel[dict[str, Any]]
    debug: StreamChannel[dict[str, Any]]
    tasks: StreamChannel[dict[str, Any]]

    def _setup(self, mux: StreamMux) -> None:
        self._mux = mux
        self.extensions: Mapping[str, Any] = MappingProxyType(mux.extensions)
        self._exhausted = False
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []
        self._scope_list: list[str] = list(mux.scope)
        for key in mux.native_keys:
            setattr(self, key, mux.extensions[key])

    def __getattr__(self, name: str) -> Any:
        # only reached for names that are not set: native projections are instance attributes
        mux = self.__dict__.get("_mux")
        known = ", ".join(sorted(mux.native_keys)) if mux is not None else ""
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r} "
            f"(registered projections: {known or 'none'})"
        )

    def _observe_event(self, event: ProtocolEvent) -> None:
        if event["method"] != "values":
            return
        params = event["params"]
        if params["namespace"] != self._scope_list:
            return
        self._latest = params["data"]
        found = params.get("interrupts", ())
        if found:
            self._interrupted = True
            self._interrupts.extend(found)

    def _raise_if_failed(self) -> None:
        err = self._mux._events._error
        if err is not None:
            raise err


class GraphRunStream(_RunStreamBase):
    """A sync v3 run: iterate `run` (protocol events) or any projection (`run.values`,
    `run.messages`, `run.lifecycle`, `run.subgraphs`, `run.extensions[...]`) to drive it.
    Projections are single-consumer (`tee(n)` for fan-out); `interleave(*names)` merges
    several in arrival order; `output` / `interrupted` / `interrupts` run it to the end."""

    def __init__(
        self, graph_iter: Iterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._graph_iter = graph_iter
        self._setup(mux)
        if wire_pump:
            mux.bind_pump(self._pump_next)

    def _pump_next(self) -> bool:
        """Move the run by one part; False once it is over (ended, failed or aborted)."""
        if self._exhausted or self._graph_iter is None:
            return False
        try:
            part = next(self._graph_iter)
        except StopIteration:
            self._exhausted = True
            self._mux.close()
            return False
        except Exception as exc:  # noqa: BLE001 - the run's error, handed to its projections
            self._exhausted = True
            self._mux.fail(exc)
            return False
        try:
            event = convert_to_protocol_event(part)
            self._observe_event(event)
            self._mux.push(event)
        except Exception as exc:  # noqa: BLE001 - a transformer failed: so does the run
            self._exhausted = True
            self._mux.fail(exc)
            return False
        return True

    def _run_to_end(self) -> None:
        while self._pump_next():
            pass
        self._raise_if_failed()

    @property
    def output(self) -> dict[str, Any] | None:
        """The final state of the run (its last own values event)."""
        self._run_to_end()
        return self._latest

    @property
    def interrupted(self) -> bool:
        self._run_to_end()
        return self._interrupted

    @property
    def interrupts(self) -> list[Any]:
        self._run_to_end()
        return self._interrupts

    def abort(self) -> None:
        """Stop the run (closing the graph's iterator cancels what runs) and close the
        projections. Idempotent."""
        if self._exhausted:
            return
        self._exhausted = True
        graph_iter, self._graph_iter = self._graph_iter, None
        close = getattr(graph_iter, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()
        with contextlib.suppress(Exception):
            self._mux.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.abort()

    def __iter__(self) -> Iterator[ProtocolEvent]:
        return iter(self._mux._events)

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """`(name, item)` from the named projections in the order items were pushed."""
        held: dict[str, StreamChannel[Any]] = {}
        try:
            for name in names:
                held[name] = _claim(name, self.extensions[name])
            yield from _merge_by_stamp(held, self._mux)
        finally:
            for channel in held.values():
                channel._subscribed = False


def _claim(name: str, channel: Any) -> StreamChannel[Any]:
    if not isinstance(channel, StreamChannel):
        raise TypeError(
            f"interleave() requires StreamChannel projections, got "
            f"{type(channel).__name__} for {name!r}"
        )
    if channel._is_async is None:
        raise TypeError(
            f"StreamChannel {name!r} has not been bound yet. "
            "Register the transformer with a StreamMux first."
        )
    if channel._is_async:
        raise TypeError(
            f"StreamChannel {name!r} is bound to async mode — "
            "sync interleave() cannot consume async channels."
        )
    if channel._subscribed:
        raise RuntimeError(
            f"StreamChannel {name!r} already has a subscriber; use .tee(n) for fan-out."
        )
    channel._subscribed = True
    return channel


def _merge_by_stamp(
    channels: dict[str, StreamChannel[Any]], mux: StreamMux
) -> Iterator[tuple[str, Any]]:
    live = dict(channels)
    while live:
        # the oldest buffered item across the live channels
        first: tuple[int, str] | None = None
        for name, channel in list(live.items()):
            if channel._items:
                stamp = channel._items[0][0]
                if first is None or stamp < first[0]:
                    first = (stamp, name)
            elif channel._closed:
                if channel._error is not None:
                    raise channel._error
                del live[name]
        if first is not None:
            yield first[1], live[first[1]]._items.popleft()[1]
            continue
        if not live:
            return
        pump = mux._pump_fn
        if pump is not None and pump():
            continue
        # no progress: drop what has ended; stop when nothing did
        ended = [n for n, ch in live.items() if ch._closed and not ch._items]
        for name in ended:
            if live[name]._error is not None:
                raise live[name]._error
            del live[name]
        if not ended:
            return


class AsyncGraphRunStream(_RunStreamBase):
    """The async v3 run (`await graph.astream_events(..., version="v3")`). One task at a
    time advances the graph; other cursors wait for its step and look at their buffers
    again. `output()` / `interrupted()` / `interrupts()` are coroutines."""

    def __init__(
        self, graph_aiter: AsyncIterator[Any] | None, mux: StreamMux, *, wire_pump: bool = True
    ) -> None:
        self._graph_aiter = graph_aiter
        self._setup(mux)
        self._pump_cond = asyncio.Condition()
        self._pumping = False
        self._anext_task: asyncio.Future[Any] | None = None
        self._aborting = False
        if wire_pump:
            mux.bind_apump(self._apump_next)

    async def _apump_next(self) -> bool:
        async with self._pump_cond:
            if self._exhausted or self._graph_aiter is None:
                return False
            if self._pumping:  # somebody else is pulling: wait for their step
                await self._pump_cond.wait()
                return not self._exhausted
            self._pumping = True
        try:
            return await self._pull_one(self._graph_aiter)
        finally:
            async with self._pump_cond:
                self._pumping = False
                self._pump_cond.notify_all()

    async def _pull_one(self, graph_aiter: AsyncIterator[Any]) -> bool:
        # the pull runs as its own task so that abort() can cancel it mid-flight (the
        # cancellation reaches the running nodes; aclose() cannot while it is running)
        self._anext_task = pull = asyncio.ensure_future(graph_aiter.__anext__())
        try:
            part = await pull
        except asyncio.CancelledError:
            if self._aborting:
                self._exhausted = True
                return False
            pull.cancel()
            raise
        except StopAsyncIteration:
            self._exhausted = True
            await self._mux.aclose()
            return False
        except Exception as exc:  # noqa: BLE001 - the run's error, handed to its projections
            self._exhausted = True
            await self._mux.afail(exc)
            return False
        finally:
            self._anext_task = None
        try:
            event = convert_to_protocol_event(part)
            self._observe_event(event)
            await self._mux.apush(event)
        except Exception as exc:  # noqa: BLE001 - a transformer failed: so does the run
            self._exhausted = True
            await self._mux.afail(exc)
            return False
        return True

    async def _run_to_end(self) -> None:
        while await self._apump_next():
            pass
        self._raise_if_failed()

    async def output(self) -> dict[str, Any] | None:
        await self._run_to_end()
        return self._latest

    async def interrupted(self) -> bool:
        await self._run_to_end()
        return self._interrupted

    async def interrupts(self) -> list[Any]:
        await self._run_to_end()
        return self._interrupts

    async def abort(self) -> None:
        """Stop the run: cancel an in-flight pull, close the graph's iterator, close the
        projections. Idempotent."""
        async with self._pump_cond:
            if self._exhausted:
                return
            self._exhausted = True
            self._aborting = True
            graph_aiter, self._graph_aiter = self._graph_aiter, None
            pull = self._anext_task
            self._pump_cond.notify_all()
        if pull is not None and not pull.done():
            pull.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pull
        aclose = getattr(graph_aiter, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
        with contextlib.suppress(Exception):
            await self._mux.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.abort()

    def __aiter__(self) -> AsyncIterator[ProtocolEvent]:
        return self._mux._events.__aiter__()


class _SubgraphHandle:
    """What a subgraph handle adds: where it runs and how it ended (set by
    `SubgraphTransformer`)."""

    path: tuple[str, ...]
    graph_name: str | None
    trigger_call_id: str | None
    status: SubgraphStatus
    error: str | None
    _seen_terminal: bool

    def _describe(
        self, path: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        self.path = path
        self.graph_name = graph_name
        self.trigger_call_id = trigger_call_id
        self.status = "started"
        self.error = None
        self._seen_terminal = False

    def _can_pump(self) -> bool:
        return not (self._exhausted or self._seen_terminal or self._mux._events._closed)  # type: ignore[attr-defined]


class SubgraphRunStream(GraphRunStream, _SubgraphHandle):
    """A discovered subgraph (sync): its projections fill as the root run moves; pulling on
    them moves the root run, until the subgraph has ended."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_pump_fn: Callable[[], bool] | None = mux._pump_fn
        super().__init__(None, mux, wire_pump=False)
        self._describe(path, graph_name, trigger_call_id)

    def _pump_next(self) -> bool:
        pump = self._parent_pump_fn
        return pump is not None and self._can_pump() and pump()


class AsyncSubgraphRunStream(AsyncGraphRunStream, _SubgraphHandle):
    """Async twin of `SubgraphRunStream`."""

    def __init__(
        self,
        mux: StreamMux,
        *,
        path: tuple[str, ...],
        graph_name: str | None = None,
        trigger_call_id: str | None = None,
    ) -> None:
        self._parent_apump_fn: Callable[[], Awaitable[bool]] | None = mux._apump_fn
        super().__init__(None, mux, wire_pump=False)
        self._describe(path, graph_name, trigger_call_id)

    async def _apump_next(self) -> bool:
        pump = self._parent_apump_fn
        return pump is not None and self._can_pump() and await pump()
