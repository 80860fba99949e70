"""Mappers from a node's return value to `(channel, value)` writes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from warpgraph._internal._constants import TASKS
from warpgraph.constants import END
from warpgraph.errors import (
    ErrorCode,
    InvalidUpdateError,
    ParentCommand,
    create_error_message,
)
from warpgraph.graph._branch import branch_to
from warpgraph.graph._schema import ROOT, annotated_keys, command_updates, object_updates
from warpgraph.pregel._write import mark_control_router

__all__ = ("control_branch", "control_static", "root_updates", "state_updates")

Updates = Sequence[tuple[str, Any]]


_TYPES: tuple[type, type] | None = None


def _types() -> tuple[type, type]:
    global _TYPES
    if _TYPES is None:
        from warpgraph.types import Command, Send

        _TYPES = (Command, Send)
    return _TYPES


def _has_command(value: Any, Command: type) -> bool:
    return (
        isinstance(value, (list, tuple))
        and bool(value)
        and any(isinstance(v, Command) for v in value)
    )


def state_updates(output_keys: Sequence[str]) -> Callable[[Any], Updates | None]:
    """Mapper for dict-like states: keeps only writes to known keys (others are dropped)."""
    keys = list(output_keys)
    known = frozenset(keys)
    Command, _ = _types()
    PARENT = Command.PARENT

    issuperset = known.issuperset

    def updates(value: Any) -> Updates | None:
        if type(value) is dict:
            if issuperset(value):  # every key known: no filtering (no comprehension frame)
                return list(value.items())
            return [(k, v) for k, v in value.items() if k in known]
        if value is None:
            return None
        if isinstance(value, dict):
            return [(k, v) for k, v in value.items() if k in known]
        if isinstance(value, Command):
            if value.graph == PARENT:
                return None
            return [(k, v) for k, v in command_updates(value) if k in known]
        if _has_command(value, Command):
            out: list[tuple[str, Any]] = []
            for item in value:
                if isinstance(item, Command):
                    if item.graph != PARENT:
                        out.extend((k, v) for k, v in command_updates(item) if k in known)
                else:
                    out.extend(updates(item) or ())
            return out
        if annotated_keys(type(value)):
            return object_updates(value, keys)
        raise InvalidUpdateError(
            create_error_message(
                message=f"Expected dict, got {value}",
                error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
            )
        )

    # writers inline the first branch: a plain dict of known keys is its own items
    updates.all_known = issuperset  # type: ignore[attr-defined]
    return updates


def root_updates(value: Any) -> Updates | None:
    """Mapper for a single-value (`__root__`) state."""
    Command, _ = _types()
    if isinstance(value, Command):
        return () if value.graph == Command.PARENT else command_updates(value)
    if _has_command(value, Command):
        out: list[tuple[str, Any]] = []
        for item in value:
            if isinstance(item, Command):
                if item.graph != Command.PARENT:
                    out.extend(command_updates(item))
            else:
                out.append((ROOT, item))
        return out
    if value is not None:
        return [(ROOT, value)]
    return None


@mark_control_router
def control_branch(value: Any) -> Updates:
    """Routing writes of a returned Send / Command(goto=...) / list of Commands."""
    if type(value) is dict or value is None:
        return ()
    Command, Send = _types()
    if isinstance(value, Send):
        return ((TASKS, value),)
    if isinstance(value, Command):
        commands = [value]
    elif isinstance(value, (list, tuple)):
        commands = [c for c in value if isinstance(c, Command)]
    else:
        return []
    out: list[tuple[str, Any]] = []
    for cmd in commands:
        if cmd.graph == Command.PARENT:
            raise ParentCommand(cmd)
        goto = cmd.goto
        targets = [goto] if isinstance(goto, (Send, str)) else goto
        for target in targets or ():
            if isinstance(target, Send):
                out.append((TASKS, target))
            elif isinstance(target, str) and target != END:
                out.append((branch_to(target), None))
    return out


def control_static(
    ends: tuple[str, ...] | dict[str, str],
) -> list[tuple[str, Any, str | None]]:
    """Declared routing writes of a node (`destinations=` / `Command[Literal[...]]`)."""
    if isinstance(ends, dict):
        return [(k if k == END else branch_to(k), None, label) for k, label in ends.items()]
    return [(e if e == END else branch_to(e), None, None) for e in ends]
