"""`Runtime`: run-scoped context, store, stream writer and execution info handed to nodes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from warpgraph._internal._codegen import slot_builder
from warpgraph._internal._compat import TypedDict, Unpack
from warpgraph._internal._constants import CONF, CONFIG_KEY_RUNTIME
from warpgraph.config import get_config

__all__ = (
    "BaseUser",
    "ExecutionInfo",
    "RunControl",
    "Runtime",
    "ServerInfo",
    "get_runtime",
)

ContextT = TypeVar("ContextT")


@runtime_checkable
class BaseUser(Protocol):
    """An authenticated user (LangGraph Server): the members of langgraph-sdk's `BaseUser`
    protocol, so `isinstance` answers as it does for the SDK's (both are structural).
    Defined here rather than imported: the SDK pulls in an HTTP client, which no run
    outside LangGraph Server needs."""

    @property
    def is_authenticated(self) -> bool: ...

    @property
    def display_name(self) -> str: ...

    @property
    def identity(self) -> str: ...

    @property
    def permissions(self) -> Any: ...

    def __getitem__(self, key: str) -> Any: ...

    def __contains__(self, key: str) -> bool: ...

    def __iter__(self) -> Any: ...


_DC_KWARGS: dict[str, Any] = {"kw_only": True, "slots": True, "frozen": True}


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Read-only metadata of the current node execution."""

    checkpoint_id: str
    """Checkpoint id of the step being executed."""
    checkpoint_ns: str
    """Checkpoint namespace of the task."""
    task_id: str
    """Id of the task."""
    thread_id: str | None = None
    """Thread id (None without a checkpointer)."""
    run_id: str | None = None
    """Run id (None when the config has no `run_id`)."""
    node_attempt: int = 1
    """Attempt number of the node, from 1."""
    node_first_attempt_time: float | None = None
    """Unix time at which the first attempt started."""

    def patch(self, **overrides: Any) -> ExecutionInfo:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """Metadata injected by LangGraph Server (None in open-source runs)."""

    assistant_id: str
    graph_id: str
    user: BaseUser | None = None


class RunControl:
    """Run-scoped cooperative drain signal (safe to set from any thread)."""

    __slots__ = ("_drain_reason",)

    def __init__(self) -> None:
        self._drain_reason: str | None = None

    def request_drain(self, reason: str = "shutdown") -> None:
        """Ask the run to stop at the next super-step boundary."""
        self._drain_reason = reason

    @property
    def drain_requested(self) -> bool:
        return self._drain_reason is not None

    @property
    def drain_reason(self) -> str | None:
        return self._drain_reason


def _no_op_stream_writer(_: Any) -> None: ...


def _no_op_heartbeat() -> None: ...


class _RuntimeOverrides(TypedDict, Generic[ContextT], total=False):
    context: ContextT
    store: Any
    stream_writer: Callable[[Any], None]
    heartbeat: Callable[[], None]
    previous: Any
    execution_info: ExecutionInfo
    server_info: ServerInfo | None
    control: RunControl | None


@dataclass(**_DC_KWARGS)
class Runtime(Generic[ContextT]):
    """Run-scoped context and utilities injected into nodes as `runtime`."""

    context: ContextT = field(default=None)  # type: ignore[assignment]
    """Static context of the run (the `context=` argument)."""
    store: Any = field(default=None)
    """The graph's store, or None."""
    stream_writer: Callable[[Any], None] = field(default=_no_op_stream_writer)
    """Writes to the `custom` stream."""
    heartbeat: Callable[[], None] = field(default=_no_op_heartbeat)
    """Signals progress for an idle timeout (no-op otherwise)."""
    previous: Any = field(default=None)
    """Previous return value of the thread (functional API)."""
    execution_info: ExecutionInfo | None = field(default=None)
    """Metadata of the current node execution."""
    server_info: ServerInfo | None = field(default=None)
    """Metadata injected by LangGraph Server."""
    control: RunControl | None = field(default=None)
    """Run-scoped drain control."""

    def merge(self, other: Runtime[ContextT]) -> Runtime[ContextT]:
        """Values of `other`, falling back to this runtime's where `other` has none."""
        return Runtime(
            context=other.context or self.context,
            store=other.store or self.store,
            stream_writer=self.stream_writer
            if other.stream_writer is _no_op_stream_writer
            else other.stream_writer,
            heartbeat=self.heartbeat if other.heartbeat is _no_op_heartbeat else other.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control,
        )

    def override(self, **overrides: Unpack[_RuntimeOverrides[ContextT]]) -> Runtime[ContextT]:
        """A copy with the given fields replaced."""
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime[ContextT]:
        """A copy whose execution_info has the given fields replaced."""
        if self.execution_info is None:
            raise RuntimeError("Cannot patch execution_info before it has been set")
        return replace(self, execution_info=replace(self.execution_info, **overrides))

    @property
    def drain_requested(self) -> bool:
        return self.control is not None and self.control.drain_requested

    @property
    def drain_reason(self) -> str | None:
        return self.control.drain_reason if self.control is not None else None


DEFAULT_RUNTIME: Runtime[Any] = Runtime()

# _new_runtime(context, store, stream_writer, heartbeat, previous, execution_info,
#              server_info, control): a Runtime from its fields in order, without the
# frozen dataclass's keyword __init__ (a run makes one)
_new_runtime = slot_builder(Runtime)


def run_runtime(
    parent: Any,
    *,
    context: Any,
    store: Any,
    stream_writer: Callable[[Any], None] | None,
    configurable: dict[str, Any],
    control: RunControl | None,
) -> Runtime[Any]:
    """The Runtime of a run: its own context, store, writer, server info and drain control
    over the `parent` found in the config (the enclosing run's, or an object another layer
    put there: only its `context` is adopted)."""
    if not isinstance(parent, Runtime):
        parent = Runtime(context=getattr(parent, "context", None))
    # `parent.merge(Runtime(context=..., store=..., stream_writer=..., server_info=...,
    # control=...))`, field by field, without the intermediate runtime: its other fields
    # are the defaults, which merge replaces with the parent's
    own_control = control or parent.control or RunControl()
    writer = stream_writer or _no_op_stream_writer
    return _new_runtime(
        context or parent.context,
        store or parent.store,
        parent.stream_writer if writer is _no_op_stream_writer else writer,
        parent.heartbeat,
        parent.previous,
        parent.execution_info,
        _server_info(configurable) or parent.server_info,
        own_control or parent.control,
    )


def _server_info(configurable: dict[str, Any]) -> ServerInfo | None:
    """ServerInfo from what LangGraph Server puts in the configurable (None without)."""
    assistant_id = configurable.get("assistant_id")
    graph_id = configurable.get("graph_id")
    user = configurable.get("langgraph_auth_user")
    # (the server's proxy user passes as a user by its `identity`: the Protocol check
    # does not see attributes served by __getattr__)
    if user is not None and not (isinstance(user, BaseUser) or hasattr(user, "identity")):
        user = None
    if assistant_id is None and graph_id is None and user is None:
        return None
    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id else "",
        graph_id=str(graph_id) if graph_id else "",
        user=user,
    )


def get_runtime(context_schema: type[ContextT] | None = None) -> Runtime[ContextT]:
    """The runtime of the running node (`context_schema` only serves type hints)."""
    return get_config()[CONF].get(CONFIG_KEY_RUNTIME)
