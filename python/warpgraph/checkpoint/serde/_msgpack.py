"""Msgpack ext codes and the built-in decoding allowlist (same names as LangGraph's)."""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import (
    IPv4Address,
    IPv4Interface,
    IPv4Network,
    IPv6Address,
    IPv6Interface,
    IPv6Network,
)

# warpgraph always decodes strictly: only allowlisted types are reconstructed.
STRICT_MSGPACK_ENABLED = True

# msgpack ext type codes, 0..7 in this order (the wire format of LangGraph's serializer)
(
    EXT_CONSTRUCTOR_SINGLE_ARG,
    EXT_CONSTRUCTOR_POS_ARGS,
    EXT_CONSTRUCTOR_KW_ARGS,
    EXT_METHOD_SINGLE_ARG,
    EXT_PYDANTIC_V1,
    EXT_PYDANTIC_V2,
    EXT_NUMPY_ARRAY,
    EXT_DELTA_SNAPSHOT,
) = range(8)

_LC_MESSAGES = {
    "base": ("BaseMessage", "BaseMessageChunk"),
    "human": ("HumanMessage", "HumanMessageChunk"),
    "ai": ("AIMessage", "AIMessageChunk"),
    "system": ("SystemMessage", "SystemMessageChunk"),
    "chat": ("ChatMessage", "ChatMessageChunk"),
    "tool": ("ToolMessage", "ToolMessageChunk"),
    "function": ("FunctionMessage", "FunctionMessageChunk"),
    "modifier": ("RemoveMessage",),
}

# langgraph.types names that decode to the warpgraph.types class of the same name.
LANGGRAPH_TYPES = (
    "Send",
    "TimeoutPolicy",
    "Interrupt",
    "Command",
    "StateSnapshot",
    "PregelTask",
    "Overwrite",
)
LANGGRAPH_STORE_TYPES = ("Item", "GetOp")

# module -> names of the plain types any checkpoint may contain
_SAFE_BY_MODULE: dict[str, tuple[str, ...]] = {
    "datetime": ("datetime", "date", "time", "timedelta", "timezone"),
    "uuid": ("UUID",),
    "decimal": ("Decimal",),
    "builtins": ("set", "frozenset"),
    "collections": ("deque",),
    "zoneinfo": ("ZoneInfo",),
    "re": ("compile",),
    "langchain_core.documents.base": ("Document",),
}

# the ipaddress classes (encoded as their string) and the pathlib names a path decodes from
IP_TYPES = (IPv4Address, IPv4Interface, IPv4Network, IPv6Address, IPv6Interface, IPv6Network)
PATH_NAMES = [
    (m, p) for m in ("pathlib", "pathlib._local") for p in ("Path", "PosixPath", "WindowsPath")
]

SAFE_MSGPACK_TYPES: frozenset[tuple[str, ...]] = frozenset(
    [(module, name) for module, names in _SAFE_BY_MODULE.items() for name in names]
    + [("ipaddress", t.__name__) for t in IP_TYPES]
    + PATH_NAMES
    + [(f"langchain_core.messages.{m}", n) for m, names in _LC_MESSAGES.items() for n in names]
    + [("langgraph.types", n) for n in LANGGRAPH_TYPES]
    + [("langgraph.store.base", n) for n in LANGGRAPH_STORE_TYPES]
)

# The only (module, name, method) that EXT_METHOD_SINGLE_ARG may call.
SAFE_MSGPACK_METHODS: frozenset[tuple[str, str, str]] = frozenset(
    {("datetime", "datetime", "fromisoformat")}
)

AllowedMsgpackModules = Iterable[tuple[str, ...] | type]
