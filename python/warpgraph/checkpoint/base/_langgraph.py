"""Adapter presenting a warpgraph saver as a `langgraph.checkpoint.base.BaseCheckpointSaver`."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver as _LGBase
from langgraph.checkpoint.base import CheckpointTuple as _LGTuple

from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


def _lg(tup: Any) -> Any:
    return None if tup is None else _LGTuple(*tup)


class LangGraphSaverAdapter(_LGBase):
    """Delegates every saver method to a warpgraph saver; values decode to LangGraph's types.

    The adapter shares the wrapped saver's storage: writes through either are visible to both.
    """

    def __init__(self, saver: Any) -> None:
        inner = copy.copy(saver)
        if isinstance(inner.serde, JsonPlusSerializer):
            inner.serde = inner.serde._with_target("langgraph")
        self.inner = inner
        self.wrapped = saver
        self.serde = inner.serde

    @property
    def config_specs(self) -> list:
        return self.inner.config_specs

    def get_tuple(self, config: Any) -> Any:
        return _lg(self.inner.get_tuple(config))

    def list(self, config: Any, **kwargs: Any) -> Iterator[Any]:
        for tup in self.inner.list(config, **kwargs):
            yield _lg(tup)

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return self.inner.put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self, config: Any, writes: Sequence[Any], task_id: str, task_path: str = ""
    ) -> None:
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.inner.delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.inner.copy_thread(source_thread_id, target_thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.inner.prune(thread_ids, strategy=strategy)

    async def aget_tuple(self, config: Any) -> Any:
        return _lg(await self.inner.aget_tuple(config))

    async def alist(self, config: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async for tup in self.inner.alist(config, **kwargs):
            yield _lg(tup)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        return await self.inner.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self, config: Any, writes: Sequence[Any], task_id: str, task_path: str = ""
    ) -> None:
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self.inner.adelete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self.inner.acopy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self.inner.aprune(thread_ids, strategy=strategy)

    def get_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Any:
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    async def aget_delta_channel_history(self, *, config: Any, channels: Sequence[str]) -> Any:
        return await self.inner.aget_delta_channel_history(config=config, channels=channels)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Any) -> Any:
        clone = self.wrapped.with_allowlist(extra_allowlist)
        return self if clone is self.wrapped else LangGraphSaverAdapter(clone)


def wrap(saver: Any) -> LangGraphSaverAdapter:
    """`saver` as a LangGraph saver (a LangGraph saver is returned unchanged)."""
    if isinstance(saver, LangGraphSaverAdapter) or type(saver).__module__.startswith("langgraph."):
        return saver
    return LangGraphSaverAdapter(saver)
