"""Exceptions raised by warpgraph (the same classes, hierarchy and messages as `langgraph.errors`)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from warpgraph.warnings import (
    LangGraphDeprecatedSinceV10,
    LangGraphDeprecatedSinceV11,
    LangGraphDeprecationWarning,
)

if TYPE_CHECKING:
    from warpgraph.types import Command, Interrupt

__all__ = (  # LangGraph's names exactly; CheckpointConflictError is importable, not listed
    "EmptyChannelError",
    "EmptyInputError",
    "ErrorCode",
    "GraphBubbleUp",
    "GraphDrained",
    "GraphInterrupt",
    "GraphRecursionError",
    "InvalidUpdateError",
    "NodeCancelledError",
    "NodeError",
    "NodeInterrupt",
    "NodeTimeoutError",
    "ParentCommand",
    "TaskNotFound",
    "UnknownInterruptError",
    "is_invalid_resume",
)

_TROUBLESHOOTING_BASE = "https://docs.langchain.com/oss/python/langgraph/errors/"


class ErrorCode(Enum):
    """Codes that name a troubleshooting page."""

    GRAPH_RECURSION_LIMIT = "GRAPH_RECURSION_LIMIT"
    INVALID_CONCURRENT_GRAPH_UPDATE = "INVALID_CONCURRENT_GRAPH_UPDATE"
    INVALID_GRAPH_NODE_RETURN_VALUE = "INVALID_GRAPH_NODE_RETURN_VALUE"
    MULTIPLE_SUBGRAPHS = "MULTIPLE_SUBGRAPHS"
    INVALID_CHAT_HISTORY = "INVALID_CHAT_HISTORY"


def create_error_message(*, message: str, error_code: ErrorCode) -> str:
    """`message` followed by a line pointing at the troubleshooting page of `error_code`."""
    return f"{message}\nFor troubleshooting, visit: {_TROUBLESHOOTING_BASE}{error_code.value}"


class EmptyChannelError(Exception):
    """Raised when reading a channel that holds no value yet."""


class CheckpointConflictError(RuntimeError):
    """A fenced checkpoint write found another head checkpoint than its run expected:
    another run appended to the same thread / namespace concurrently (not in LangGraph)."""

    def __init__(
        self, thread_id: str, checkpoint_ns: str, expected: str | None, actual: str | None
    ) -> None:
        self.thread_id = thread_id
        self.checkpoint_ns = checkpoint_ns
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"Checkpoint conflict on thread {thread_id!r} (namespace {checkpoint_ns!r}): "
            f"expected head checkpoint {expected!r} but the latest is {actual!r}; "
            "another run wrote to this thread concurrently."
        )

    def __reduce__(self) -> Any:
        return (type(self), (self.thread_id, self.checkpoint_ns, self.expected, self.actual))


class GraphBubbleUp(Exception):
    """Base of the control-flow exceptions that travel up through nodes and subgraphs."""


class GraphDrained(GraphBubbleUp):
    """The run stopped at a super-step boundary because a drain was requested."""

    def __init__(self, reason: str = "shutdown") -> None:
        self.reason = reason
        super().__init__(f"Graph drained: {reason}")


class GraphRecursionError(RecursionError):
    """The graph ran more super-steps than the config's `recursion_limit` allows."""


class InvalidUpdateError(Exception):
    """A channel received an invalid set of updates."""


class GraphInterrupt(GraphBubbleUp):
    """Carries the interrupts raised in a task; `args[0]` is the sequence of `Interrupt`s."""

    def __init__(self, interrupts: Sequence[Interrupt] = ()) -> None:
        super().__init__(interrupts)


# (the names this package used before `warpgraph.warnings` existed)
_LangGraphDeprecation = LangGraphDeprecationWarning
_DeprecatedSinceV10 = LangGraphDeprecatedSinceV10
_DeprecatedSinceV11 = LangGraphDeprecatedSinceV11


class NodeInterrupt(GraphInterrupt):
    """Deprecated: raised by a node to interrupt; use `warpgraph.types.interrupt` instead."""

    def __init__(self, value: Any, id: str | None = None) -> None:
        from warpgraph.types import Interrupt

        warnings.warn(
            "NodeInterrupt is deprecated. Please use `langgraph.types.interrupt` instead.",
            _DeprecatedSinceV10,
            stacklevel=2,
        )
        item = Interrupt(value=value) if id is None else Interrupt(value=value, id=id)
        super().__init__([item])


class ParentCommand(GraphBubbleUp):
    """Carries a `Command(graph=Command.PARENT)` up to the parent graph; `args[0]` is it."""

    args: tuple[Command]

    def __init__(self, command: Command) -> None:
        super().__init__(command)


class EmptyInputError(Exception):
    """The graph received an empty input."""


class TaskNotFound(Exception):
    """The executor could not find a task (distributed mode)."""


_RESUME_MISMATCH_REASONS = ("not_pending", "empty_map", "ambiguous")


class UnknownInterruptError(Exception):
    """Strict resume mode: a resume does not match the pending interrupts.

    `reason` is one of "not_pending", "empty_map" or "ambiguous"; `interrupt_ids` are the
    unknown ids the resume named, `pending_ids` the interrupts still waiting.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: Literal["not_pending", "empty_map", "ambiguous"],
        interrupt_ids: Sequence[str] = (),
        pending_ids: Sequence[str] = (),
    ) -> None:
        if reason not in _RESUME_MISMATCH_REASONS:
            raise ValueError(f"unknown resume mismatch reason {reason!r}")
        super().__init__(message)
        self.reason, self.interrupt_ids, self.pending_ids = (
            reason,
            tuple(interrupt_ids),
            tuple(pending_ids),
        )


@dataclass(frozen=True, slots=True)
class NodeError:
    """Failure context handed to a node's error handler."""

    node: str
    """Name of the node that failed."""
    error: BaseException
    """The exception it raised."""


class NodeCancelledError(Exception):
    """A node body raised `asyncio.CancelledError` itself (reported as a node failure)."""

    node: str

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


# kind -> message template; {limit} is the timeout that ran out
_TIMEOUT_MESSAGES = {
    "idle": (
        "Node '{node}' exceeded its idle timeout of {limit:.3f}s "
        "without making progress (elapsed: {elapsed:.3f}s)."
    ),
    "run": "Node '{node}' exceeded its run timeout of {limit:.3f}s (elapsed: {elapsed:.3f}s).",
}


TimeoutKind = Literal["idle", "run"]
"""Which limit of a TimeoutPolicy ran out."""


class NodeTimeoutError(Exception):
    """A node exceeded its idle or run timeout (not an OSError, so the default retry retries).

    `timeout` is the limit that ran out (`idle_timeout` or `run_timeout`, per `kind`).
    """

    def __init__(
        self,
        node: str,
        elapsed: float,
        *,
        kind: TimeoutKind,
        idle_timeout: float | None = None,
        run_timeout: float | None = None,
    ) -> None:
        if kind not in _TIMEOUT_MESSAGES:
            raise ValueError("kind must be 'idle' or 'run'")
        limit = idle_timeout if kind == "idle" else run_timeout
        if limit is None:
            raise ValueError(f"{kind}_timeout is required when kind='{kind}'")
        super().__init__(_TIMEOUT_MESSAGES[kind].format(node=node, limit=limit, elapsed=elapsed))
        self.node, self.elapsed, self.kind, self.timeout = node, elapsed, kind, limit
        self.idle_timeout, self.run_timeout = idle_timeout, run_timeout


_INVALID_RESUME_ATTR = "_langgraph_invalid_resume"


def _mark_invalid_resume(error: BaseException) -> None:
    """Flag `error` as caused by a resume value that failed validation."""
    setattr(error, _INVALID_RESUME_ATTR, True)


def is_invalid_resume(error: BaseException) -> bool:
    """Whether `error` was raised because a resume value failed `response_schema` validation."""
    return getattr(error, _INVALID_RESUME_ATTR, False) is True
