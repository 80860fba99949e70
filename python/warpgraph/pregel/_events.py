"""`stream_events` / `astream_events` of compiled graphs.

Versions "v1" and "v2" are langchain-core's event streams (built on the callbacks a traced
run reports, see `_tracing.py`); langchain-core has no synchronous v1/v2 stream, so
`stream_events` raises its NotImplementedError for them. Version "v3" belongs to
`warpgraph.stream` (the graph's `_pregel_stream_v3` / `_apregel_stream_v3`).
"""

from __future__ import annotations

from typing import Any

__all__ = ("astream_events", "stream_events")


def _runnable() -> Any:
    try:
        from langchain_core.runnables import Runnable
    except ImportError as e:  # pragma: no cover - exercised without langchain-core
        raise ImportError(
            "stream_events / astream_events (versions 'v1', 'v2') need langchain-core"
        ) from e
    return Runnable


def _v3(graph: Any, is_async: bool) -> Any:
    entry = getattr(graph, "_apregel_stream_v3" if is_async else "_pregel_stream_v3", None)
    if entry is None:
        raise NotImplementedError(
            "stream_events(version='v3') is provided by warpgraph.stream, "
            "which this build does not include"
        )
    try:  # the v3 stream owns stream_mode / subgraphs: it rejects them itself
        from warpgraph.pregel._stream_v3 import _check_kwargs
    except ImportError:
        _check_kwargs = None
    return entry, _check_kwargs


def stream_events(
    graph: Any, input: Any, config: Any, version: str, transformers: Any, kwargs: dict
) -> Any:
    """`Pregel.stream_events`."""
    return _events(graph, input, config, version, transformers, kwargs, False)


def astream_events(
    graph: Any, input: Any, config: Any, version: str, transformers: Any, kwargs: dict
) -> Any:
    """`Pregel.astream_events` (an async iterator; for "v3" an awaitable run stream)."""
    return _events(graph, input, config, version, transformers, kwargs, True)


def _events(
    graph: Any,
    input: Any,
    config: Any,
    version: str,
    transformers: Any,
    kwargs: dict,
    aio: bool,
) -> Any:
    """The event stream of `version` ("v3": warpgraph.stream's run stream, its kwargs
    checked first; else langchain-core's), async when `aio`."""
    if version == "v3":
        entry, check = _v3(graph, aio)
        if check is not None:
            check(kwargs)
        return entry(input, config, transformers=transformers, **kwargs)
    runnable = _runnable()
    events = runnable.astream_events if aio else runnable.stream_events
    return events(graph, input, config, version=version, **kwargs)
