"""`add_messages` reducer and `MessagesState`.

With langchain-core installed, messages are coerced to langchain message objects exactly
like LangGraph does. Without it, dict messages are kept as dicts (`{"role"|"type",
"content", "id"}`); strings and `(role, content)` tuples become such dicts, and a dict with
`"type": "remove"` (or `"role": "remove"`) plays the part of `RemoveMessage`.
langchain-core is imported lazily, on the first call (never at import), so `MessagesState`
annotates `list[Any]` where LangGraph has `list[AnyMessage]`.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

from warpgraph._internal._compat import TypedDict
from warpgraph._internal._lc_messages import MESSAGES_DELTA_REDUCER, lc_messages
from warpgraph.graph.state import StateGraph
from warpgraph.warnings import LangGraphDeprecatedSinceV10

__all__ = ("REMOVE_ALL_MESSAGES", "MessageGraph", "MessagesState", "add_messages", "push_message")

REMOVE_ALL_MESSAGES = "__remove_all__"

Messages = Any


def _with_both(func: Callable[..., Messages]) -> Callable[..., Any]:
    def add_messages(left: Messages = None, right: Messages = None, **kwargs: Any) -> Any:
        if left is not None and right is not None:
            return func(left, right, **kwargs)
        if left is not None or right is not None:
            raise ValueError(
                "Must specify non-null arguments for both 'left' and 'right'. Only "
                f"received: '{'left' if left else 'right'}'."
            )
        return partial(func, **kwargs)

    add_messages.__doc__ = func.__doc__
    add_messages.__name__ = func.__name__
    add_messages.__qualname__ = func.__qualname__
    return add_messages


# ---------------------------------------------------------------- langchain messages


def _lc_coerce(lc: Any, messages: list) -> list:
    plain = lc.BaseMessage
    chunk = lc.BaseMessageChunk
    if all(issubclass(t, plain) and not issubclass(t, chunk) for t in set(map(type, messages))):
        return messages
    return [lc.message_chunk_to_message(m) for m in lc.convert_to_messages(messages)]


class _LcOps:
    """Message access for langchain message objects."""

    def __init__(self, lc: Any) -> None:
        self.lc = lc

    def coerce(self, messages: list) -> list:
        return _lc_coerce(self.lc, messages)

    @staticmethod
    def get_id(m: Any) -> Any:
        return m.id

    @staticmethod
    def with_id(m: Any) -> Any:
        if m.id is None:
            m.id = str(uuid.uuid4())
        return m

    def is_remove(self, m: Any) -> bool:
        return isinstance(m, self.lc.RemoveMessage)


# ---------------------------------------------------------------- dict messages


def _dict_message(m: Any) -> dict:
    if isinstance(m, dict):
        return m
    if isinstance(m, str):
        return {"role": "user", "content": m}
    if isinstance(m, (list, tuple)) and len(m) == 2 and isinstance(m[0], str):
        return {"role": m[0], "content": m[1]}
    raise NotImplementedError(
        f"Unsupported message type: {type(m).__name__}. Without langchain-core installed, "
        "messages must be dicts, strings or (role, content) tuples."
    )


class _DictOps:
    """Message access for plain dict messages (no langchain-core)."""

    @staticmethod
    def coerce(messages: list) -> list:
        return [_dict_message(m) for m in messages]

    @staticmethod
    def get_id(m: dict) -> Any:
        return m.get("id")

    @staticmethod
    def with_id(m: dict) -> dict:
        if m.get("id") is None:
            return {**m, "id": str(uuid.uuid4())}
        return m

    @staticmethod
    def is_remove(m: dict) -> bool:
        return m.get("type") == "remove" or m.get("role") == "remove"


def _merge(ops: Any, left: list, right: list) -> list:
    left = [ops.with_id(m) for m in ops.coerce(left)]
    right = [ops.with_id(m) for m in ops.coerce(right)]
    remove_all = None
    for idx, m in enumerate(right):
        if ops.is_remove(m) and ops.get_id(m) == REMOVE_ALL_MESSAGES:
            remove_all = idx
    if remove_all is not None:
        return right[remove_all + 1 :]
    merged = list(left)
    index = {ops.get_id(m): i for i, m in enumerate(merged)}
    removed: set[Any] = set()
    for m in right:
        mid = ops.get_id(m)
        existing = index.get(mid)
        if existing is not None:
            if ops.is_remove(m):
                removed.add(mid)
            else:
                removed.discard(mid)
                merged[existing] = m
        else:
            if ops.is_remove(m):
                raise ValueError(
                    f"Attempting to delete a message with an ID that doesn't exist ('{mid}')"
                )
            index[mid] = len(merged)
            merged.append(m)
    if removed:
        merged = [m for m in merged if ops.get_id(m) not in removed]
    return merged


def _messages_delta_reducer(state: list, writes: list) -> list:
    """Batch reducer for a delta channel of messages (LangGraph's experimental one).

    Folds every write of a step at once: a write that is a list adds its items, anything else
    is one message; the last remove-all marker drops what came before it; then by id, a
    remove deletes (an unknown id is ignored), a known id replaces in place, a new id or
    none appends. Ids are not assigned and chunks are not converted. It is batching-invariant:
    folding `xs` then `ys` equals folding `xs + ys`.
    """
    flat: list = []
    for w in writes:
        if isinstance(w, list):
            flat.extend(w)
        else:
            flat.append(w)
    lc = lc_messages()
    if lc is not None:
        ops: Any = _LcOps(lc)
        as_messages = lc.convert_to_messages
        current = state if state and isinstance(state[0], lc.BaseMessage) else as_messages(state)
        incoming = as_messages(flat)
    else:
        ops = _DictOps
        current, incoming = _DictOps.coerce(state), _DictOps.coerce(flat)
    for idx in range(len(incoming) - 1, -1, -1):
        m = incoming[idx]
        if ops.is_remove(m) and ops.get_id(m) == REMOVE_ALL_MESSAGES:
            current, incoming = [], incoming[idx + 1 :]
            break
    out: list = list(current)
    where = {mid: i for i, m in enumerate(out) if (mid := ops.get_id(m)) is not None}
    for m in incoming:
        mid = ops.get_id(m)
        if mid is None:
            out.append(m)
        elif ops.is_remove(m):
            if (i := where.pop(mid, None)) is not None:
                out[i] = _GONE
        elif mid in where:
            out[where[mid]] = m
        else:
            where[mid] = len(out)
            out.append(m)
    return [m for m in out if m is not _GONE]


setattr(_messages_delta_reducer, MESSAGES_DELTA_REDUCER, True)


_GONE = object()


@_with_both
def add_messages(
    left: Messages,
    right: Messages,
    *,
    format: Literal["langchain-openai"] | None = None,
) -> Messages:
    """Merge two lists of messages, replacing messages of `left` that share an id.

    Messages without an id get a uuid4; a remove message deletes the message with its id;
    a remove message with id REMOVE_ALL_MESSAGES drops everything before it.
    `add_messages(format="langchain-openai")` returns a configured reducer.
    """
    if not isinstance(left, list):
        left = [left]
    if not isinstance(right, list):
        right = [right]
    lc = lc_messages()
    merged = _merge(_LcOps(lc) if lc is not None else _DictOps, left, right)
    if format == "langchain-openai":
        return _format_messages(merged)
    if format:
        raise ValueError(f"Unrecognized {format=}. Expected one of 'langchain-openai', None.")
    return merged


def _format_messages(messages: list) -> list:
    lc = lc_messages()
    convert = getattr(lc, "convert_to_openai_messages", None) if lc is not None else None
    if convert is None:
        warnings.warn(
            "Must have langchain-core>=0.3.11 installed to use automatic message "
            "formatting (format='langchain-openai'). Please update your langchain-core "
            "version or remove the 'format' flag. Returning un-formatted "
            "messages."
        )
        return list(messages)
    return lc.convert_to_messages(convert(messages))


class MessagesState(TypedDict):
    """A state with one `messages` key merged by `add_messages`."""

    messages: Annotated[list[Any], add_messages]


class MessageGraph(StateGraph):
    """Deprecated: a StateGraph whose whole state is a list of messages."""

    def __init__(self) -> None:
        warnings.warn(
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. "
            "Please use StateGraph with a `messages` key instead.",
            category=LangGraphDeprecatedSinceV10,
            stacklevel=2,
        )
        super().__init__(Annotated[list[Any], add_messages])


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """From inside a node: hand `message` (it needs an id) to the run's "messages" stream
    now, and write it to `state_key` (unless None). Returns the message object."""
    from warpgraph._internal._constants import CONF, CONFIG_KEY_SEND
    from warpgraph.config import get_config

    config = get_config()
    lc = lc_messages()
    if lc is None:
        raise ImportError("push_message needs langchain-core")
    message = next(iter(lc.convert_to_messages([message])))
    if message.id is None:
        raise ValueError("Message ID is required")
    callbacks = config.get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks if isinstance(callbacks, list) else ())
    if handlers:
        from warpgraph.pregel._messages import StreamMessagesHandler, graph_namespace

        metadata = config["metadata"]
        for h in handlers:
            if isinstance(h, StreamMessagesHandler):
                ns = graph_namespace(metadata)
                if h.subgraphs or not ns or ns == h.parent_ns:
                    h._emit((ns, metadata), message)
    if state_key:
        config[CONF][CONFIG_KEY_SEND]([(state_key, message)])
    return message
