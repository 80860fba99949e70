"""Graph lifecycle callbacks: handlers told when a run pauses on interrupts or resumes.

Pass a `GraphCallbackHandler` in `config["callbacks"]` (alone, in a list, or added to a
langchain-core callback manager); other handlers never receive these events. Needs
langchain-core (the handlers are langchain-core callback handlers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.callbacks.manager import ahandle_event, handle_event
from typing_extensions import Self

from warpgraph.types import Interrupt

__all__ = (
    "GraphCallbackHandler",
    "GraphInterruptEvent",
    "GraphLifecycleEvent",
    "GraphLifecycleStatus",
    "GraphResumeEvent",
    "get_async_graph_callback_manager_for_config",
    "get_sync_graph_callback_manager_for_config",
)

GraphLifecycleStatus: TypeAlias = Literal[
    "input", "pending", "done", "interrupt_before", "interrupt_after", "out_of_steps"
]
"""The loop status an event reports."""


@dataclass(frozen=True)
class _GraphRunEvent:
    """What both lifecycle events say about the run (their first fields, in this order)."""

    run_id: UUID | None
    """The graph run's id (None when unknown)."""
    status: GraphLifecycleStatus
    """The loop status when the run paused or resumed."""
    checkpoint_id: str
    """The checkpoint the run paused at or resumed from."""
    checkpoint_ns: tuple[str, ...]
    """The namespace of the graph (empty for the root graph)."""


@dataclass(frozen=True)
class GraphInterruptEvent(_GraphRunEvent):
    """A run paused on interrupts."""

    interrupts: tuple[Interrupt, ...]
    """What paused it."""


@dataclass(frozen=True)
class GraphResumeEvent(_GraphRunEvent):
    """A run resumed from a saved checkpoint."""


GraphLifecycleEvent: TypeAlias = GraphInterruptEvent | GraphResumeEvent
"""Either lifecycle event."""


class GraphCallbackHandler(BaseCallbackHandler):
    """Base class of handlers that observe graph lifecycle events (override either hook)."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """Called when the run pauses on interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """Called when the run resumes from a checkpoint."""


def _graph_handlers(handlers: Sequence[Any]) -> list[GraphCallbackHandler]:
    return [h for h in handlers if isinstance(h, GraphCallbackHandler)]


class _LifecycleManager(BaseCallbackManager):
    """Dispatches lifecycle events to the graph handlers it holds (others are dropped)."""

    run_id: UUID | None

    def __init__(
        self,
        handlers: Sequence[Any] | None = None,
        inheritable_handlers: Sequence[Any] | None = None,
        parent_run_id: UUID | None = None,
        *,
        tags: list[str] | None = None,
        inheritable_tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inheritable_metadata: dict[str, Any] | None = None,
        run_id: UUID | None = None,
    ) -> None:
        BaseCallbackManager.__init__(
            self,
            handlers=list(handlers or ()),
            inheritable_handlers=list(inheritable_handlers or ()),
            parent_run_id=parent_run_id,
            tags=tags,
            inheritable_tags=inheritable_tags,
            metadata=metadata,
            inheritable_metadata=inheritable_metadata,
        )
        self.run_id = run_id

    @classmethod
    def _from_manager(cls, other: BaseCallbackManager, run_id: Any) -> Self:
        return cls(
            _graph_handlers(other.handlers),
            _graph_handlers(other.inheritable_handlers),
            other.parent_run_id,
            tags=list(other.tags),
            inheritable_tags=list(other.inheritable_tags),
            metadata=dict(other.metadata),
            inheritable_metadata=dict(other.inheritable_metadata),
            run_id=run_id,
        )

    def copy(self, *, run_id: Any = ...) -> Self:  # type: ignore[override]
        if run_id is ...:
            run_id = self.run_id
        elif run_id is not None and not isinstance(run_id, UUID):
            raise TypeError("run_id must be a UUID or None")
        return type(self)._from_manager(self, run_id)

    @classmethod
    def configure(  # type: ignore[override]
        cls, callbacks: Any = None, *, run_id: UUID | None = None
    ) -> Self:
        """The manager for a config's `callbacks` value (None, a handler, a list, a manager)."""
        if callbacks is None:
            return cls(run_id=run_id)
        if isinstance(callbacks, BaseCallbackManager):
            return cls._from_manager(callbacks, run_id)
        if isinstance(callbacks, GraphCallbackHandler):
            return cls([callbacks], run_id=run_id)
        if isinstance(callbacks, (str, bytes)) or not isinstance(callbacks, Sequence):
            raise TypeError("callbacks must be a handler, sequence, or manager")
        return cls(_graph_handlers(list(callbacks)), run_id=run_id)


class _GraphCallbackManager(_LifecycleManager):
    """Sync dispatcher of lifecycle events."""

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        handle_event(self.handlers, "on_interrupt", None, event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        handle_event(self.handlers, "on_resume", None, event)


class _AsyncGraphCallbackManager(_LifecycleManager):
    """Async dispatcher of lifecycle events."""

    @property
    def is_async(self) -> bool:
        return True

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:
        await ahandle_event(self.handlers, "on_interrupt", None, event)

    async def on_resume(self, event: GraphResumeEvent) -> None:
        await ahandle_event(self.handlers, "on_resume", None, event)


def get_sync_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _GraphCallbackManager:
    """The sync lifecycle manager of `config`'s graph handlers, bound to `run_id`."""
    return _GraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)


def get_async_graph_callback_manager_for_config(
    config: Any, *, run_id: UUID | None = None
) -> _AsyncGraphCallbackManager:
    """The async lifecycle manager of `config`'s graph handlers, bound to `run_id`."""
    return _AsyncGraphCallbackManager.configure(config.get("callbacks"), run_id=run_id)


def lifecycle_event(
    kind: str, run_id: Any, status: Any, checkpoint_id: str, ns: tuple, interrupts: tuple
) -> GraphLifecycleEvent:
    """The event the loop recorded as `(kind, status, checkpoint_id, ns, interrupts)`."""
    if kind == "resume":
        return GraphResumeEvent(run_id, status, checkpoint_id, ns)
    return GraphInterruptEvent(run_id, status, checkpoint_id, ns, interrupts)
