"""Graph builders: StateGraph, MessagesState, add_messages."""

from warpgraph.constants import END, START
from warpgraph.graph.message import MessageGraph, MessagesState, add_messages
from warpgraph.graph.state import StateGraph

__all__ = (
    "END",
    "START",
    "MessageGraph",
    "MessagesState",
    "StateGraph",
    "add_messages",
)
