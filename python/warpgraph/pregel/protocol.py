"""The protocol every runnable graph (local Pregel or remote) implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator
from typing import Any

__all__ = ("PregelProtocol", "StreamChunk", "StreamProtocol")

StreamChunk = tuple[tuple[str, ...], str, Any]
"""What a stream sink is handed: (namespace, mode, payload)."""


class StreamProtocol:
    """A stream sink: `modes` it accepts and a callable taking (namespace, mode, payload)."""

    __slots__ = ("__call__", "modes")

    def __init__(self, func: Any, modes: set[str]) -> None:
        self.__call__ = func
        self.modes = modes


class PregelProtocol(ABC):
    """Run and state methods of a graph."""

    @abstractmethod
    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]: ...

    @abstractmethod
    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]: ...

    @abstractmethod
    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any: ...

    @abstractmethod
    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any: ...

    @abstractmethod
    def get_state(self, config: Any, *, subgraphs: bool = False) -> Any: ...

    @abstractmethod
    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> Any: ...

    @abstractmethod
    def get_state_history(self, config: Any, **kwargs: Any) -> Iterator[Any]: ...

    @abstractmethod
    def aget_state_history(self, config: Any, **kwargs: Any) -> AsyncIterator[Any]: ...
