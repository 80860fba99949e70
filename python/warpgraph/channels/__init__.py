"""Built-in channels (LangGraph's contract and semantics)."""

from warpgraph.channels.any_value import AnyValue
from warpgraph.channels.base import BaseChannel
from warpgraph.channels.binop import BinaryOperatorAggregate
from warpgraph.channels.delta import DeltaChannel
from warpgraph.channels.ephemeral_value import EphemeralValue
from warpgraph.channels.last_value import LastValue, LastValueAfterFinish
from warpgraph.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from warpgraph.channels.topic import Topic
from warpgraph.channels.untracked_value import UntrackedValue

__all__ = (
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
    "UntrackedValue",
)
