"""Type parameters for annotating graphs, nodes and their state (LangGraph's `langgraph.typing`)."""

from warpgraph._internal._generics import (
    ContextT,
    ContextT_contra,
    InputT,
    NodeInputT,
    NodeInputT_contra,
    OutputT,
    StateT,
    StateT_co,
    StateT_contra,
)
from warpgraph._internal._typing import StateLike

__all__ = (
    "ContextT",
    "ContextT_contra",
    "InputT",
    "NodeInputT",
    "NodeInputT_contra",
    "OutputT",
    "StateLike",
    "StateT",
    "StateT_co",
    "StateT_contra",
)
