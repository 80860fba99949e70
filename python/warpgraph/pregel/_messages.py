"""`stream_mode="messages"`: a langchain-core callback handler that turns chat-model tokens
and messages returned by nodes into `(message, metadata)` stream chunks.

Imported only by runs that stream messages (it needs langchain-core). A node's run is
recognised by its metadata (`langgraph_node` equal to the run's name); a chat model run
inside a task streams its tokens (`on_llm_new_token`) or, when it did not stream, its final
message (`on_llm_end`); a node's output messages are streamed at the node's end unless
they were streamed already or came in with the node's input (deduplicated by id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields, is_dataclass
from typing import Any, TypeVar
from uuid import UUID, uuid4

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk

from warpgraph._internal._config import filter_to_user_tags
from warpgraph._internal._constants import NS_SEP, PUSH
from warpgraph.constants import TAG_HIDDEN, TAG_NOSTREAM
from warpgraph.types import Command

try:
    from langchain_core.tracers._streaming import _StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _StreamingCallbackHandler = object  # type: ignore[assignment,misc]

__all__ = ("StreamMessagesHandler", "StreamMessagesHandlerV2", "graph_namespace")

T = TypeVar("T")
_Meta = tuple[tuple[str, ...], dict[str, Any]]


def _field_values(obj: Any) -> Sequence[Any]:
    """The top-level values of a state-like object (dict, pydantic model, dataclass)."""
    if isinstance(obj, dict):
        return list(obj.values())
    model_fields = getattr(type(obj), "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(obj, "model_dump"):
        return [getattr(obj, k) for k in model_fields]
    if is_dataclass(obj) and not isinstance(obj, type):
        return [getattr(obj, f.name) for f in fields(obj)]
    return ()


def graph_namespace(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """The namespace of the graph a task runs in (its own segment dropped, and one more per
    enclosing functional-API call, whose path is `(PUSH, caller path, index, True)`)."""
    parts = tuple(str(metadata["langgraph_checkpoint_ns"]).split(NS_SEP))
    path = metadata.get("langgraph_path", ())
    cut = 1
    while len(path) == 4 and path[0] == PUSH and path[-1] is True:
        cut += 1
        path = path[1]
    return parts[:-cut]


def _messages_in(value: Any) -> Iterator[BaseMessage]:
    """Messages in a node output: a message, a sequence of them, or a state-like object
    whose fields are messages or sequences of messages."""
    if isinstance(value, BaseMessage):
        yield value
        return
    if isinstance(value, Sequence) and not isinstance(value, str):
        for v in value:
            if isinstance(v, BaseMessage):
                yield v
        return
    for v in _field_values(value):
        if isinstance(v, BaseMessage):
            yield v
        elif isinstance(v, Sequence) and not isinstance(v, str):
            for item in v:
                if isinstance(item, BaseMessage):
                    yield item


class NamespacedStreamHandler(BaseCallbackHandler, _StreamingCallbackHandler):
    """A callback handler streaming one run's events as chunks: where they go (`stream`),
    whether runs inside subgraphs stream too (`subgraphs`), and the namespace of the graph
    that streams (`parent_ns`). What a streamed run yields passes through untouched."""

    run_inline = True  # called on the thread that emits the event (keeps chunk order)

    def __init__(
        self,
        stream: Callable[[tuple], None],
        subgraphs: bool,
        *,
        parent_ns: tuple[str, ...] | None = None,
    ) -> None:
        self.stream = stream
        self.subgraphs = subgraphs
        self.parent_ns = parent_ns

    def _in_scope(self, ns: tuple[str, ...]) -> bool:
        """Whether a run in the graph at namespace `ns` streams here."""
        return self.subgraphs or not ns or ns == self.parent_ns

    # -- streaming handler protocol: outputs pass through untouched
    def tap_output_iter(self, run_id: UUID, output: Iterator[T]) -> Iterator[T]:
        return output

    tap_output_aiter = tap_output_iter


class StreamMessagesHandler(NamespacedStreamHandler):
    """Streams messages of chat models and node outputs as `(ns, "messages", (msg, meta))`
    (constructed as `NamespacedStreamHandler`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.metadata: dict[UUID, _Meta] = {}
        self.seen: set[Any] = set()

    # -- helpers

    def _emit(self, meta: _Meta, message: BaseMessage, *, dedupe: bool = False) -> None:
        if dedupe and message.id in self.seen:
            return
        if message.id is None:
            message.id = str(uuid4())
        self.seen.add(message.id)
        self.stream((meta[0], "messages", (message, meta[1])))

    def _emit_output(self, meta: _Meta, value: Any, skip: Any = ()) -> None:
        """Emit the messages in a node output (a Command's update; each of a sequence
        holding Commands), except those of the type(s) `skip`."""
        if isinstance(value, Command):
            value = value.update
        elif isinstance(value, Sequence) and any(isinstance(v, Command) for v in value):
            for v in value:
                self._emit_output(meta, v, skip)
            return
        for m in _messages_in(value):
            if not isinstance(m, skip):
                self._emit(meta, m, dedupe=True)

    # -- chat models (langchain passes everything but the first two arguments by keyword)
    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> Any:
        metadata, tags = kw.get("metadata"), kw.get("tags")
        if not metadata or (tags and TAG_NOSTREAM in tags):
            return
        ns = graph_namespace(metadata)
        if not self._in_scope(ns):
            return
        user_tags = filter_to_user_tags(tags)
        if user_tags is not None:
            metadata["tags"] = user_tags
        self.metadata[kw["run_id"]] = (ns, metadata)

    def on_llm_new_token(
        self,
        token: str,
        *,
        chunk: ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> Any:
        if isinstance(chunk, ChatGenerationChunk) and (meta := self.metadata.get(run_id)):
            self._emit(meta, chunk.message)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        meta = self.metadata.pop(run_id, None)
        if meta is not None and response.generations and response.generations[0]:
            gen = response.generations[0][0]
            if isinstance(gen, ChatGeneration):
                self._emit(meta, gen.message, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self.metadata.pop(run_id, None)

    # -- nodes
    def on_chain_start(
        self,
        serialized: dict[str, Any],
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        if (
            not metadata
            or kwargs.get("name") != metadata.get("langgraph_node")
            or (tags and TAG_HIDDEN in tags)
        ):
            return
        ns = graph_namespace(metadata)
        if not self._in_scope(ns):
            return
        self.metadata[run_id] = (ns, metadata)
        # messages the node got as input are not news when it returns them
        for v in _field_values(inputs):
            items = [v] if isinstance(v, BaseMessage) else v
            if isinstance(items, Sequence) and not isinstance(items, str):
                self.seen.update(
                    m.id for m in items if isinstance(m, BaseMessage) and m.id is not None
                )

    def on_chain_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        meta = self.metadata.pop(run_id, None)
        if meta is not None:
            self._emit_output(meta, response)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self.metadata.pop(run_id, None)


try:
    from langchain_core.tracers._streaming import _V2StreamingCallbackHandler
except ImportError:  # pragma: no cover - older langchain-core
    _V2StreamingCallbackHandler = object  # type: ignore[assignment,misc]


class StreamMessagesHandlerV2(StreamMessagesHandler, _V2StreamingCallbackHandler):
    """The messages handler of v3 event streams: chat models report content-block protocol
    events (`on_stream_event`, forwarded with the run id in their metadata) instead of
    tokens, and tool messages returned by nodes are not streamed as chat messages."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._streamed: set[UUID] = set()  # chat model runs that sent protocol events

    def on_llm_new_token(self, token: str, **kwargs: Any) -> Any:
        return None  # tokens are not part of this protocol

    def _emit_output(self, meta: _Meta, value: Any, skip: Any = ()) -> None:
        from langchain_core.messages import ToolMessage

        super()._emit_output(meta, value, ToolMessage)  # (a node output's ToolMessages: not here)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> Any:
        meta = self.metadata.pop(run_id, None)
        streamed = run_id in self._streamed
        self._streamed.discard(run_id)
        if meta is None or not response.generations or not response.generations[0]:
            return
        gen = response.generations[0][0]
        if not isinstance(gen, ChatGeneration):
            return
        if streamed:  # its events went out already: only remember the message
            if gen.message.id is None:
                gen.message.id = str(uuid4())
            self.seen.add(gen.message.id)
        else:
            self._emit(meta, gen.message, dedupe=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> Any:
        self._streamed.discard(run_id)
        self.metadata.pop(run_id, None)

    def on_stream_event(self, event: dict[str, Any], *, run_id: UUID, **kwargs: Any) -> Any:
        meta = self.metadata.get(run_id)
        if meta is None:
            return
        if event.get("event") == "message-start":
            self._streamed.add(run_id)
            if message_id := event.get("message_id"):
                self.seen.add(message_id)  # the node's returned message is not news
        self.stream((meta[0], "messages", (event, {**meta[1], "run_id": str(run_id)})))
