"""Input mapping (incl. Command), output reading and stream chunk mapping."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from warpgraph._internal._constants import (
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
    RETURN,
    TASKS,
)
from warpgraph._internal._typing import MISSING
from warpgraph.errors import EmptyChannelError, InvalidUpdateError

logger = logging.getLogger("warpgraph")
_START = "__start__"
_STATE_MODES = ("checkpoints", "debug")


def read_channels(engine: Any, select: str | Sequence[str]) -> Any:
    """LangGraph's read_channels: a str -> value or None; a list -> available values."""
    if isinstance(select, str):
        try:
            return engine.read(select)
        except EmptyChannelError:
            return None
    return engine.read(list(select) if not isinstance(select, list) else select)


def map_command(cmd: Any) -> Iterator[tuple[str, str, Any]]:
    """Command input -> (NULL_TASK_ID, channel, value) writes."""
    from warpgraph.types import Command, Send

    if cmd.graph == Command.PARENT:
        raise InvalidUpdateError("There is no parent graph")
    if cmd.goto:
        gotos = cmd.goto if isinstance(cmd.goto, (tuple, list)) else [cmd.goto]
        for g in gotos:
            if isinstance(g, Send):
                yield (NULL_TASK_ID, TASKS, g)
            elif isinstance(g, str):
                yield (NULL_TASK_ID, f"branch:to:{g}", _START)
            else:
                raise TypeError(f"In Command.goto, expected Send/str, got {type(g).__name__}")
    if cmd.resume is not None:
        yield (NULL_TASK_ID, RESUME, cmd.resume)
    if cmd.update:
        for k, v in cmd._update_as_tuples():
            yield (NULL_TASK_ID, k, v)


def map_input(input_channels: str | Sequence[str], chunk: Any) -> list[tuple[str, Any]]:
    """Graph input -> writes to the input channels."""
    if chunk is None:
        return []
    if isinstance(input_channels, str):
        return [(input_channels, chunk)]
    if not isinstance(chunk, dict):
        raise TypeError(f"Expected chunk to be a dict, got {type(chunk).__name__}")
    out = []
    for k in chunk:
        if k in input_channels:
            out.append((k, chunk[k]))
        else:
            logger.warning(f"Input channel {k} not found in {input_channels}")
    return out


def shown_update(
    output_channels: str | Sequence[str],
    keys: frozenset[str] | None,
    task: Any,
    writes: Sequence[tuple[str, Any]],
    cached: bool = False,
) -> dict[str, Any]:
    """The `updates` chunk of a finished task known to be shown (not hidden, its writes
    neither an error nor an interrupt): what it returned (a RETURN write), else its writes
    to the output channel(s), a dict of them (one dict per write when a channel was written
    more than once); `keys`: the output channels as a frozenset (None for a single one)."""
    vals: list = []
    for c, v in writes:
        if c == RETURN:
            vals = [v]
            break
    else:
        if keys is None:
            vals = [v for c, v in writes if c == output_channels]
        elif picked := [(c, v) for c, v in writes if c in keys]:
            update = dict(picked)
            vals = [update] if len(update) == len(picked) else [{c: v} for c, v in picked]
    chunk = {task.name: None if not vals else vals[0] if len(vals) == 1 else vals}
    if cached:
        chunk["__metadata__"] = {"cached": cached}
    return chunk


def interrupt_chunk(writes: Sequence[tuple[str, Any]]) -> dict[str, tuple]:
    """`{"__interrupt__": (Interrupt, ...)}` from a task's INTERRUPT writes."""
    return {
        INTERRUPT: tuple(
            v for c, w in writes if c == INTERRUPT for v in (w if isinstance(w, Sequence) else (w,))
        )
    }


def discard(_: Any) -> None:
    """The invoke path's own stream: values are tracked on the loop (`latest_values`)."""


def latest_output(loop: Any) -> Any:
    latest = loop.latest_values
    if type(latest).__name__ == "_Latest":
        latest = loop.read_values()
    if latest is MISSING:
        latest = None
    if loop.captured:
        return (
            {**latest, INTERRUPT: list(loop.captured)}
            if isinstance(latest, dict)
            else {INTERRUPT: list(loop.captured)}
        )
    return latest


def invoke_result(chunks: list, stream_mode: Any, version: str) -> Any:
    if stream_mode != "values":
        return chunks
    latest = None
    interrupts: list = []
    for c in chunks:
        if version == "v2":
            latest = c["data"]
            interrupts.extend(c.get("interrupts", ()))
        else:  # v1 streams ["updates", "values"]: (mode, payload) or (ns, mode, payload)
            mode, payload = c[-2], c[-1]
            if mode == "updates":
                if isinstance(payload, dict) and (ints := payload.get(INTERRUPT)) is not None:
                    interrupts.extend(ints)
            elif mode == "values":
                latest = payload
    if version == "v2":
        from warpgraph.types import GraphOutput

        return GraphOutput(value=latest, interrupts=tuple(interrupts))
    if interrupts:
        return (
            {**latest, INTERRUPT: interrupts}
            if isinstance(latest, dict)
            else {INTERRUPT: interrupts}
        )
    return latest


def v2_mappers(graph: Any, version: str) -> tuple[Any, Any] | None:
    """`version="v2"` streams coerce values to a pydantic / dataclass state schema: the
    graph's (output mapper, state mapper), or None when there is nothing to coerce."""
    if version != "v2":
        return None
    found = (getattr(graph, "_output_mapper", None), getattr(graph, "_state_mapper", None))
    return found if found != (None, None) else None


def _coerce_checkpoint_values(payload: Any, mapper: Any) -> None:
    """Coerce the state values of a checkpoints payload or of a debug checkpoint envelope,
    in place; the input checkpoint (next holds __start__) has channels still empty: kept."""
    if not isinstance(payload, dict):
        return
    target = payload
    if payload.get("type") == "checkpoint" and isinstance(payload.get("payload"), dict):
        target = payload["payload"]
    if isinstance(target.get("values"), dict) and _START not in target.get("next", ()):
        target["values"] = mapper(target["values"])


def map_output_chunk(
    chunk: tuple,
    stream_mode: Any,
    print_mode: Any,
    subgraphs: bool,
    version: str,
    mappers: tuple[Any, Any] | None = None,
) -> Any:
    """One `(namespace, mode, payload)` chunk in the shape `stream()` yields, or `SKIP` for
    a chunk of a mode it does not yield (print_mode chunks are printed like LangGraph;
    `mappers`: see `v2_mappers`)."""
    ns, mode, payload = chunk
    if mode in print_mode:
        from warpgraph.pregel.debug import get_bolded_text, get_colored_text

        parts = [get_bolded_text(f"[{mode}]")]
        if subgraphs and ns:
            parts.append(get_colored_text(f"[graph={ns}]", color="yellow"))
        parts.append(repr(payload))
        print(" ".join(parts))
    if mode not in stream_mode:
        return SKIP
    if version == "v2":
        if mode == "values":
            ints = ()
            if isinstance(payload, dict):
                ints = payload.pop(INTERRUPT, ())
                if mappers is not None and mappers[0] is not None:
                    payload = mappers[0](payload)
            return {"type": mode, "ns": ns, "data": payload, "interrupts": ints}
        if mappers is not None and mappers[1] is not None and mode in _STATE_MODES:
            _coerce_checkpoint_values(payload, mappers[1])
        return {"type": mode, "ns": ns, "data": payload}
    if subgraphs and isinstance(stream_mode, list):
        return (ns, mode, payload)
    if isinstance(stream_mode, list):
        return (mode, payload)
    if subgraphs:
        return (ns, payload)
    return payload


SKIP = object()
"""What `map_output_chunk` returns for a chunk the stream does not yield."""


__all__ = (
    "RESUME",
    "interrupt_chunk",
    "map_command",
    "map_input",
    "read_channels",
    "shown_update",
)
