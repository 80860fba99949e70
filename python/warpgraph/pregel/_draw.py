"""`get_graph()`: the nodes and edges of a compiled graph, found by a dry run of its
channels.

Nothing user-written runs. Starting from an empty input, each step runs only the tasks'
plain channel writers (on no value: edges and joins write their trigger channels) and
applies the writes a writer declares for drawing (conditional edges with a path map,
`destinations=`, `Command[Literal[...]]` returns, END routes); the engine then finds the
next step's tasks. An edge goes from each writer of a channel to the tasks it triggers
(a task no such write explains gets a conditional edge from every task of the step before).
Nodes that are subgraphs are drawn inside out under `xray`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from warpgraph._internal._constants import CONF, CONFIG_KEY_READ, CONFIG_KEY_SEND, INPUT
from warpgraph.channels.base import BaseChannel
from warpgraph.channels.last_value import LastValueAfterFinish
from warpgraph.constants import END, START

if TYPE_CHECKING:
    from warpgraph.pregel._drawing import Graph

__all__ = ("DrawMixin", "draw_pregel")

_DRY_RUN_ID = "00000000-0000-6000-8000-000000000000"
_STEP_LIMIT = 250


class _Link(NamedTuple):
    """A write seen by the dry run: the channel (or, inverted, the writing node), whether a
    condition chose it, and its label."""

    end: str
    conditional: bool
    label: str | None


class _Arrow(NamedTuple):
    source: str
    target: str
    conditional: bool
    label: str | None


def _identity_bound() -> Any:
    """What LangGraph's nodes without a bound runnable run (a RunnableCallable)."""
    from warpgraph._internal._runnable import RunnableCallable

    return RunnableCallable(lambda value: value, name=None, trace=False)


class _Task:
    __slots__ = ("config", "name", "path", "triggers", "writers", "writes")

    def __init__(self, engine: Any, name: str, path: Any, triggers: Any, writers: list) -> None:
        from warpgraph.pregel._algo import _local_read

        self.name, self.path, self.triggers, self.writers = name, path, triggers, writers
        self.writes: list[tuple[str, Any]] = []
        self.config = {
            CONF: {
                CONFIG_KEY_SEND: self.writes.extend,
                CONFIG_KEY_READ: partial(_local_read, engine, self.writes),
            }
        }


class _DryRun:
    def __init__(self, pregel: Any) -> None:
        from warpgraph.pregel import _engine

        self.pregel = pregel
        self.engine = _engine.Engine(pregel._graph_spec, None)
        root = pregel.channels.get("__root__")
        self.blank = root.ValueType() if isinstance(root, BaseChannel) else None
        self.arrows: set[_Arrow] = set()
        self.sources: dict[str, set[_Link]] = {}
        self.step_sources: dict[str, set[_Link]] = {}
        self.declared: defaultdict[str, set[_Link]] = defaultdict(set)
        self.seen_writers: set[int] = set()
        self.deferred = {
            key.split(":", 2)[-1]
            for key, spec in pregel.channels.items()
            if isinstance(spec, LastValueAfterFinish)
        }

    def tasks(self, step: int) -> list[_Task]:
        nodes = self.pregel.nodes
        out = []
        for _id, name, path, triggers, _input in self.engine.prepare_next_tasks(
            _DRY_RUN_ID, "", step
        ):
            out.append(_Task(self.engine, name, path, triggers, list(nodes[name].flat_writers)))
        return out

    def run_writers(self, tasks: list[_Task]) -> dict[tuple, str | None]:
        from warpgraph.pregel._write import ChannelWrite

        chosen: dict[tuple, str | None] = {}
        for task in tasks:
            for writer in task.writers:
                if isinstance(writer, ChannelWrite):
                    writer.invoke(self.blank, task.config)
                if id(writer) in self.seen_writers:
                    continue
                self.seen_writers.add(id(writer))
                declared = ChannelWrite.get_static_writes(writer)
                if not declared:
                    continue
                kept = []
                for channel, value, label in declared:
                    if channel == END:  # drawn as an edge at once, never written
                        self.arrows.add(_Arrow(task.name, END, True, label))
                        continue
                    kept.append((channel, value, label))
                    chosen[(task.name, channel, value or None)] = label
                    self.declared[task.name].add(_Link(channel, True, label))
                task.writes.extend((channel, value) for channel, value, _ in kept)
        return chosen

    def run(self) -> list[_Task]:
        """Dry-run the graph; returns the first step's tasks."""
        pregel = self.pregel
        from warpgraph.pregel._io import map_input

        inputs = map_input(pregel.input_channels, {})
        self.engine.apply_writes([(INPUT, (), (), inputs)], "int")
        tasks = first = self.tasks(-1)
        for step in range(-1, _STEP_LIMIT):
            if not tasks:
                break
            chosen = self.run_writers(tasks)
            self.step_sources = {}
            for task in tasks:
                links = {
                    _Link(
                        ch,
                        (task.name, ch, v or None) in chosen,
                        chosen.get((task.name, ch, v or None)),
                    )
                    for ch, v in task.writes
                }
                self.step_sources[task.name] = links | self.declared.get(task.name, set())
            self.sources.update(self.step_sources)
            writers_of: defaultdict[str, set[_Link]] = defaultdict(set)
            for source, links in self.sources.items():
                for channel, conditional, label in links:
                    writers_of[channel].add(_Link(source, conditional, label))
            self.engine.apply_writes([(t.name, t.path, t.triggers, t.writes) for t in tasks], "int")
            tasks = self.tasks(step)
            for task in tasks:
                explained = False
                for trigger in task.triggers:
                    for source, conditional, label in sorted(writers_of[trigger]):
                        self.arrows.add(_Arrow(source, task.name, conditional, label))
                        if _Link(trigger, conditional, label) in self.step_sources.get(source, ()):
                            explained = True
                        else:
                            self.sources[source].discard(_Link(trigger, conditional, label))
                if not explained:
                    for source in self.step_sources:
                        self.arrows.add(_Arrow(source, task.name, True, None))
        return first


def _add_edge(graph: Graph, source: str, target: str, data: Any = None, cond: bool = False) -> None:
    if any(e.source == source and e.target == target for e in graph.edges):
        return
    if target == END and target not in graph.nodes:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, cond)


def _node_metadata(pregel: Any, name: str, node: Any, deferred: set[str]) -> dict | None:
    meta = dict(node.metadata or {})
    if name in deferred:
        meta["defer"] = True
    before = name in pregel.interrupt_before_nodes
    after = name in pregel.interrupt_after_nodes
    if before or after:
        meta["__interrupt"] = ",".join(w for w, on in (("before", before), ("after", after)) if on)
    tools = getattr(node.bound, "tools_by_name", None)  # a prebuilt ToolNode
    if isinstance(tools, Mapping) and tools:
        meta["__tools"] = list(tools)
    return meta or None


def _inline_subgraph(graph: Graph, name: str, sub: Graph) -> None:
    """Replace node `name` by `sub`'s nodes (ids `name:...`), without its own start / end
    when those have a single edge."""
    if len(sub.nodes) <= 1 or name not in graph.nodes:
        return
    if not sub.first_node() or not sub.last_node():
        return
    sub.trim_first_node()
    sub.trim_last_node()
    graph.nodes.pop(name)
    first, last = graph.extend(sub, prefix=name)
    for i, e in enumerate(graph.edges):
        if e.source == name and last is not None:
            e = e.copy(source=last.id)
        if e.target == name and first is not None:
            e = e.copy(target=first.id)
        graph.edges[i] = e


def draw_pregel(pregel: Any, subgraphs: dict[str, Graph]) -> Graph:
    """The drawn graph of `pregel` (warpgraph's Graph class), subgraphs inlined."""
    from warpgraph.pregel._drawing import Graph

    dry = _DryRun(pregel)
    first = dry.run()
    graph = Graph()
    for name, node in pregel.nodes.items():
        bound = node.bound if node.bound is not None else _identity_bound()
        graph.add_node(bound, name, metadata=_node_metadata(pregel, name, node, dry.deferred))
    if START not in pregel.nodes:
        graph.add_node(None, START)
        for task in first:
            _add_edge(graph, START, task.name)
    arrows = sorted(dry.arrows)
    for source, target, conditional, label in arrows:
        _add_edge(graph, source, target, label if label != target else None, conditional)
    ends = {a.target for a in arrows if a.target != END}.difference(a.source for a in arrows)
    if ends:
        for source in sorted(ends):
            _add_edge(graph, source, END)
    elif len(dry.step_sources) == 1 and not any(a.target == END for a in arrows):
        for source in sorted(dry.step_sources):
            _add_edge(graph, source, END, cond=True)
    for name, sub in subgraphs.items():
        _inline_subgraph(graph, name, sub)
    return graph


def _next_xray(xray: int | bool) -> int | bool:
    return xray if isinstance(xray, bool) or xray <= 0 else xray - 1


class DrawMixin:
    """`get_graph` / `aget_graph` of `Pregel`."""

    def _drawing(self, config: Any, xray: int | bool) -> Graph:
        subgraphs: dict[str, Graph] = {}
        if xray:
            for name, sub in self.get_subgraphs():  # type: ignore[attr-defined]
                subgraphs[name] = _sub_drawing(sub, config, _next_xray(xray))
        return draw_pregel(self, subgraphs)

    def get_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        """A drawable graph of the nodes and edges (`xray`: draw subgraphs inside, that
        many levels deep, or all with True)."""
        from warpgraph.pregel._drawing import to_public

        return to_public(self._drawing(config, xray))

    async def aget_graph(self, config: Any = None, *, xray: int | bool = False) -> Any:
        """Async twin of `get_graph`."""
        return self.get_graph(config, xray=xray)


def _sub_drawing(sub: Any, config: Any, xray: int | bool) -> Graph:
    drawing = getattr(sub, "_drawing", None)
    if drawing is not None:
        return drawing(config, xray)
    from warpgraph.pregel._drawing import from_foreign

    return from_foreign(sub.get_graph(config, xray=xray))
