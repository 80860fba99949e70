"""The Pregel runtime: compiled graphs and their super-step loop."""

from warpgraph.pregel.main import NodeBuilder, Pregel

__all__ = ("NodeBuilder", "Pregel")
