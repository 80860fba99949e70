"""PregelNode: a node of a compiled graph (what triggers it, what it reads, what it runs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

__all__ = ("NodeBuilder", "PregelNode", "validate_graph")


class _Seq:
    """Fallback sequence used only when `_internal._runnable` is unavailable."""

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)

    def invoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        for s in self.steps:
            input = s.invoke(input, config) if hasattr(s, "invoke") else s(input)
        return input

    async def ainvoke(self, input: Any, config: Any = None, **kw: Any) -> Any:
        for s in self.steps:
            if hasattr(s, "ainvoke"):
                input = await s.ainvoke(input, config)
            else:
                input = s.invoke(input, config)
        return input


def _seq(*steps: Any, trace_policy: Any = None) -> Any:
    try:
        from warpgraph._internal._runnable import RunnableSeq
    except ImportError:
        return _Seq(*steps)
    return RunnableSeq(*steps, trace_policy=trace_policy)


class PregelNode:
    """Triggers, read channels, the bound runnable and its writers."""

    def __init__(
        self,
        *,
        channels: str | list[str],
        triggers: Sequence[str],
        mapper: Callable[[Any], Any] | None = None,
        writers: Sequence[Any] | None = None,
        tags: list[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        bound: Any = None,
        retry_policy: Any = None,
        cache_policy: Any = None,
        subgraphs: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(channels, (str, list)):
            raise TypeError(
                f"PregelNode channels must be a str or a list, got {type(channels).__name__}"
            )
        self.channels = channels
        self.triggers = list(triggers)
        self.mapper = mapper
        self.writers = list(writers or ())
        self.bound = bound
        self.tags = tags
        self.metadata = metadata
        self.cache_policy = cache_policy
        self.retry_policy = (retry_policy,) if _is_retry(retry_policy) else retry_policy
        self.timeout = _coerce_timeout(kwargs.pop("timeout", None))
        self.error_handler_node = kwargs.pop("error_handler_node", None)
        self.is_error_handler = kwargs.pop("is_error_handler", False)
        self.trace_policy = kwargs.pop("trace_policy", None)
        if subgraphs is not None:
            self.subgraphs = list(subgraphs)
        else:
            self.subgraphs = [bound] if _is_pregel(bound) else []

    def copy(self, update: dict[str, Any]) -> PregelNode:
        attrs = {k: v for k, v in self.__dict__.items() if k not in ("flat_writers", "node")}
        attrs.update(update)
        return PregelNode(**attrs)

    @cached_property
    def flat_writers(self) -> list[Any]:
        """Writers, with consecutive ChannelWrites merged into one."""
        try:
            from warpgraph.pregel._write import ChannelWrite
        except ImportError:
            return list(self.writers)
        ws = list(self.writers)
        while len(ws) > 1 and isinstance(ws[-1], ChannelWrite) and isinstance(ws[-2], ChannelWrite):
            last = ws.pop()
            ws[-1] = ChannelWrite(list(ws[-1].writes) + list(last.writes))
        return ws

    @cached_property
    def node(self) -> Any:
        """The runnable a task runs: bound -> *writers."""
        ws = self.flat_writers
        if self.bound is None:
            if not ws:
                return None
            return ws[0] if len(ws) == 1 else _seq(*ws, trace_policy=self.trace_policy)
        return _seq(self.bound, *ws, trace_policy=self.trace_policy) if ws else self.bound

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return self.bound.invoke(input, config, **kwargs)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        return await self.bound.ainvoke(input, config, **kwargs)


class NodeBuilder:
    """Fluent builder of a PregelNode (LangGraph's NodeBuilder subset)."""

    def __init__(self) -> None:
        self._channels: str | list[str] = []
        self._triggers: list[str] = []
        self._bound: Any = None
        self._writes: list[Any] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._retry: list[Any] = []
        self._timeout: Any = None
        self._cache_policy: Any = None

    def subscribe_only(self, channel: str) -> NodeBuilder:
        if self._channels:
            raise ValueError(
                "subscribe_only() must be called before any other subscribe_to() calls"
            )
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> NodeBuilder:
        if isinstance(self._channels, str):
            raise ValueError("subscribe_to() cannot be called after subscribe_only()")  # noqa: TRY004
        for c in channels:
            if read and c not in self._channels:
                self._channels.append(c)
            if c not in self._triggers:
                self._triggers.append(c)
        return self

    def read_from(self, *channels: str) -> NodeBuilder:
        if isinstance(self._channels, str):
            raise ValueError("read_from() cannot be called after subscribe_only()")  # noqa: TRY004
        self._channels.extend(channels)
        return self

    def do(self, node: Any) -> NodeBuilder:
        from warpgraph._internal._runnable import coerce_to_runnable

        r = coerce_to_runnable(node)
        if self._bound is None:
            self._bound = r
        else:
            from warpgraph._internal._runnable import RunnableSeq

            self._bound = RunnableSeq(self._bound, r)
        return self

    def write_to(self, *channels: Any, **kwargs: Any) -> NodeBuilder:
        from warpgraph.pregel._write import ChannelWriteEntry

        self._writes.extend(ChannelWriteEntry(c) if isinstance(c, str) else c for c in channels)
        self._writes.extend(
            ChannelWriteEntry(k, mapper=v) if callable(v) else ChannelWriteEntry(k, value=v)
            for k, v in kwargs.items()
        )
        return self

    def meta(self, *tags: str, **metadata: Any) -> NodeBuilder:
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: Any) -> NodeBuilder:
        self._retry.extend(policies)
        return self

    def add_cache_policy(self, policy: Any) -> NodeBuilder:
        """Cache the node's results under `policy` (a `CachePolicy`; the last one counts)."""
        self._cache_policy = policy
        return self

    def set_timeout(self, timeout: Any) -> NodeBuilder:
        """Per-attempt timeout of the node (seconds, a timedelta or a TimeoutPolicy)."""
        self._timeout = _coerce_timeout(timeout)
        return self

    def build(self) -> PregelNode:
        from warpgraph.pregel._write import ChannelWrite

        return PregelNode(
            channels=self._channels,
            triggers=self._triggers,
            tags=self._tags or None,
            metadata=self._metadata or None,
            writers=[ChannelWrite(self._writes)] if self._writes else None,
            bound=self._bound,
            retry_policy=self._retry or None,
            cache_policy=self._cache_policy,
            timeout=self._timeout,
        )


def known_channels(channels: Mapping[str, Any]) -> tuple[dict, set, str]:
    """(channels, managed names, the known-channels text of LangGraph's messages) of a
    graph's `channels` map; a reserved channel or managed name is a ValueError."""
    from warpgraph._internal._constants import RESERVED
    from warpgraph.channels.base import BaseChannel

    chans = {k: v for k, v in channels.items() if isinstance(v, BaseChannel)}
    managed = {k for k, v in channels.items() if not isinstance(v, BaseChannel)}
    for c in chans:
        if c in RESERVED:
            raise ValueError(f"Channel name '{c}' is reserved")
    for c in managed:
        if c in RESERVED:
            raise ValueError(f"Managed name '{c}' is reserved")
    return chans, managed, repr(sorted(chans))[:100]


def check_node_reads(name: str, reads: Any, chans: Mapping, managed: set, known: str) -> None:
    """Node `name`'s name is not reserved and it reads only known channels (`reads`: one
    channel, or several, which may include managed values)."""
    from warpgraph._internal._constants import RESERVED

    if name in RESERVED:
        raise ValueError(f"Node name '{name}' is reserved")
    for c in [reads] if isinstance(reads, str) else reads:
        if c not in chans and (isinstance(reads, str) or c not in managed):
            raise ValueError(f"Node {name} reads channel '{c}' not in known channels: '{known}'")


def check_interrupt_nodes(nodes: Mapping, *selections: Any) -> None:
    """Every node named by the interrupt_before / interrupt_after `selections` exists."""
    for selection in selections:
        if selection != "*":
            for n in selection:
                if n not in nodes:
                    raise ValueError(f"Node {n} not in nodes")


def validate_graph(graph: Any) -> None:
    """LangGraph's checks (and messages) for a Pregel's nodes, channels and keys."""
    from warpgraph._internal._timeout import check_timeout_supported

    chans, managed, known = known_channels(graph.channels)
    subscribed: set[str] = set()
    for name, node in graph.nodes.items():
        if isinstance(node, PregelNode) and node.timeout is not None:
            check_timeout_supported(node.node or node.bound, name=name)
    for name, node in graph.nodes.items():
        if not isinstance(node, PregelNode):
            check_node_reads(name, (), chans, managed, known)  # (a reserved name first)
            raise TypeError(f"Invalid node type {type(node)}, expected PregelNode or NodeBuilder")
        subscribed.update(node.triggers)
        check_node_reads(name, node.channels, chans, managed, known)
    for c in subscribed:
        if c not in chans:
            raise ValueError(f"Subscribed channel '{c}' not in known channels: '{known}'")
    ic = graph.input_channels
    if isinstance(ic, str):
        if ic not in chans:
            raise ValueError(f"Input channel '{ic}' not in known channels: '{known}'")
        if ic not in subscribed:
            raise ValueError(f"Input channel {ic} is not subscribed to by any node")
    else:
        for c in ic:
            if c not in chans:
                raise ValueError(f"Input channel '{c}' not in '{known}'")
        if all(c not in subscribed for c in ic):
            raise ValueError(f"None of the input channels {ic} are subscribed to by any node")
    outs = (
        {graph.output_channels}
        if isinstance(graph.output_channels, str)
        else set(graph.output_channels)
    )
    if isinstance(graph.stream_channels, str):
        outs.add(graph.stream_channels)
    elif graph.stream_channels is not None:
        outs.update(graph.stream_channels)
    for c in outs:
        if c not in chans:
            raise ValueError(f"Output channel '{c}' not in known channels: '{known}'")
    check_interrupt_nodes(graph.nodes, graph.interrupt_after_nodes, graph.interrupt_before_nodes)


def _coerce_timeout(value: Any) -> Any:
    if value is None:
        return None
    from warpgraph.types import TimeoutPolicy

    return TimeoutPolicy.coerce(value)


def _is_retry(p: Any) -> bool:
    from warpgraph.types import RetryPolicy

    return isinstance(p, RetryPolicy)


def _is_pregel(b: Any) -> bool:
    from warpgraph.pregel.main import Pregel

    return isinstance(b, Pregel)
