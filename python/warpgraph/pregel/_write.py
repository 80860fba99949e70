"""Writers: runnables that turn a node's output into channel writes.

A writer is called as `(value, config) -> value`; it pushes `(channel, value)` tuples
through `config["configurable"]["__pregel_send"]` and passes its input through unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from warpgraph._internal._codegen import writes_function
from warpgraph._internal._constants import CONF, CONFIG_KEY_SEND, TASKS
from warpgraph._internal._timeout import NEVER_BLOCKS
from warpgraph._internal._typing import MISSING
from warpgraph.errors import InvalidUpdateError

__all__ = (
    "CONTROL_ROUTER",
    "PASSTHROUGH",
    "SKIP_WRITE",
    "ChannelWrite",
    "ChannelWriteEntry",
    "ChannelWriteTupleEntry",
    "ConfigFreeWriter",
    "is_config_free_writer",
    "mark_control_router",
    "register_config_free_writer",
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


# --- writers made outside pregel (the graph layer) that the fast paths recognise -------
# pregel imports nothing from the graph layer: the graph marks what it makes.

_CONFIG_FREE_WRITERS: set[type] = set()


class ConfigFreeWriter(Protocol):
    """A writer type (registered with `register_config_free_writer`) that a lazily
    configured task may run without its config (`_algo.node_plan`, `_retry._run_unconfigured`;
    async: `_algo.async_node_plan`, `_retry._arun_planned`):
    the graph's conditional-edge writer."""

    def config_free_callable(self) -> Any:
        """The runnable the writer calls; the writer qualifies when that is a plain
        RunnableCallable (nothing else in it reads the config)."""

    def invoke_unconfigured(self, input: Any, task: Any, engine: Any, writes: Any) -> Any:
        """`invoke` inside `task` (config not built): reads through `engine` and the task's
        `writes`, sends into `writes`."""

    async def ainvoke_unconfigured(self, input: Any, task: Any, engine: Any, writes: Any) -> Any:
        """Async twin of `invoke_unconfigured` (the async driver's `_retry._arun_planned`)."""


def register_config_free_writer(cls: type) -> type:
    """Mark `cls` (exactly that type, not its subclasses) as a `ConfigFreeWriter` (which
    never blocks the event loop: see `_timeout.NEVER_BLOCKS`)."""
    _CONFIG_FREE_WRITERS.add(cls)
    setattr(cls, NEVER_BLOCKS, True)
    return cls


def is_config_free_writer(writer: Any) -> bool:
    return type(writer) in _CONFIG_FREE_WRITERS


CONTROL_ROUTER = "_routes_control_only"
"""Attribute the graph sets (True) on a `ChannelWriteTupleEntry` mapper that only routes
Send / Command(goto=...) values and returns nothing for a dict or None (the writers' plan
then skips calling it for those)."""


def mark_control_router(mapper: Callable) -> Callable:
    """Mark `mapper` as a control router (see `CONTROL_ROUTER`)."""
    setattr(mapper, CONTROL_ROUTER, True)
    return mapper


# plan step kinds
_FIXED, _MAP, _MAP_CTRL, _ENTRY = 0, 1, 2, 3


def _plan(writes: Sequence[Any]) -> tuple | None:
    """`writes` as `(kind, a, b)` steps for `_compile_plan` (None: use `_assemble`): runs of
    constant entries become one precomputed tuple of writes."""
    Send = _send_type()
    plan: list[tuple[int, Any, Any]] = []
    fixed: list[tuple[str, Any]] = []

    def flush() -> None:
        if fixed:
            plan.append((_FIXED, tuple(fixed), None))
            fixed.clear()

    for w in writes:
        if isinstance(w, ChannelWriteTupleEntry):
            flush()
            ctrl = getattr(w.mapper, CONTROL_ROUTER, False) is True
            kind = _MAP_CTRL if ctrl and w.value is PASSTHROUGH else _MAP
            plan.append((kind, w.mapper, w.value))
        elif isinstance(w, ChannelWriteEntry):
            value = w.value
            if value is not PASSTHROUGH and w.mapper is None and value is not SKIP_WRITE:
                if not (w.skip_none and value is None):
                    fixed.append((w.channel, value))
                continue
            flush()
            plan.append((_ENTRY, w, None))
        elif isinstance(w, Send):
            fixed.append((TASKS, w))
        else:
            return None
    flush()
    return tuple(plan)


# the straight-line code of each step kind (`_codegen.writes_function`)
_FIXED_CODE = "out += f{i}"
_MAP_CTRL_CODE = """if type(input) is not dict and input is not None:
    t = m{i}(input)
    if t:
        out += t"""
_MAP_KNOWN_CODE = """if type(input) is dict and k{i}(input):
    out += input.items()
else:
    t = m{i}(input)
    if t:
        out += t"""
_MAP_CODE = """t = m{i}(%s)
if t:
    out += t"""
_ENTRY_CODE = """w = e{i}
value = input if w.value is PASSTHROUGH else w.value
if w.mapper is not None:
    value = w.mapper(value)
if not (value is SKIP_WRITE or (w.skip_none and value is None)):
    out.append((w.channel, value))"""


def _compile_plan(plan: tuple) -> Callable[[Any], list[tuple[str, Any]]]:
    """One function doing what `_assemble` does for the plan's writer (the plan's steps
    unrolled; `_codegen`): fixed tuples appended, mapped values' tuples, entries' values
    with their mapper / skip rules; for a `state_updates` mapper of a graph node whose
    dict output has only known keys (`all_known`), the dict's items directly."""
    steps: list[tuple[str, dict[str, Any]]] = []
    for kind, a, b in plan:
        if kind == _FIXED:
            steps.append((_FIXED_CODE, {"f{i}": list(a)}))
        elif kind == _MAP_CTRL:
            steps.append((_MAP_CTRL_CODE, {"m{i}": a}))
        elif kind == _MAP:
            known = getattr(a, "all_known", None)  # see graph._updates.state_updates
            if known is not None and b is PASSTHROUGH:
                steps.append((_MAP_KNOWN_CODE, {"m{i}": a, "k{i}": known}))
            elif b is PASSTHROUGH:
                steps.append((_MAP_CODE % "input", {"m{i}": a}))
            else:
                steps.append((_MAP_CODE % "v{i}", {"m{i}": a, "v{i}": b}))
        else:
            steps.append((_ENTRY_CODE, {"e{i}": a}))
    return writes_function(steps, _WRITER_NS)


# the names the writers' code reads besides its bound values (one namespace: see
# `_codegen.writes_function`)
_WRITER_NS: dict[str, Any] = {"PASSTHROUGH": PASSTHROUGH, "SKIP_WRITE": SKIP_WRITE, "dict": dict}


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

    __slots__ = ("_is_channel_writer", "_plan", "_plan_len", "_plan_of", "name", "tags", "writes")

    def __init__(self, writes: Sequence[Any], *, tags: Sequence[str] | None = None) -> None:
        writes = list(writes)
        _validate(writes, allow_passthrough=True)
        self.writes = writes
        self._plan_of: Any = None
        self._plan: tuple | None = None
        self._plan_len = -1
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

    def _tuples(self, input: Any) -> list[tuple[str, Any]]:
        writes = self.writes
        if self._plan_of is not writes:  # planned once (again if `writes` was replaced)
            plan = _plan(writes)
            self._plan = _compile_plan(plan) if plan is not None else None
            self._plan_of = writes
            self._plan_len = len(writes)
        run = self._plan
        if run is None or self._plan_len != len(writes):
            return _assemble(writes, input)
        return run(input)

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        try:
            send = config[CONF][CONFIG_KEY_SEND]
        except (KeyError, TypeError):
            send = None
        if send is None:
            _send(config, _assemble(self.writes, input))
        else:
            send(self._tuples(input))
        return input

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.invoke(input, config)

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


setattr(ChannelWrite, NEVER_BLOCKS, True)  # (see `_timeout.NEVER_BLOCKS`)
