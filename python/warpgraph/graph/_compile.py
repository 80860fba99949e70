"""StateGraph builder -> Pregel channels, nodes and writers (LangGraph's exact layout)."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from warpgraph._internal._constants import TAG_HIDDEN, TASKS
from warpgraph.channels.ephemeral_value import EphemeralValue
from warpgraph.channels.last_value import LastValueAfterFinish
from warpgraph.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from warpgraph.channels.topic import Topic
from warpgraph.constants import END, START
from warpgraph.graph._branch import BranchSpec, branch_to, fresh_reader
from warpgraph.graph._schema import ROOT, is_managed_value, pick_mapper
from warpgraph.graph._updates import control_branch, control_static, root_updates, state_updates
from warpgraph.pregel._write import ChannelWrite, ChannelWriteEntry, ChannelWriteTupleEntry

if TYPE_CHECKING:
    from warpgraph.graph._compiled import CompiledStateGraph
    from warpgraph.graph.state import StateGraph

__all__ = ("Layout", "NodePlan", "build_layout", "compile_graph")


@dataclass
class NodePlan:
    """Everything a PregelNode is built from."""

    triggers: list[str]
    channels: str | list[str]
    bound: Any = None
    writers: list[Any] = field(default_factory=list)
    mapper: Any = None
    retry_policy: Any = None
    cache_policy: Any = None
    timeout: Any = None
    trace_policy: Any = None
    is_error_handler: bool = False
    error_handler_node: str | None = None
    metadata: Any = None
    tags: list[str] | None = None
    subgraphs: list[Any] = field(default_factory=list)


@dataclass
class Layout:
    channels: dict[str, Any]
    nodes: dict[str, NodePlan]
    output_channels: str | list[str]
    stream_channels: str | list[str]
    schema_to_mapper: dict[Any, Any]

    @property
    def trigger_to_nodes(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            for trigger in node.triggers:
                out.setdefault(trigger, []).append(name)
        return out


def _send_type() -> type:
    from warpgraph.types import Send

    return Send


class _LayoutBuilder:
    def __init__(self, builder: StateGraph) -> None:
        self.b = builder
        self.mappers: dict[Any, Any] = {}
        self.nodes: dict[str, NodePlan] = {}
        self.channels: dict[str, Any] = {
            **builder.channels,
            **builder.managed,
            START: EphemeralValue(builder.input_schema),
            TASKS: Topic(_send_type(), accumulate=False),
        }

    def mapper_for(self, schema: Any, keys: list[str]) -> Any:
        if schema not in self.mappers:
            self.mappers[schema] = pick_mapper(keys, schema)
        return self.mappers[schema]

    def update_writer(self, output_keys: list[str], ends: Any) -> ChannelWrite:
        mapper = root_updates if output_keys == [ROOT] else state_updates(output_keys)
        static = control_static(ends) if ends is not None else None
        return ChannelWrite(
            (
                ChannelWriteTupleEntry(mapper=mapper),
                ChannelWriteTupleEntry(mapper=control_branch, static=static),
            )
        )

    def attach_start(self) -> None:
        b = self.b
        keys = [k for k, v in b.schemas[b.input_schema].items() if not is_managed_value(v)]
        self.nodes[START] = NodePlan(
            triggers=[START],
            channels=START,
            tags=[TAG_HIDDEN],
            writers=[self.update_writer(keys, None)],
        )

    def attach_node(self, name: str) -> None:
        b = self.b
        spec = b.nodes[name]
        output_keys = list(b.channels) + list(b.managed)
        read = list(b.schemas[spec.input_schema])
        trigger = branch_to(name)
        self.channels[trigger] = (
            LastValueAfterFinish(Any) if spec.defer else EphemeralValue(Any, guard=False)
        )
        self.nodes[name] = NodePlan(
            triggers=[trigger],
            channels=ROOT if read == [ROOT] else read,
            bound=spec.runnable,
            writers=[self.update_writer(output_keys, spec.ends)],
            mapper=self.mapper_for(spec.input_schema, read),
            retry_policy=spec.retry_policy,
            cache_policy=spec.cache_policy,
            timeout=spec.timeout,
            trace_policy=spec.trace_policy,
            metadata=spec.metadata,
            subgraphs=find_subgraphs(spec.runnable),
            is_error_handler=spec.is_error_handler,
            error_handler_node=spec.error_handler_node,
        )

    def attach_edge(self, start: str, end: str) -> None:
        if end != END:
            self.nodes[start].writers.append(
                ChannelWrite((ChannelWriteEntry(branch_to(end), None),))
            )

    def attach_join(self, starts: tuple[str, ...], end: str) -> None:
        if end == END:
            return
        channel = f"join:{'+'.join(starts)}:{end}"
        barrier = NamedBarrierValueAfterFinish if self.b.nodes[end].defer else NamedBarrierValue
        self.channels[channel] = barrier(str, set(starts))
        self.nodes[end].triggers.append(channel)
        for start in starts:
            self.nodes[start].writers.append(ChannelWrite((ChannelWriteEntry(channel, start),)))

    def attach_branch(self, start: str, branch: BranchSpec) -> None:
        b = self.b
        schema = branch.input_schema or (
            b.nodes[start].input_schema if start in b.nodes else b.state_schema
        )
        keys = list(b.schemas[schema])
        select: str | list[str] = keys[0] if keys == [ROOT] else keys
        reader = fresh_reader(select, self.mapper_for(schema, keys))
        self.nodes[start].writers.append(branch.run(reader))

    def build(self) -> Layout:
        b = self.b
        self.attach_start()
        for name in b.nodes:
            self.attach_node(name)
        # edges are sets (LangGraph's public attributes); iterating them the same way as
        # LangGraph keeps the order of a task's writes, hence of channel_versions, equal
        for start, end in b.edges:
            self.attach_edge(start, end)
        for starts, end in b.waiting_edges:
            self.attach_join(starts, end)
        for start, branches in b.branches.items():
            for branch in branches.values():
                self.attach_branch(start, branch)
        out_schema = b.schemas[b.output_schema]
        output: str | list[str] = (
            ROOT
            if len(out_schema) == 1 and ROOT in out_schema
            else [k for k, v in out_schema.items() if not is_managed_value(v)]
        )
        stream: str | list[str] = (
            ROOT
            if len(b.channels) == 1 and ROOT in b.channels
            else [k for k, v in b.channels.items() if not is_managed_value(v)]
        )
        return Layout(self.channels, self.nodes, output, stream, self.mappers)


def build_layout(builder: StateGraph) -> Layout:
    """Channels, node plans and output channels of a validated builder."""
    return _LayoutBuilder(builder).build()


def find_subgraphs(runnable: Any) -> list[Any]:
    """A compiled graph used as the node itself, or reached by the node's code."""
    try:
        from warpgraph.pregel._utils import find_subgraph_pregel
    except ImportError:  # runtime not available: nothing can be a subgraph
        return []
    found = find_subgraph_pregel(runnable)
    return [found] if found is not None else []


def validate_layout(layout: Layout, interrupt_before: Any, interrupt_after: Any) -> None:
    """LangGraph's Pregel graph validation, with its messages (pregel's own checks)."""
    from warpgraph.pregel._read import check_interrupt_nodes, check_node_reads, known_channels

    chans, managed, known = known_channels(layout.channels)
    for name, node in layout.nodes.items():
        check_node_reads(name, node.channels, chans, managed, known)
    check_interrupt_nodes(layout.nodes, interrupt_after, interrupt_before)


@functools.lru_cache(maxsize=4)
def _node_params(cls: type) -> tuple[Any, bool]:
    """The parameters of a node class's constructor, and whether it takes **kwargs (read
    once per class: `inspect.signature` costs more than building the node)."""
    params = inspect.signature(cls).parameters
    return params, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _pregel_node(plan: NodePlan) -> Any:
    from warpgraph.pregel._read import PregelNode

    params, accepts_any = _node_params(PregelNode)
    kwargs: dict[str, Any] = {
        "triggers": plan.triggers,
        "channels": plan.channels,
        "writers": plan.writers,
        "mapper": plan.mapper,
        "retry_policy": plan.retry_policy,
        "metadata": plan.metadata,
        "tags": plan.tags,
        "subgraphs": plan.subgraphs,
    }
    if plan.bound is not None or params["bound"].default is inspect.Parameter.empty:
        kwargs["bound"] = plan.bound if plan.bound is not None else _identity()
    if plan.is_error_handler:
        kwargs["is_error_handler"] = True
    if plan.error_handler_node is not None:
        kwargs["error_handler_node"] = plan.error_handler_node
    for attr in ("cache_policy", "timeout", "trace_policy"):
        value = getattr(plan, attr)
        if value is not None and (attr in params or accepts_any):
            kwargs[attr] = value
    return PregelNode(**kwargs)


def _identity() -> Any:
    from warpgraph._internal._runnable import RunnableCallable

    return RunnableCallable(lambda input: input, name=None, trace=False)


def compile_graph(builder: StateGraph, **options: Any) -> CompiledStateGraph:
    """Build the CompiledStateGraph for a validated builder."""
    from warpgraph.graph._compiled import CompiledStateGraph
    from warpgraph.pregel.main import Pregel

    layout = build_layout(builder)
    validate_layout(layout, options["interrupt_before"], options["interrupt_after"])
    nodes = {name: _pregel_node(plan) for name, plan in layout.nodes.items()}
    for name, node in nodes.items():
        if node.timeout is not None:
            from warpgraph._internal._timeout import check_timeout_supported

            check_timeout_supported(node.node or node.bound, name=name)
    kwargs: dict[str, Any] = {
        "nodes": nodes,
        "channels": layout.channels,
        "input_channels": START,
        "output_channels": layout.output_channels,
        "stream_channels": layout.stream_channels,
        "interrupt_before_nodes": options["interrupt_before"],
        "interrupt_after_nodes": options["interrupt_after"],
        "checkpointer": options["checkpointer"],
        "store": options["store"],
        "context_schema": builder.context_schema,
        "name": options["name"],
        "stream_mode": "updates",
        "trigger_to_nodes": layout.trigger_to_nodes,
        "node_error_handler_map": builder._node_error_handler_map,
        "stream_transformers": options.get("stream_transformers"),
    }
    accepted = inspect.signature(Pregel.__init__).parameters
    for extra in ("debug", "cache", "auto_validate"):
        if extra in accepted:
            kwargs[extra] = False if extra == "auto_validate" else options[extra]
    compiled = CompiledStateGraph(
        builder=builder, schema_to_mapper=layout.schema_to_mapper, **kwargs
    )
    compiled._output_mapper = pick_mapper(_as_list(layout.output_channels), builder.output_schema)
    compiled._state_mapper = pick_mapper(_as_list(layout.stream_channels), builder.state_schema)
    return compiled


def _as_list(channels: str | list[str]) -> list[str]:
    return [channels] if isinstance(channels, str) else list(channels)
