"""warpgraph: a LangGraph-compatible graph runtime with a Rust core."""

from warpgraph._core import __version__

__all__ = ("__version__",)
