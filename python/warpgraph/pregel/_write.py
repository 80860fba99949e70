"""Writers: runnables that turn a node's output into channel writes.

A writer is called as `(value, config) -> value`; it pushes `(channel, value)` tuples
through `config["configurable"]["__pregel_send"]` and passes its input through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar

from warpgraph._internal._constants import CONF, CONFIG_KEY_SEND, TASKS
from warpgraph._internal._typing import MISSING
from warpgraph.errors import InvalidUpdateError

__all__ = (
    "PASSTHROUGH",
    "SKIP_WRITE",
    "ChannelWrite",
    "ChannelWriteEntry",
    "ChannelWriteTupleEntry",
)

R = TypeVar("R")


class _Marker:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name


PASSTHROUGH: Any = _Marker("PASSTHROUGH")
"""Entry value meaning "write the writer's input"."""
SKIP_WRITE: Any = _Marker("SKIP_WRITE")
"""A mapper may return this to drop the entry."""


class ChannelWriteEntry(NamedTuple):
    channel: str
    """Channel to write to."""
    value: Any = PASSTHROUGH
    """Value to write, or PASSTHROUGH for the writer's input."""
    skip_none: bool = False
    """Drop the write when the (mapped) value is None."""
    mapper: Callable[[Any], Any] | None = None
    """Applied to the value before writing."""


class ChannelWriteTupleEntry(NamedTuple):
    mapper: Callable[[Any], Sequence[tuple[str, Any]] | None]
    """Turns the value into `(channel, value)` tuples."""
    value: Any = PASSTHROUGH
    """Value to map, or PASSTHROUGH for the writer's input."""
    static: Sequence[tuple[str, Any, str | None]] | None = None
    """Declared writes, for static analysis (drawing) only."""


def _send_type() -> type:
    from warpgraph.types import Send

    return Send


def _assemble(writes: Sequence[Any], input: Any) -> list[tuple[str, Any]]:
    """Turn entries into `(channel, value)` tuples; PASSTHROUGH values become `input`."""
    out: list[tuple[str, Any]] = []
    for w in writes:
        if isinstance(w, ChannelWriteTupleEntry):
            tuples = w.mapper(input if w.value is PASSTHROUGH else w.value)
            if tuples:
                out.extend(tuples)
        elif isinstance(w, ChannelWriteEntry):
            value = input if w.value is PASSTHROUGH else w.value
            if w.mapper is not None:
                value = w.mapper(value)
            if value is SKIP_WRITE or (w.skip_none and value is None):
                continue
            out.append((w.channel, value))
        elif isinstance(w, _send_type()):
            out.append((TASKS, w))
        else:
            raise ValueError(f"Invalid write entry: {w}")  # noqa: TRY004 - LangGraph's type
    return out


def _validate(writes: Sequence[Any], allow_passthrough: bool) -> None:
    for w in writes:
        if isinstance(w, ChannelWriteEntry) and w.channel == TASKS:
            raise InvalidUpdateError("Cannot write to the reserved channel TASKS")
        if (
            not allow_passthrough
            and isinstance(w, (ChannelWriteEntry, ChannelWriteTupleEntry))
            and w.value is PASSTHROUGH
        ):
            raise InvalidUpdateError("PASSTHROUGH value must be replaced")


def _send(config: Any, tuples: list[tuple[str, Any]]) -> None:
    try:
        send = config[CONF][CONFIG_KEY_SEND]
    except (KeyError, TypeError):
        raise RuntimeError(
            "Not configured with a send function: writers must run inside a Pregel task"
        ) from None
    send(tuples)


class ChannelWrite:
    """Writer runnable: sends its entries' writes, returns its input unchanged."""

    __slots__ = ("_is_channel_writer", "name", "tags", "writes")

    def __init__(self, writes: Sequence[Any], *, tags: Sequence[str] | None = None) -> None:
        writes = list(writes)
        _validate(writes, allow_passthrough=True)
        self.writes = writes
        self.tags = list(tags) if tags else None
        self.name = None
        self._is_channel_writer = None

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        if not name:
            Send = _send_type()
            parts = [
                w.channel
                if isinstance(w, ChannelWriteEntry)
                else "..."
                if isinstance(w, ChannelWriteTupleEntry)
                else w.node
                if isinstance(w, Send)
                else "?"
                for w in self.writes
            ]
            name = f"ChannelWrite<{','.join(parts)}>"
        return f"{name}{suffix}" if suffix else name

    def __repr__(self) -> str:
        return f"{self.get_name()}(writes={self.writes!r})"

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        _send(config, _assemble(self.writes, input))
        return input

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        _send(config, _assemble(self.writes, input))
        return input

    @staticmethod
    def do_write(
        config: Any,
        writes: Sequence[Any],
        allow_passthrough: bool = True,
    ) -> None:
        """Validate `writes` and send them as-is (PASSTHROUGH is not substituted)."""
        _validate(writes, allow_passthrough)
        out: list[tuple[str, Any]] = []
        Send = _send_type()
        for w in writes:
            if isinstance(w, ChannelWriteTupleEntry):
                if tuples := w.mapper(w.value):
                    out.extend(tuples)
            elif isinstance(w, ChannelWriteEntry):
                value = w.mapper(w.value) if w.mapper is not None else w.value
                if value is SKIP_WRITE or (w.skip_none and value is None):
                    continue
                out.append((w.channel, value))
            elif isinstance(w, Send):
                out.append((TASKS, w))
            else:
                raise ValueError(f"Invalid write entry: {w}")  # noqa: TRY004 - LangGraph's type
        _send(config, out)

    @staticmethod
    def is_writer(runnable: Any) -> bool:
        """True for ChannelWrite and runnables marked with `register_writer`."""
        return (
            isinstance(runnable, ChannelWrite)
            or getattr(runnable, "_is_channel_writer", MISSING) is not MISSING
        )

    @staticmethod
    def get_static_writes(runnable: Any) -> Sequence[tuple[str, Any, str | None]] | None:
        """Declared `(channel, value, label)` writes of a writer, for drawing."""
        if isinstance(runnable, ChannelWrite):
            return [
                w
                for entry in runnable.writes
                if isinstance(entry, ChannelWriteTupleEntry) and entry.static
                for w in entry.static
            ] or None
        declared = getattr(runnable, "_is_channel_writer", MISSING)
        if declared is MISSING or not declared:
            return None
        entries = [e for e, _ in declared]
        labels = [label for _, label in declared]
        tuples = _assemble(entries, None)
        return [(*t, label) for t, label in zip(tuples, labels)]

    @staticmethod
    def register_writer(
        runnable: R,
        static: Sequence[tuple[Any, str | None]] | None = None,
    ) -> R:
        """Mark `runnable` as a writer; `static` lists `(entry, label)` declared writes."""
        object.__setattr__(runnable, "_is_channel_writer", static)
        return runnable
