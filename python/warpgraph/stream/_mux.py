"""`StreamMux`: routes a run's protocol events through its transformers into the main log."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any

from warpgraph.stream._types import ProtocolEvent, StreamTransformer, transformer_requires_async
from warpgraph.stream.stream_channel import StreamChannel

TransformerFactory = Callable[[tuple[str, ...]], StreamTransformer]
"""`factory(scope) -> StreamTransformer`; a transformer class with the standard constructor
is one. Factories (unlike instances) are cloned into every subgraph's mini-mux."""


def _call_all(hooks: Iterable[Callable[[], Any]]) -> BaseException | None:
    """Call every hook even when some raise; the first error (if any)."""
    first: BaseException | None = None
    for hook in hooks:
        try:
            hook()
        except BaseException as exc:  # noqa: BLE001 - every transformer must see the run end
            first = first or exc
    return first


async def _acall_all(hooks: Iterable[Callable[[], Awaitable[Any]]]) -> BaseException | None:
    first: BaseException | None = None
    for hook in hooks:
        try:
            await hook()
        except BaseException as exc:  # noqa: BLE001 - every transformer must see the run end
            first = first or exc
    return first


def _lanes(transformers: Iterable[StreamTransformer]) -> list[StreamTransformer]:
    """`before_builtins` transformers first, each lane in the order given."""
    items = list(transformers)
    early = [t for t in items if getattr(t, "before_builtins", False)]
    return early + [t for t in items if not getattr(t, "before_builtins", False)]


class StreamMux:
    """The transformer pipeline and main event log of one run (or one subgraph scope).

    `extensions` merges every transformer's projection (keys must not collide);
    `native_keys` are the keys of `_native` transformers. A root mux (`_assign_seq`) numbers
    the events of its main log; child mini-muxes (built by `_make_child` for subgraph handles)
    share the forwarded event objects untouched. The run stream binds its pump
    (`bind_pump` / `bind_apump`) so every projection cursor can drive the run.
    """

    def __init__(
        self,
        transformers: list[StreamTransformer] | None = None,
        *,
        is_async: bool = False,
        factories: list[TransformerFactory] | None = None,
        scope: tuple[str, ...] = (),
        _assign_seq: bool = True,
    ) -> None:
        self.is_async = is_async
        self.scope: tuple[str, ...] = scope
        self._assign_seq = _assign_seq
        self._seq = 0  # main-log sequence numbers (root only)
        self._push_seq = 0  # channel push stamps
        self._events: StreamChannel[ProtocolEvent] = StreamChannel()
        self._events._bind(is_async=is_async)
        self._events._bind_mux(self)
        self._transformers: list[StreamTransformer] = []
        self._channels: list[StreamChannel[Any]] = []
        self.extensions: dict[str, Any] = {}
        self.native_keys: set[str] = set()
        self._transformer_by_key: dict[str, StreamTransformer] = {}
        self._factories: list[TransformerFactory] | None = (
            None if factories is None else list(factories)
        )
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        if factories is not None:
            for transformer in _lanes(factory(scope) for factory in factories):
                self._register(transformer)
        for transformer in _lanes(transformers or ()):
            self._register(transformer)

    # ------------------------------------------------------------- registration
    def transformer_by_key(self, key: str) -> StreamTransformer | None:
        return self._transformer_by_key.get(key)

    def _register(self, transformer: StreamTransformer) -> None:
        if not self.is_async and transformer_requires_async(transformer):
            raise RuntimeError(
                f"{type(transformer).__name__} requires an async run — it overrides "
                "aprocess/afinalize/afail or sets requires_async=True. "
                "Use astream(), not stream()."
            )
        projection = transformer.init()
        if not isinstance(projection, dict):
            raise TypeError(
                f"StreamTransformer.init() must return a dict, got {type(projection).__name__}"
            )
        taken = sorted(k for k in projection if k in self.extensions)
        if taken:
            owners = ", ".join(
                f"{k!r} (owned by {type(self._transformer_by_key[k]).__name__})" for k in taken
            )
            raise ValueError(
                f"Transformer {type(transformer).__name__} returned projection keys that "
                f"conflict with already-registered keys: {owners}"
            )
        native = bool(getattr(transformer, "_native", False))
        self._transformers.append(transformer)
        for value in projection.values():
            if isinstance(value, StreamChannel):
                self._adopt_channel(value, native)
        self.extensions.update(projection)
        for key in projection:
            self._transformer_by_key[key] = transformer
        if native:
            self.native_keys.update(projection)
        transformer._on_register(self)

    def _adopt_channel(self, channel: StreamChannel[Any], native: bool) -> None:
        channel._bind(is_async=self.is_async)
        channel._bind_mux(self)
        self._channels.append(channel)
        if channel.name is not None:
            method = channel.name if native else f"custom:{channel.name}"
            channel._wire(lambda item, _method=method: self._forward(_method, item))

    # ------------------------------------------------------------- pumps and children
    def _next_push_seq(self) -> int:
        self._push_seq += 1
        return self._push_seq

    def bind_pump(self, fn: Callable[[], bool]) -> None:
        """Let every cursor of this mux (log, projections, transformer-made streams) pull."""
        self._pump_fn = fn
        self._bind_all(fn, "_request_more", "_bind_pump")

    def bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        """`bind_pump` for async cursors."""
        self._apump_fn = fn
        self._bind_all(fn, "_arequest_more", "_bind_apump")

    def _bind_all(self, fn: Callable[[], Any], channel_attr: str, hook_name: str) -> None:
        """Set `channel_attr` of every channel to `fn`; call each transformer's `hook_name`."""
        for channel in (self._events, *self._channels):
            setattr(channel, channel_attr, fn)
        for transformer in self._transformers:
            hook = getattr(transformer, hook_name, None)
            if hook is not None:
                hook(fn)

    def _make_child(self, scope: tuple[str, ...]) -> StreamMux:
        """A mini-mux for a subgraph at `scope`: fresh transformers from the same factories,
        the same pumps, no sequence numbers of its own."""
        if self._factories is None:
            raise RuntimeError(
                "StreamMux._make_child requires the mux to be constructed with `factories=`; "
                "pre-built transformers can't be cloned to a new scope."
            )
        child = StreamMux(
            factories=self._factories, is_async=self.is_async, scope=scope, _assign_seq=False
        )
        if self._pump_fn is not None:
            child.bind_pump(self._pump_fn)
        if self._apump_fn is not None:
            child.bind_apump(self._apump_fn)
        return child

    # ------------------------------------------------------------- the main log
    def _append(self, event: ProtocolEvent) -> None:
        if self._assign_seq:
            self._seq += 1
            event["seq"] = self._seq
        self._events.push(event)

    def _forward(self, method: str, item: Any) -> None:
        """A named channel's push as an event of the main log (not shown to transformers)."""
        self._append(
            {
                "type": "event",
                "method": method,
                "params": {"namespace": [], "timestamp": int(time.time() * 1000), "data": item},
            }
        )

    def push(self, event: ProtocolEvent) -> None:
        """Show `event` to every transformer; log it unless one of them returned False."""
        keep = True
        for transformer in self._transformers:
            if not transformer.process(event):
                keep = False
        if keep:
            self._append(event)

    async def apush(self, event: ProtocolEvent) -> None:
        keep = True
        for transformer in self._transformers:
            if not await transformer.aprocess(event):
                keep = False
        if keep:
            self._append(event)

    # ------------------------------------------------------------- end of the run
    def _close_channels(self, err: BaseException | None) -> None:
        """End the projection channels still open (with `err`, if any)."""
        for channel in self._channels:
            if not channel._closed:
                if err is None:
                    channel.close()
                else:
                    channel.fail(err)

    def close(self) -> None:
        """Finalize every transformer, then close all channels; the first finalize error is
        raised once everything is closed."""
        first = _call_all(t.finalize for t in self._transformers)
        self._close_channels(None)
        self._events.close()
        if first is not None:
            raise first

    def fail(self, err: BaseException) -> None:
        _call_all(partial(t.fail, err) for t in self._transformers)  # their errors are dropped
        self._close_channels(err)
        self._events.fail(err)

    def _scheduled(self) -> list[asyncio.Task[Any]]:
        return [
            task
            for transformer in self._transformers
            for task in getattr(transformer, "_stream_scheduled_tasks", ())
            if not task.done()
        ]

    async def aclose(self) -> None:
        """Await the transformers' scheduled tasks, then `afinalize` and close."""
        pending = self._scheduled()
        if pending:
            outcomes = await asyncio.gather(*pending, return_exceptions=True)
            for outcome in outcomes:
                if isinstance(outcome, BaseException) and not isinstance(
                    outcome, asyncio.CancelledError
                ):
                    raise outcome
        first = await _acall_all(t.afinalize for t in self._transformers)
        self._close_channels(None)
        self._events.close()
        if first is not None:
            raise first

    async def afail(self, err: BaseException) -> None:
        pending = self._scheduled()
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        await _acall_all(partial(t.afail, err) for t in self._transformers)
        self._close_channels(err)
        if not self._events._closed:
            self._events.fail(err)
