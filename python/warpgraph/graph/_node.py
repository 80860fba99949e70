"""Node specs kept by the StateGraph builder, and what is inferred from a node callable."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from inspect import isfunction, ismethod, signature
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = ("StateNodeSpec", "infer_node_hints", "node_name")


@dataclass(slots=True)
class StateNodeSpec:
    """One `add_node` call: the runnable and its options."""

    runnable: Any
    metadata: dict[str, Any] | None
    input_schema: Any
    retry_policy: Any | Sequence[Any] | None
    cache_policy: Any | None = None
    ends: tuple[str, ...] | dict[str, str] | None = ()
    defer: bool = False
    timeout: Any | None = None
    trace_policy: Any | None = None
    is_error_handler: bool = False
    """The node was made for an `error_handler=` (never routed to a handler itself)."""
    error_handler_node: str | None = None
    """The name of the node handling this node's failures."""


def node_name(action: Any) -> str:
    """The name `add_node(action)` gives a node: a runnable's name or `__name__`."""
    get_name = getattr(action, "get_name", None)
    if callable(get_name) and not isfunction(action):
        try:
            name = get_name()
        except TypeError:
            name = None
        if isinstance(name, str):
            return name
    if hasattr(action, "invoke") and isinstance(getattr(action, "name", None), str):
        return action.name
    return plain_name(action)


def plain_name(action: Any) -> str:
    """`__name__`, else the class name (what `add_sequence` uses)."""
    name = getattr(action, "__name__", None)
    if isinstance(name, str):
        return name
    return action.__class__.__name__


def _is_introspectable(action: Any) -> bool:
    return (
        isfunction(action) or ismethod(action) or ismethod(getattr(action, "__call__", None))  # noqa: B004 - bound __call__
    )


def _command_ends(rtn: Any) -> tuple[str, ...]:
    """`-> Command[Literal["a", "b"]]` (possibly inside a Union) -> ("a", "b")."""
    from warpgraph.types import Command

    if get_origin(rtn) is Union:
        for arg in get_args(rtn):
            if get_origin(arg) is Command:
                rtn = arg
                break
    if get_origin(rtn) is Command:
        args = get_args(rtn)
        if args and get_origin(args[0]) is Literal:
            return tuple(get_args(args[0]))
    return ()


def infer_node_hints(action: Any, want_input: bool) -> tuple[Any | None, tuple[str, ...]]:
    """`(input schema from the first parameter's class, Command[Literal] destinations)`."""
    if not _is_introspectable(action):
        return None, ()
    inferred = None
    ends: tuple[str, ...] = ()
    try:
        hints = get_type_hints(action.__call__) or get_type_hints(action)
        if not hints:
            return None, ()
        if want_input:
            first = next(iter(signature(action).parameters))
            hint = hints.get(first)
            if isinstance(hint, type) and get_type_hints(hint):
                inferred = hint
        if rtn := hints.get("return"):
            ends = _command_ends(rtn)
    except (NameError, TypeError, StopIteration):
        pass
    return inferred, ends
