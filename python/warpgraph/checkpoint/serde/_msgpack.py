"""Msgpack ext codes and the built-in decoding allowlist (same names as LangGraph's)."""

from __future__ import annotations

from collections.abc import Iterable

# warpgraph always decodes strictly: only allowlisted types are reconstructed.
STRICT_MSGPACK_ENABLED = True

EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
EXT_NUMPY_ARRAY = 6
EXT_DELTA_SNAPSHOT = 7

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

SAFE_MSGPACK_TYPES: frozenset[tuple[str, ...]] = frozenset(
    [
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("uuid", "UUID"),
        ("decimal", "Decimal"),
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("collections", "deque"),
        ("zoneinfo", "ZoneInfo"),
        ("re", "compile"),
        ("langchain_core.documents.base", "Document"),
    ]
    + [("ipaddress", f"IPv{v}{k}") for v in (4, 6) for k in ("Address", "Interface", "Network")]
    + [(m, p) for m in ("pathlib", "pathlib._local") for p in ("Path", "PosixPath", "WindowsPath")]
    + [(f"langchain_core.messages.{m}", n) for m, names in _LC_MESSAGES.items() for n in names]
    + [("langgraph.types", n) for n in LANGGRAPH_TYPES]
    + [("langgraph.store.base", n) for n in LANGGRAPH_STORE_TYPES]
)

# The only (module, name, method) that EXT_METHOD_SINGLE_ARG may call.
SAFE_MSGPACK_METHODS: frozenset[tuple[str, str, str]] = frozenset(
    {("datetime", "datetime", "fromisoformat")}
)

AllowedMsgpackModules = Iterable[tuple[str, ...] | type]
