"""What runs derive from a compiled graph's nodes and channels, kept by one owner.

`derived(graph)` gives the graph's `GraphDerived`: made on first use from the engine spec
the graph holds at that moment, and made again as soon as the graph holds another spec.
`Pregel.validate()` drops the spec (`_spec_cache = None`) whenever nodes or channels may
have changed, so every cache below is invalidated in that one place; nothing else needs
clearing. A run takes the graph's `GraphDerived` once, when its loop is made.

The caches are filled by the modules that know how to compute them (`_algo.lazy_plans`,
`_lone.lone_plans`, `_checkpoint._snapshot_plan`, `output_shape` here); this module only
owns their lifetime.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from warpgraph._internal._constants import TAG_HIDDEN

__all__ = ("GraphDerived", "LonePlan", "NodeInfo", "derived", "lazy_values_ok")


class NodeInfo(NamedTuple):
    """What the loop needs of one node to prepare its tasks."""

    node: Any
    """The node's runnable (None: a node without one, which never runs)."""
    mapper: Any
    """Applied to a pulled task's input (None: the input as read)."""
    metadata: Any
    tags: Any
    retry_policy: Any
    writers: Any
    """The node's writers, flattened (`PregelNode.flat_writers`)."""
    subgraphs: Any
    timeout: Any
    managed: Any
    """`[(key, getter or None)]` when the node reads managed values, else None."""


class LonePlan(NamedTuple):
    """How a lone step runs a node (`_lone.lone_plans`): its task's fields and its plan
    (`_algo.node_plan`; None for a node without one, which only the async driver's lone
    steps run, through the node itself)."""

    node: Any
    mapper: Any
    writers: Any
    subgraphs: Any
    plan: tuple | None


class GraphDerived:
    """The caches derived from one engine spec of a graph (see module doc)."""

    __slots__ = (
        "async_plans",
        "deltas",
        "hidden",
        "lazy_plans",
        "lone_plans",
        "nodes",
        "outputs",
        "snapshot_plans",
        "spec",
        "untracked",
    )

    def __init__(self, graph: Any, spec: Any) -> None:
        self.spec = spec
        # the spec's UntrackedValue channels, and its DeltaChannels (name -> spec)
        self.untracked: frozenset = graph._untracked_channels
        self.deltas: dict = graph._delta_channels
        # output keys -> what a run reads them with (`output_shape`)
        self.outputs: dict[Any, tuple] = {}
        managed = graph._managed_reads
        self.nodes: dict[str, NodeInfo] = {
            n: NodeInfo(
                p.node,
                p.mapper,
                p.metadata,
                p.tags,
                p.retry_policy,
                p.flat_writers,
                p.subgraphs,
                p.timeout,
                managed.get(n),
            )
            for n, p in graph.nodes.items()
        }
        # the nodes whose own tags hide them (`_algo.is_hidden_task`)
        self.hidden = frozenset(n for n, i in self.nodes.items() if i.tags and TAG_HIDDEN in i.tags)
        # per node: how to run it without its config, or None (`_algo.lazy_plans`)
        self.lazy_plans: dict[str, tuple | None] | None = None
        # per node: the async drivers' form of those (`_algo.async_plans`)
        self.async_plans: dict[str, tuple | None] | None = None
        # per node lone steps can run (`_lone.lone_plans`)
        self.lone_plans: dict[str, LonePlan] | None = None
        # output keys -> how snapshots read without an Engine (`_checkpoint._snapshot_plan`)
        self.snapshot_plans: dict[Any, tuple | None] = {}


def derived(graph: Any) -> GraphDerived:
    """The graph's derived caches for its current engine spec (see module doc)."""
    spec = graph._graph_spec
    d = graph.__dict__.get("_derived")
    if d is None or d.spec is not spec:
        d = graph.__dict__["_derived"] = GraphDerived(graph, spec)
    return d


def output_shape(d: GraphDerived, graph: Any, output_keys: Any) -> tuple:
    """What a run of the graph with `output_keys` reads its values with: the keys (a str,
    or a list for `Engine.read`; shared by the runs, never changed), whether the latest
    values may be read lazily (`lazy_values_ok`), and the keys as a frozenset."""
    key = output_keys if isinstance(output_keys, (str, tuple)) else tuple(output_keys)
    shape = d.outputs.get(key)
    if shape is None:
        keys = output_keys if isinstance(output_keys, str) else list(output_keys)
        shape = d.outputs[key] = (
            keys,
            lazy_values_ok(graph, keys),
            frozenset((keys,) if isinstance(keys, str) else keys),
        )
    return shape


_LAZY_TYPES: Any = None


def lazy_values_ok(graph: Any, keys: Any) -> bool:
    """Every output channel changes only through writes that also produce a values chunk
    (LastValue / BinaryOperatorAggregate: no clearing on a new step, consume or finish)."""
    global _LAZY_TYPES
    if _LAZY_TYPES is None:
        from warpgraph.channels import BinaryOperatorAggregate, LastValue

        _LAZY_TYPES = (LastValue, BinaryOperatorAggregate)
    chans = graph.channels  # (asked once per output keys: `output_shape` keeps the answer)
    return all(
        type(chans.get(k)) in _LAZY_TYPES for k in ((keys,) if isinstance(keys, str) else keys)
    )
