"""The built-in transformers of v3 streaming.

Always registered by `stream_events(version="v3")`: `ValuesTransformer` (`run.values`),
`MessagesTransformer` (`run.messages`: one chat-model stream per LLM call),
`LifecycleTransformer` (`run.lifecycle`: subgraph started / terminal payloads, also on the
wire) and `SubgraphTransformer` (`run.subgraphs`: one navigable handle per direct child).
Opt-in: `UpdatesTransformer`, `CustomTransformer`, `CheckpointsTransformer`,
`DebugTransformer`, `TasksTransformer` (each the raw payloads of its stream mode).
Every projection only holds events of the transformer's own scope (namespace); deeper ones
are reached through the subgraph handles.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from warpgraph._internal._compat import NotRequired, TypedDict
from warpgraph.errors import GraphDrained, GraphInterrupt
from warpgraph.stream._types import ProtocolEvent, StreamTransformer
from warpgraph.stream.run_stream import AsyncSubgraphRunStream, SubgraphRunStream
from warpgraph.stream.stream_channel import StreamChannel

if TYPE_CHECKING:
    from warpgraph.stream._mux import StreamMux

logger = logging.getLogger(__name__)

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]


class LifecyclePayload(TypedDict, total=False):
    """An item of `run.lifecycle` (and the data of a `lifecycle` protocol event)."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    cause: NotRequired[dict[str, Any]]
    error: NotRequired[str]


# ---------------------------------------------------------------- one stream mode, one scope
class _OwnScopeCapture(StreamTransformer):
    """Pushes the data of every `method` event emitted at exactly this scope to a local
    channel under the projection key `method`."""

    _native = True
    method: ClassVar[str]

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list: list[str] = list(scope)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "method" in cls.__dict__:
            cls.required_stream_modes = (cls.method,)

    def init(self) -> dict[str, Any]:
        return {self.method: self._log}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] == self.method and event["params"]["namespace"] == self._scope_list:
            self._accept(event["params"])
        return True

    def _accept(self, params: Any) -> None:
        self._log.push(params["data"])


class ValuesTransformer(_OwnScopeCapture):
    """`run.values`: the state after each step of this scope's graph."""

    method = "values"

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """What the run failed with (None while running or after a normal end)."""
        return self._log._error

    def _accept(self, params: Any) -> None:
        self._latest = params["data"]
        found = params.get("interrupts", ())
        if found:
            self._interrupted = True
            self._interrupts.extend(found)
        self._log.push(params["data"])


class CustomTransformer(_OwnScopeCapture):
    """`run.custom`: payloads written with the stream writer, in order."""

    method = "custom"


class UpdatesTransformer(_OwnScopeCapture):
    """`run.updates`: `{node: update}` after each step."""

    method = "updates"


class CheckpointsTransformer(_OwnScopeCapture):
    """`run.checkpoints`: a payload per checkpoint saved (needs a checkpointer)."""

    method = "checkpoints"


class DebugTransformer(_OwnScopeCapture):
    """`run.debug`: checkpoint / task / task_result debug envelopes."""

    method = "debug"


class TasksTransformer(_OwnScopeCapture):
    """`run.tasks`: task start and task result payloads."""

    method = "tasks"


# ---------------------------------------------------------------- messages
def _chat_stream_classes() -> tuple[type, type]:
    from langchain_core.language_models.chat_model_stream import (
        AsyncChatModelStream,
        ChatModelStream,
    )

    return ChatModelStream, AsyncChatModelStream


class MessagesTransformer(StreamTransformer):
    """`run.messages`: one `ChatModelStream` (`AsyncChatModelStream` on the async lane) per
    chat-model call of this scope, pushed at its `message-start`.

    A messages event carries `(payload, metadata)`: a protocol event dict (routed to its
    stream by `metadata["run_id"]`; tool-role messages are skipped) or a finished message a
    node returned (replayed as a complete event lifecycle). Legacy `AIMessageChunk`s and
    `ToolMessage`s are ignored.
    """

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[str, Any] = {}
        self._ignored_runs: set[str] = set()
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        self._scope_list: list[str] = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn = fn

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn

    def _make_stream(self, *, namespace: list[str], node: str | None, message_id: str | None):
        """A chat-model stream driven by the bound pump (async if an async pump is bound;
        unbound, as when events are dispatched by hand, an async one)."""
        sync_cls, async_cls = _chat_stream_classes()
        if self._apump_fn is None and self._pump_fn is not None:
            stream = sync_cls(namespace=namespace, node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
            return stream
        stream = async_cls(namespace=namespace, node=node, message_id=message_id)
        if self._apump_fn is not None:
            stream.set_arequest_more(self._apump_fn)
        return stream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages":
            return True
        params = event["params"]
        if params["namespace"] != self._scope_list:
            return True
        payload, metadata = params["data"]
        node = metadata.get("langgraph_node")
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route_event(payload, run_id, node)
        else:
            from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage

            if isinstance(payload, BaseMessage) and not isinstance(
                payload, (AIMessageChunk, ToolMessage)
            ):
                self._replay_message(payload, node)
        return True

    def _route_event(self, data: dict[str, Any], run_id: str, node: str | None) -> None:
        kind = data.get("event")
        if kind == "message-start":
            if data.get("role") == "tool":
                self._ignored_runs.add(run_id)
                return
            message_id = data.get("message_id")
            stream = self._make_stream(
                namespace=[],
                node=node,
                message_id=None if message_id is None else str(message_id),
            )
            self._by_run[run_id] = stream
            self._log.push(stream)
            stream.dispatch(data)
            return
        if run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
            return
        stream = self._by_run.get(run_id)
        if stream is not None:
            stream.dispatch(data)
            if kind == "message-finish":
                del self._by_run[run_id]

    def _replay_message(self, message: Any, node: str | None) -> None:
        from langchain_core.language_models._compat_bridge import message_to_events

        stream = self._make_stream(namespace=[], node=node, message_id=message.id)
        for data in message_to_events(message, message_id=message.id):
            stream.dispatch(data)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in self._by_run.values():
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()


# ---------------------------------------------------------------- subgraph lifecycle
def _split_segment(segment: str) -> tuple[str, str | None]:
    """`"node:task_id"` -> `("node", "task_id")`; no `:` -> `(segment, None)`."""
    name, colon, task_id = segment.partition(":")
    return name, (task_id if colon else None)


def _exception_status(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    if isinstance(err, GraphDrained):
        return "drained", None
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def _result_status(result: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    """A task result's outcome for the subgraph it ran (interrupts win over an error)."""
    if result.get("interrupts"):
        return "interrupted", None
    if result.get("error"):
        return "failed", str(result["error"])
    return "completed", None


def _tool_call_id(task_input: Any) -> str | None:
    """The tool call a task runs: a `tool_call_with_context` input, or the first of a list
    of tool-call dicts (the batched shape)."""
    if isinstance(task_input, dict):
        call = task_input.get("tool_call")
        if isinstance(call, dict) and isinstance(call.get("id"), str):
            return call["id"]
        return None
    if isinstance(task_input, list):
        for call in task_input:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                return call["id"]
    return None


class _TasksLifecycleBase(StreamTransformer):
    """Infers subgraph lifecycles from `tasks` events (and keeps those off the main log).

    A tracked namespace starts at its first task event and ends when the parent's result
    for the task named in its last segment (`node:<task_id>`) arrives, or at the end of the
    run. Subclasses decide which namespaces they track (`_should_track`) and what a start
    (`_on_started(ns, graph_name, trigger_call_id)`, with `self._pending_cause` set) and an
    end (`_on_terminal(ns, status, error)`) do. A nested run whose task metadata carries an
    `lc_agent_name` is a subagent: it is named after that and its `cause` is the tool call
    of the parent task that spawned it.
    """

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._seen: set[tuple[str, ...]] = set()
        self._open: dict[tuple[str, ...], str] = {}  # namespace -> id of the parent's task
        self._lc_by_ns: dict[tuple[str, ...], str | None] = {}
        self._pending_tool_calls: dict[str, str] = {}  # task id -> tool call id
        self._pending_cause: dict[str, Any] | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        for ns, status, error in self._read_tasks_event(event):
            self._on_terminal(ns, status, error)
        return False

    def _read_tasks_event(
        self, event: ProtocolEvent
    ) -> list[tuple[tuple[str, ...], SubgraphStatus, str | None]]:
        """Book a tasks event; the namespaces it ends, with their outcome."""
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            return self._closed_by(ns, data)
        self._lc_by_ns.setdefault(ns, (data.get("metadata") or {}).get("lc_agent_name"))
        task_id = data.get("id")
        if isinstance(task_id, str):
            call_id = _tool_call_id(data.get("input"))
            if call_id is not None:
                self._pending_tool_calls[task_id] = call_id
        self._maybe_start(ns, data)
        return []

    def _maybe_start(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns in self._seen or not self._should_track(ns):
            return
        self._seen.add(ns)
        name, trigger = _split_segment(ns[-1])
        agent = (data.get("metadata") or {}).get("lc_agent_name")
        cause = None
        if agent is not None and trigger is not None:
            call_id = self._pending_tool_calls.get(trigger)
            if call_id:
                cause = {"type": "toolCall", "tool_call_id": str(call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent if agent is not None else (name or None), trigger)
        if trigger is not None:
            self._open[ns] = trigger

    def _closed_by(
        self, ns: tuple[str, ...], result: dict[str, Any]
    ) -> list[tuple[tuple[str, ...], SubgraphStatus, str | None]]:
        task_id = result.get("id")
        if not task_id:
            return []
        ended = [
            child
            for child, parent_task in self._open.items()
            if parent_task == task_id and child[:-1] == ns
        ]
        out = []
        for child in ended:
            del self._open[child]
            out.append((child, *_result_status(result)))
        return out

    def finalize(self) -> None:
        for ns in list(self._open):
            self._on_terminal(ns, "completed", None)
        self._open.clear()

    def fail(self, err: BaseException) -> None:
        status, error = _exception_status(err)
        for ns in list(self._open):
            self._on_terminal(ns, status, error)
        self._open.clear()


class LifecycleTransformer(_TasksLifecycleBase):
    """`run.lifecycle`: started / terminal payloads of the subgraphs at every depth below
    this scope; the channel is named, so they are `lifecycle` events of the main log too."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if trigger_call_id is None:  # no task id: no result can close it; no start either
            return
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)


class SubgraphTransformer(_TasksLifecycleBase):
    """`run.subgraphs`: a `SubgraphRunStream` per direct child subgraph, over a child
    mini-mux (same factories, the child's scope) that gets every event of that subtree;
    grandchildren appear on the child handle's own `subgraphs`."""

    _native = True
    supports_sync = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._handles: dict[tuple[str, ...], Any] = {}
        self._mux: StreamMux | None = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(
        self, ns: tuple[str, ...], graph_name: str | None, trigger_call_id: str | None
    ) -> None:
        if self._mux is None:
            return
        try:
            child = self._mux._make_child(ns)
        except RuntimeError:  # built from instances: nothing to clone
            return
        cls = AsyncSubgraphRunStream if child.is_async else SubgraphRunStream
        handle = cls(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    # ---- terminal transitions
    def _first_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None):
        """The handle at `ns` if this is its first terminal status (now recorded on it)."""
        handle = self._handles.get(ns)
        if handle is None or not _mark_terminal(handle, status, error):
            return None
        if handle._mux is None or handle._mux._events._closed:
            return None
        return handle

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        handle = self._first_terminal(ns, status, error)
        if handle is None:
            return
        if status == "failed":
            handle._mux.fail(RuntimeError(error or "Subgraph failed"))
        else:
            handle._mux.close()

    async def _aon_terminal(
        self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None
    ) -> None:
        handle = self._first_terminal(ns, status, error)
        if handle is None:
            return
        if status == "failed":
            await handle._mux.afail(RuntimeError(error or "Subgraph failed"))
        else:
            await handle._mux.aclose()

    # ---- events
    def _target(self, event: ProtocolEvent) -> Any:
        """The live handle whose subtree `event` belongs to."""
        ns = event["params"]["namespace"]
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(tuple(ns[: depth + 1]))
        if handle is None or handle._mux is None or handle._mux._events._closed:
            return None
        return handle

    def process(self, event: ProtocolEvent) -> bool:
        keep = super().process(event)  # a start creates the handle before we forward
        handle = self._target(event)
        if handle is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return keep

    async def aprocess(self, event: ProtocolEvent) -> bool:
        keep = True
        if event["method"] == "tasks":
            keep = False
            for ns, status, error in self._read_tasks_event(event):
                await self._aon_terminal(ns, status, error)
        handle = self._target(event)
        if handle is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return keep

    # ---- end of the run
    def _still_open(self) -> list[tuple[str, ...]]:
        pending = list(self._open)
        self._open.clear()
        return pending + [ns for ns, h in self._handles.items() if ns not in pending]

    def finalize(self) -> None:
        first: BaseException | None = None
        for ns in self._still_open():
            try:
                self._on_terminal(ns, "completed", None)
            except BaseException as exc:  # noqa: BLE001 - every handle must be closed
                first = first or exc
        if first is not None:
            raise first

    async def afinalize(self) -> None:
        first: BaseException | None = None
        for ns in self._still_open():
            try:
                await self._aon_terminal(ns, "completed", None)
            except BaseException as exc:  # noqa: BLE001 - every handle must be closed
                first = first or exc
        if first is not None:
            raise first

    def _failing(self, err: BaseException) -> list[Any]:
        status, error = _exception_status(err)
        self._open.clear()
        out = []
        for handle in self._handles.values():
            _mark_terminal(handle, status, error)
            if handle._mux is not None and not handle._mux._events._closed:
                out.append(handle)
        return out

    def fail(self, err: BaseException) -> None:
        for handle in self._failing(err):
            try:
                handle._mux.fail(err)
            except Exception:
                logger.warning(
                    "Error failing the subgraph stream at %s", handle.path, exc_info=True
                )

    async def afail(self, err: BaseException) -> None:
        for handle in self._failing(err):
            try:
                await handle._mux.afail(err)
            except Exception:
                logger.warning(
                    "Error failing the subgraph stream at %s", handle.path, exc_info=True
                )


def _mark_terminal(handle: Any, status: SubgraphStatus, error: str | None) -> bool:
    """Record `status` on a handle that has none yet; False if it already ended."""
    if handle._seen_terminal:
        return False
    handle.status = status
    if error is not None and handle.error is None:
        handle.error = error
    handle._seen_terminal = True
    return True
