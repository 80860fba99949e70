"""Type variables of the public API (LangGraph's `langgraph.typing`): the state a graph holds,
its run-scoped context, its input and output schemas and a node's input."""

from __future__ import annotations

from warpgraph._internal._compat import TypeVar
from warpgraph._internal._typing import StateLike

__all__ = ("ContextT", "InputT", "OutputT", "StateT", "StateT_co", "StateT_contra")

# the state of a graph (with its variance-specific twins)
StateT = TypeVar("StateT", bound=StateLike)
StateT_contra = TypeVar("StateT_contra", bound=StateLike, contravariant=True)
StateT_co = TypeVar("StateT_co", bound=StateLike, covariant=True)

# run-scoped context (None unless a context schema is given)
ContextT = TypeVar("ContextT", bound=StateLike | None, default=None)
ContextT_contra = TypeVar(
    "ContextT_contra", bound=StateLike | None, contravariant=True, default=None
)

# a StateGraph's input and output schemas (the state schema unless given)
InputT = TypeVar("InputT", bound=StateLike, default=StateT)
OutputT = TypeVar("OutputT", bound=StateLike, default=StateT)

# what a node receives
NodeInputT = TypeVar("NodeInputT", bound=StateLike)
NodeInputT_contra = TypeVar("NodeInputT_contra", bound=StateLike, contravariant=True)
