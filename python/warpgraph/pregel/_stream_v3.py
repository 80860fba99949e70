"""`stream_events(version="v3")` / `astream_events(version="v3")` on Pregel.

A v3 run is an ordinary `stream(..., version="v2", subgraphs=True)` whose stream modes are
what the registered transformers declare, fed part by part into a `StreamMux` by the run
stream that is returned (nothing runs until the caller pulls). Nothing here touches the
per-step path of other runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_STREAM_MESSAGES_V2,
    NS_SEP,
)
from warpgraph.config import ensure_config, patch_configurable

_OWNED_BY_V3 = ("stream_mode", "subgraphs")


def _normalize_stream_transformer_factories(
    specs: Sequence[Callable[[tuple[str, ...]], Any]] | None,
) -> list[Callable[[tuple[str, ...]], Any]]:
    """Transformer specs -> `factory(scope)` callables. A spec is a scope-aware callable (a
    transformer class, a `partial`, a lambda); a built transformer cannot be cloned into
    subgraph scopes and is refused."""
    from warpgraph.stream._types import StreamTransformer

    out: list[Callable[[tuple[str, ...]], Any]] = []
    for spec in specs or ():
        if isinstance(spec, StreamTransformer):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, got "
                f"pre-built instance {type(spec).__name__}. Pass the transformer class or a "
                "factory like `lambda scope: MyTransformer(scope, ...)`."
            )
        if not callable(spec):
            raise TypeError(
                "stream_events(version='v3') transformers must be scope-aware callables, "
                f"got {type(spec).__name__}."
            )
        out.append(_scoped(spec))
    return out


def _scoped(spec: Callable[..., Any]) -> Callable[[tuple[str, ...]], Any]:
    def factory(scope: tuple[str, ...]) -> Any:
        return spec(scope)

    return factory


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    owned = [k for k in _OWNED_BY_V3 if k in kwargs]
    if owned:
        raise TypeError(
            "stream_events(version='v3') / astream_events(version='v3') do not accept "
            f"{', '.join(owned)}; v3 owns these (stream_mode is built from the transformer "
            "mux, subgraphs is forced True so nested namespaces flow through scoped muxes)."
        )


def _caller_scope(graph_config: Any, config: Any) -> tuple[str, ...]:
    """The namespace the call runs under: () at the root, the task's namespace inside a
    node (so the run's own projections match its own events)."""
    ns = ensure_config(graph_config, config)[CONF].get(CONFIG_KEY_CHECKPOINT_NS)
    return tuple(ns.split(NS_SEP)) if ns else ()


def _modes_of(mux: Any) -> list[str]:
    """The stream modes the registered transformers need (and only those)."""
    modes: dict[str, None] = {}
    for transformer in mux._transformers:
        modes.update(dict.fromkeys(getattr(transformer, "required_stream_modes", ())))
    return list(modes)


class StreamEventsMixin:
    """The v3 run streams (Pregel mixes this in; its `stream_events` / `astream_events`
    reach them through `_events`)."""

    stream_transformers: tuple[Callable[[tuple[str, ...]], Any], ...] = ()

    def _v3_mux(self, config: Any, transformers: Any, is_async: bool) -> Any:
        from warpgraph.stream._mux import StreamMux
        from warpgraph.stream.transformers import (
            LifecycleTransformer,
            MessagesTransformer,
            SubgraphTransformer,
            ValuesTransformer,
        )

        builtins = [ValuesTransformer, MessagesTransformer, LifecycleTransformer]
        factories = [
            *builtins,
            SubgraphTransformer,
            *_normalize_stream_transformer_factories(self.stream_transformers),
            *_normalize_stream_transformer_factories(transformers),
        ]
        scope = _caller_scope(self.config, config)  # type: ignore[attr-defined]
        return StreamMux(factories=factories, scope=scope, is_async=is_async)

    def _v3_call(self, mux: Any, config: Any, kwargs: dict[str, Any]) -> tuple[Any, dict]:
        _check_kwargs(kwargs)  # also when called without the stream_events dispatcher
        run_kwargs = {"stream_mode": _modes_of(mux), "subgraphs": True, "version": "v2"}
        return patch_configurable(config, {CONFIG_KEY_STREAM_MESSAGES_V2: True}), {
            **kwargs,
            **run_kwargs,
        }

    def _pregel_stream_v3(
        self,
        input: Any,
        config: Any = None,
        *,
        transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The v3 sync run stream (extra kwargs go to `stream`)."""
        from warpgraph.stream.run_stream import GraphRunStream

        mux = self._v3_mux(config, transformers, is_async=False)
        run_config, run_kwargs = self._v3_call(mux, config, kwargs)
        parts = iter(self.stream(input, run_config, **run_kwargs))  # type: ignore[attr-defined]
        return GraphRunStream(parts, mux)

    async def _apregel_stream_v3(
        self,
        input: Any,
        config: Any = None,
        *,
        transformers: Sequence[Callable[[tuple[str, ...]], Any]] | None = None,
        **kwargs: Any,
    ) -> Any:
        """The v3 async run stream (extra kwargs go to `astream`)."""
        from warpgraph.stream.run_stream import AsyncGraphRunStream

        mux = self._v3_mux(config, transformers, is_async=True)
        run_config, run_kwargs = self._v3_call(mux, config, kwargs)
        parts = self.astream(input, run_config, **run_kwargs).__aiter__()  # type: ignore[attr-defined]
        return AsyncGraphRunStream(parts, mux)
