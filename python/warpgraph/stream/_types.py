"""Protocol event shapes and the `StreamTransformer` extension point."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal

from warpgraph._internal._compat import NotRequired, TypedDict

logger = logging.getLogger(__name__)

_ASYNC_HOOKS = ("aprocess", "afinalize", "afail")


class _ProtocolEventParams(TypedDict):
    """`namespace` of the emitting graph, wall-clock `timestamp` in ms (not monotonic: order
    by the event's `seq`), the payload, and for values events the run's interrupts."""

    namespace: list[str]
    timestamp: int
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One event of a v3 run: a stream part (or a channel push) in the protocol envelope.
    `seq` is assigned by the root mux when the event enters its main log."""

    type: Literal["event"]
    event_id: NotRequired[str]
    seq: NotRequired[int]
    method: str
    params: _ProtocolEventParams


class StreamTransformer(ABC):
    """Observes the protocol events of a run and builds projections from them.

    `init()` returns the projection dict (its `StreamChannel`s are bound, wired and closed
    by the mux); `process(event)` sees every event in registration order and returns False to
    keep it off the main log. Class flags: `_native` (projection keys become attributes of the
    run stream and named channels forward without the `custom:` prefix), `required_stream_modes`
    (what the graph must stream for this transformer), `before_builtins` (registered ahead of
    the built-in transformers), `requires_async` / `supports_sync` (which lanes it can run on:
    overriding an async hook means async-only unless `supports_sync`). `schedule(coro)` ties
    async work to the run: awaited before `afinalize`, cancelled before `afail`.
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projection dict (keys land in `run.extensions`)."""

    def _on_register(self, mux: Any) -> None:
        """Called once the mux has wired this transformer in (no-op by default)."""

    def process(self, event: ProtocolEvent) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must override process() or aprocess()")

    async def aprocess(self, event: ProtocolEvent) -> bool:
        return self.process(event)

    def finalize(self) -> None:
        """The run ended normally."""

    async def afinalize(self) -> None:
        self.finalize()

    def fail(self, err: BaseException) -> None:
        """The run ended with `err`."""

    async def afail(self, err: BaseException) -> None:
        self.fail(err)

    # ------------------------------------------------------------- scheduled async work
    def schedule(
        self, coro: Coroutine[Any, Any, Any], *, on_error: Literal["log", "raise"] = "log"
    ) -> asyncio.Task[Any]:
        """Run `coro` as a task owned by the mux (`on_error="log"` swallows and logs its
        failure; `"raise"` makes the run's close fail with it)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop; this "
                "transformer must run under astream(), not stream(). Set requires_async=True "
                "on the class so this fails at registration rather than at first event."
            ) from None
        task = asyncio.create_task(_logged(coro) if on_error == "log" else coro)
        pending = self.__dict__.setdefault("_stream_scheduled_tasks", set())
        pending.add(task)
        task.add_done_callback(pending.discard)
        return task


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:
        logger.exception("Scheduled StreamTransformer task failed")
        return None


def transformer_requires_async(transformer: StreamTransformer) -> bool:
    """True when `transformer` can only run on the async lane."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    return any(getattr(cls, h) is not getattr(StreamTransformer, h) for h in _ASYNC_HOOKS)
