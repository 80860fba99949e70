"""Conditional edges: the path spec and the writer that routes a node's output."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from inspect import isfunction, ismethod, signature
from itertools import zip_longest
from typing import Any, Literal, NamedTuple, get_args, get_origin, get_type_hints

from warpgraph._internal._constants import CONF, CONFIG_KEY_READ, CONFIG_KEY_SEND
from warpgraph._internal._runnable import _RUNNABLE_TYPES, _is_runnable
from warpgraph.constants import END, START
from warpgraph.errors import InvalidUpdateError
from warpgraph.pregel._algo import _local_read
from warpgraph.pregel._write import (
    ChannelWrite,
    ChannelWriteEntry,
    _send,
    register_config_free_writer,
)

__all__ = ("BranchSpec", "branch_name", "branch_to")

_BRANCH_TO = "branch:to:{}"


def branch_to(node: str) -> str:
    """The trigger channel of `node`."""
    return _BRANCH_TO.format(node)


def branch_name(path: Any) -> str | None:
    """The name LangGraph gives a path callable (None for lambdas and nameless callables)."""
    if hasattr(path, "invoke") and not isfunction(path):
        name = getattr(path, "name", None)
        return name if isinstance(name, str) else None
    name = getattr(path, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        return None
    return name


def _introspectable(path: Any) -> Any | None:
    """The function or bound method to read type hints from."""
    func = getattr(path, "func", None) or getattr(path, "afunc", None)
    if hasattr(path, "invoke") and func is not None:
        path = func
    if isfunction(path) or ismethod(path):
        return path
    call = getattr(path, "__call__", None)  # noqa: B004 - a bound __call__ method
    if call is not None and ismethod(call):
        return call
    return None


def _path_map_from_hints(path: Any) -> dict[Hashable, str] | None:
    func = _introspectable(path)
    if func is None:
        return None
    try:
        rtn = get_type_hints(func).get("return")
    except Exception:  # noqa: BLE001 - unresolvable hints: no inferred path_map
        return None
    if rtn is not None and get_origin(rtn) is Literal:
        return {name: name for name in get_args(rtn)}
    return None


def _input_schema(path: Any) -> type | None:
    func = _introspectable(path)
    if func is None:
        return None
    try:
        hints = get_type_hints(func)
        if not hints:
            return None
        first = next(iter(signature(func).parameters))
        hint = hints.get(first)
        if isinstance(hint, type) and get_type_hints(hint):
            return hint
    except (TypeError, StopIteration, NameError, ValueError):
        return None
    return None


def _entries(destinations: Sequence[Any], static: bool) -> list[Any]:
    """Write entries for destinations; END is dropped unless drawing (`static`)."""
    from warpgraph.types import Send

    out: list[Any] = []
    for d in destinations:
        if isinstance(d, Send):
            out.append(d)
        elif d == END:
            if static:
                out.append(ChannelWriteEntry(END, None))
        else:
            out.append(ChannelWriteEntry(branch_to(d), None))
    return out


class BranchSpec(NamedTuple):
    path: Any
    """Runnable called with the (fresh) state; returns destination(s)."""
    ends: dict[Hashable, str] | None
    """path_map: path result -> node name."""
    input_schema: type | None = None

    @classmethod
    def from_path(
        cls,
        path: Any,
        path_map: dict[Hashable, str] | list[str] | None,
        infer_schema: bool = False,
        *,
        source: Any = None,
    ) -> BranchSpec:
        """Build a spec; `source` is the user's original callable, used for type hints."""
        origin = path if source is None else source
        if isinstance(path_map, dict):
            ends: dict[Hashable, str] | None = dict(path_map)
        elif isinstance(path_map, list):
            ends = {name: name for name in path_map}
        elif path_map is None:
            ends = _path_map_from_hints(origin)
        else:
            raise TypeError(
                f"path_map must be a dict, a list or None, got {type(path_map).__name__}"
            )
        schema = _input_schema(origin) if infer_schema else None
        return cls(path=path, ends=ends, input_schema=schema)

    def run(self, reader: Callable[[Any], Any] | None = None) -> _BranchWriter:
        """The writer runnable appended to the source node."""
        writer = _BranchWriter(self, reader)
        static = None
        if self.ends:
            entries = _entries(list(self.ends.values()), True)
            static = list(zip_longest(entries, [str(label) for label in self.ends]))
        return ChannelWrite.register_writer(writer, static)

    def resolve(self, result: Any) -> list[Any]:
        """Path result -> destinations (node names or Sends), validated."""
        from warpgraph.types import Send

        if not isinstance(result, (list, tuple)):
            result = [result]
        if self.ends:
            dests = [r if isinstance(r, Send) else self.ends[r] for r in result]
        else:
            dests = list(result)
        if any(d is None or (not isinstance(d, Send) and d == START) for d in dests):
            raise ValueError("Branch did not return a valid destination")
        if any(isinstance(d, Send) and d.node == END for d in dests):
            raise InvalidUpdateError("Cannot send a packet to the END node")
        return dests


@register_config_free_writer
class _BranchWriter:
    """Runs the path on the node's fresh state and writes the chosen destinations."""

    __slots__ = ("_is_channel_writer", "_routes", "name", "reader", "spec")

    def __init__(self, spec: BranchSpec, reader: Callable[[Any], Any] | None) -> None:
        self.spec = spec
        self.reader = reader
        self.name = None
        # path result (str / bool) -> the writes it routes to, resolved once
        self._routes: dict[Any, tuple] = {}

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        name = name or "Branch"
        return f"{name}{suffix}" if suffix else name

    def _path_input(self, input: Any, config: Any) -> Any:
        if self.reader is None:
            return input
        value = self.reader(config)
        # dict states: keys the node returned but the state lacks still reach the path
        if isinstance(value, dict) and isinstance(input, dict) and self.spec.input_schema is None:
            value = {**input, **value}
        return value

    def _finish(self, input: Any, result: Any, config: Any) -> Any:
        rt = type(result)
        if rt is str or rt is bool:
            writes = self._routes.get(result)
            if writes is None:
                entries = _entries(self.spec.resolve(result), False)
                if any(type(e) is not ChannelWriteEntry or e.mapper is not None for e in entries):
                    if entries:
                        ChannelWrite.do_write(config, entries)
                    return input
                # do_write of these entries sends exactly (channel, value) for each
                writes = tuple((e.channel, e.value) for e in entries)
                if len(self._routes) < 1024:
                    self._routes[result] = writes
            if writes:
                _send(config, list(writes))
            return input
        entries = _entries(self.spec.resolve(result), False)
        if entries:
            ChannelWrite.do_write(config, entries)
        return input

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        result = self.spec.path.invoke(self._path_input(input, config), config)
        return self._finish(input, result, config)

    def config_free_callable(self) -> Any:
        """The path (`_write.ConfigFreeWriter`: this writer runs without a task config when
        its path is a plain function)."""
        return self.spec.path

    def invoke_unconfigured(self, input: Any, task: Any, engine: Any, writes: Any) -> Any:
        """`invoke` inside a task whose config is not built (all this writer needs of it is
        the task's send and fresh-read functions over `engine` and the task's `writes`); a
        plain path function is called as `invoke` would call it (the current config
        variable resolves to the task's). The common case (a fresh read, a plain path
        returning a known route) runs in this one frame: it is every step of a loop."""
        reader = self.reader
        if reader is None:
            path_input = input
        else:
            path_input = engine.read(reader.select, writes)  # (the task's writes so far)
            if reader.mapper is not None:
                path_input = reader.mapper(path_input)
            if type(path_input) is dict and type(input) is dict:
                if self.spec.input_schema is None:
                    path_input = {**input, **path_input}
            else:
                path_input = self._merged(input, path_input)
        path = self.spec.path
        result = path.func(path_input)
        rt = type(result)
        if path.recurse:
            known = _RUNNABLE_TYPES.get(rt)
            if known or (known is None and _is_runnable(result)):
                result = result.invoke(path_input, task.config)
                rt = type(result)
        if rt is str or rt is bool:
            routed = self._routes.get(result)
            if routed is not None:
                writes.extend(routed)
                return input
        return self._unconfigured_finish(input, result, engine, writes)

    async def ainvoke_unconfigured(self, input: Any, task: Any, engine: Any, writes: Any) -> Any:
        """Async twin of `invoke_unconfigured`: the path's async form is awaited as
        `ainvoke` awaits it (a sync path function runs on a worker thread)."""
        path_input = self._unconfigured_input(input, engine, writes)
        path = self.spec.path
        result = await path.afunc(path_input)
        if path.recurse and _is_runnable(result):
            ainvoke = getattr(result, "ainvoke", None)
            if ainvoke is not None:
                result = await ainvoke(path_input, task.config)
            else:
                result = result.invoke(path_input, task.config)
        return self._unconfigured_finish(input, result, engine, writes)

    def _unconfigured_input(self, input: Any, engine: Any, writes: Any) -> Any:
        reader = self.reader
        if reader is None:
            return input
        path_input = engine.read(reader.select, writes)
        if reader.mapper is not None:
            path_input = reader.mapper(path_input)
        return self._merged(input, path_input)

    def _merged(self, input: Any, path_input: Any) -> Any:
        """Dict states: keys the node returned but the state lacks still reach the path."""
        if (
            isinstance(path_input, dict)
            and isinstance(input, dict)
            and self.spec.input_schema is None
        ):
            return {**input, **path_input}
        return path_input

    def _unconfigured_finish(self, input: Any, result: Any, engine: Any, writes: Any) -> Any:
        rt = type(result)
        if rt is str or rt is bool:
            routed = self._routes.get(result)
            if routed is not None:
                writes.extend(routed)
                return input
        light = {
            CONF: {
                CONFIG_KEY_SEND: writes.extend,
                CONFIG_KEY_READ: partial(_local_read, engine, writes),
            }
        }
        return self._finish(input, result, light)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        result = await self.spec.path.ainvoke(self._path_input(input, config), config)
        return self._finish(input, result, config)


def fresh_reader(select: str | list[str], mapper: Callable[[Any], Any] | None) -> Callable:
    """A reader of the task's fresh state (its own writes applied)."""

    def read(config: Any) -> Any:
        try:
            do_read = config[CONF][CONFIG_KEY_READ]
        except (KeyError, TypeError):
            raise RuntimeError(
                "Not configured with a read function: make sure to call in the "
                "context of a Pregel process"
            ) from None
        value = do_read(select, True)
        return mapper(value) if mapper is not None else value

    read.select = select  # type: ignore[attr-defined]  # for invoke_unconfigured
    read.mapper = mapper  # type: ignore[attr-defined]
    return read
