"""`stream_mode="tools"`: a langchain-core callback handler reporting each tool call's
start, output deltas, end and error on the stream (payloads keyed by `tool_call_id`).

While a tool runs, `_tool_call_writer` holds a function that streams an output delta of
that call (langgraph-prebuilt's `ToolRuntime.emit_output_delta` reads it). Imported only by
runs that stream tools, and by langgraph-prebuilt's tool node.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, TypeVar
from uuid import UUID

from warpgraph.constants import TAG_NOSTREAM
from warpgraph.errors import GraphDrained, GraphInterrupt
from warpgraph.pregel._messages import NamespacedStreamHandler, graph_namespace

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]

__all__ = ("StreamToolCallHandler", "ToolCallWriter")

T = TypeVar("T")
ToolCallWriter = Callable[[Any], None]
"""Streams one output delta of the running tool call."""

_tool_call_writer: ContextVar[ToolCallWriter | None] = ContextVar(
    "warpgraph_tool_call_writer", default=None
)


def _forget(token: Token) -> None:
    try:
        _tool_call_writer.reset(token)
    except ValueError:  # ended in another context than it started in: nothing to undo
        pass


class StreamToolCallHandler(NamespacedStreamHandler):
    """Streams `tool-started` / `tool-output-delta` / `tool-finished` / `tool-error`
    (constructed as `NamespacedStreamHandler`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # on_tool_end gets no tool_call_id: the calls are found by run id
        self._calls: dict[UUID, tuple[tuple[str, ...], str, Token]] = {}

    def _scope(self, metadata: dict | None, tags: list[str] | None) -> tuple[str, ...] | None:
        """The namespace a call streams at, or None when it is not streamed here."""
        if not metadata or (tags and TAG_NOSTREAM in tags):
            return None
        ns = graph_namespace(metadata) if metadata.get("langgraph_checkpoint_ns") else ()
        return ns if self._in_scope(ns) else None

    def _put(self, ns: tuple[str, ...], payload: dict) -> None:
        self.stream((ns, "tools", payload))

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        ns = self._scope(metadata, tags)
        if ns is None:
            return
        call_id = kwargs.get("tool_call_id") or str(run_id)
        name = (serialized or {}).get("name") or kwargs.get("name") or ""

        def write(delta: Any) -> None:
            self._put(ns, {"event": "tool-output-delta", "tool_call_id": call_id, "delta": delta})

        self._calls[run_id] = (ns, call_id, _tool_call_writer.set(write))
        started: dict[str, Any] = {"event": "tool-started", "tool_call_id": call_id}
        started["tool_name"] = name
        if inputs is not None:
            started["input"] = inputs
        self._put(ns, started)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        call = self._calls.pop(run_id, None)
        if call is None:
            return
        ns, call_id, token = call
        _forget(token)
        self._put(ns, {"event": "tool-finished", "tool_call_id": call_id, "output": output})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        call = self._calls.pop(run_id, None)
        if call is None:
            return
        ns, call_id, token = call
        _forget(token)
        if isinstance(error, (GraphInterrupt, GraphDrained)):
            return  # paused, not failed: it runs again on resume
        self._put(ns, {"event": "tool-error", "tool_call_id": call_id, "message": str(error)})
