"""Pregel: a compiled graph (nodes + channels) and its run methods (invoke/stream + async)."""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Generic

from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    CONFIG_KEY_TASK_ID,
    NS_SEP,
    TASKS,
)
from warpgraph._internal._generics import ContextT, InputT, OutputT, StateT
from warpgraph._internal._lc import runnable_face
from warpgraph.channels.base import BaseChannel
from warpgraph.channels.topic import Topic
from warpgraph.config import merge_configs
from warpgraph.errors import (
    ErrorCode,
    GraphDrained,
    GraphRecursionError,
    _DeprecatedSinceV10,
    create_error_message,
)
from warpgraph.pregel import _engine, _events, _tracing
from warpgraph.pregel._batch import BatchMixin
from warpgraph.pregel._checkpoint import SnapshotMixin
from warpgraph.pregel._draw import DrawMixin
from warpgraph.pregel._drive import adrive, drive, setup_loop
from warpgraph.pregel._io import (
    SKIP,
    invoke_result,
    latest_output,
    map_output_chunk,
    v2_mappers,
)
from warpgraph.pregel._live import LiveOut
from warpgraph.pregel._loop import PregelLoop
from warpgraph.pregel._read import NodeBuilder, validate_graph
from warpgraph.pregel._runner import PregelRunner
from warpgraph.pregel._schema import SchemaMixin
from warpgraph.pregel._stream_v3 import StreamEventsMixin, _normalize_stream_transformer_factories
from warpgraph.pregel._update import UpdateMixin
from warpgraph.types import RetryPolicy, Send, ensure_valid_checkpointer

__all__ = ("NodeBuilder", "Pregel", "_normalize_stream_transformer_factories")


@runnable_face
class Pregel(
    SnapshotMixin,
    UpdateMixin,
    SchemaMixin,
    DrawMixin,
    BatchMixin,
    StreamEventsMixin,
    Generic[StateT, ContextT, InputT, OutputT],
):
    """A graph of PregelNodes communicating through channels, run in super-steps."""

    def __init__(
        self,
        *,
        nodes: dict[str, Any],
        channels: dict[str, Any] | None,
        auto_validate: bool = True,
        stream_mode: str = "values",
        stream_eager: bool = False,
        output_channels: str | Sequence[str],
        stream_channels: str | Sequence[str] | None = None,
        interrupt_after_nodes: Any = (),
        interrupt_before_nodes: Any = (),
        input_channels: str | Sequence[str],
        step_timeout: float | None = None,
        debug: bool | None = None,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        retry_policy: Any = (),
        cache_policy: Any = None,
        context_schema: Any = None,
        config: dict | None = None,
        trigger_to_nodes: Mapping[str, Sequence[str]] | None = None,
        name: str = "LangGraph",
        node_error_handler_map: Mapping[str, str] | None = None,
        stream_transformers: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if "config_type" in kwargs:
            warnings.warn(
                "`config_type` is deprecated and will be removed. "
                "Please use `context_schema` instead.",
                category=_DeprecatedSinceV10,
                stacklevel=2,
            )
            config_type = kwargs.pop("config_type")
            if context_schema is None:
                context_schema = config_type
        checkpointer = ensure_valid_checkpointer(checkpointer)
        self.nodes = {k: v.build() if isinstance(v, NodeBuilder) else v for k, v in nodes.items()}
        self.channels = channels if channels is not None else {}
        if TASKS in self.channels and not isinstance(self.channels[TASKS], Topic):
            raise ValueError(f"Channel '{TASKS}' is reserved and cannot be used in the graph.")
        self.channels[TASKS] = Topic(Send, accumulate=False)
        # channels in and out, and how they stream
        self.input_channels, self.output_channels = input_channels, output_channels
        self.stream_channels, self.stream_mode = stream_channels, stream_mode
        self.stream_eager = stream_eager
        # where a run stops: interrupts and the per-step timeout
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        self.step_timeout = step_timeout
        self.debug = bool(debug)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.retry_policy = (
            (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy or ())
        )
        self.cache_policy = cache_policy
        self.context_schema = context_schema
        self.config = config
        self.trigger_to_nodes = trigger_to_nodes or {}
        self.name = name
        self.node_error_handler_map = dict(node_error_handler_map or {})
        self.stream_transformers = tuple(stream_transformers or ())  # stream_events v3
        self._spec_cache: Any = None
        if auto_validate:
            self.validate()

    # ------------------------------------------------------------------ structure
    def validate(self) -> Pregel:
        """Check nodes/channels/keys (LangGraph's messages) and rebuild the engine spec."""
        validate_graph(self)
        t2n: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            for t in node.triggers:
                t2n.setdefault(t, []).append(name)
        self.trigger_to_nodes = t2n
        self._spec_cache = None
        # per-spec caches live in `_derived.derived(self)`, keyed on the spec dropped above
        self.__dict__.pop("_cache_policies_cache", None)
        return self

    @property
    def _graph_spec(self) -> Any:
        spec = self._spec_cache
        if spec is None:
            # (the caches that go with the spec are set before it: a thread that finds the
            # spec, as parallel tasks calling one subgraph do, finds them too)
            chans = {k: v for k, v in self.channels.items() if isinstance(v, BaseChannel)}
            spec = _engine.GraphSpec(
                chans, {n: (list(p.triggers), p.channels) for n, p in self.nodes.items()}
            )
            from warpgraph.channels.untracked_value import UntrackedValue

            self._untracked_cache = frozenset(
                k for k, v in chans.items() if isinstance(v, UntrackedValue)
            )
            from warpgraph.pregel._delta import delta_specs

            self._delta_cache = delta_specs(chans)
            managed = {k: v for k, v in self.channels.items() if not isinstance(v, BaseChannel)}
            self._managed_cache = {
                n: [(k, _managed_getter(managed[k]) if k in managed else None) for k in p.channels]
                for n, p in self.nodes.items()
                if isinstance(p.channels, list) and any(k in managed for k in p.channels)
            }
            self._spec_cache = spec
        return spec

    @property
    def _untracked_channels(self) -> frozenset:
        self._graph_spec  # noqa: B018
        return self._untracked_cache

    @property
    def _delta_channels(self) -> dict:
        """The DeltaChannels (name -> spec); empty for most graphs."""
        self._graph_spec  # noqa: B018
        return self._delta_cache

    @property
    def _managed_reads(self) -> dict:
        self._graph_spec  # noqa: B018
        return self._managed_cache

    def _migrate_checkpoint(self, checkpoint: dict) -> None:
        """Bring a checkpoint saved by an older release to the current layout, in place
        (CompiledStateGraph adds its channel renames)."""
        if checkpoint.get("v", 4) < 4 and checkpoint.get("pending_sends"):
            # v < 4 kept Sends beside the channels; they now live in the tasks channel
            checkpoint["channel_values"][TASKS] = checkpoint.pop("pending_sends")
            checkpoint["channel_versions"][TASKS] = max(checkpoint["channel_versions"].values())

    @property
    def stream_channels_list(self) -> Sequence[str]:
        sc = self.stream_channels_asis
        return [sc] if isinstance(sc, str) else sc

    @property
    def stream_channels_asis(self) -> str | Sequence[str]:
        return self.stream_channels or [
            k for k, v in self.channels.items() if isinstance(v, BaseChannel)
        ]

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        n = name or self.name
        return f"{n}{suffix}" if suffix else n

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Any]]:
        """(namespace, subgraph) pairs; `namespace` selects one (nested ones need recurse)."""
        for name, node in self.nodes.items():
            if (
                namespace is not None
                and namespace != name
                and not namespace.startswith(name + NS_SEP)
            ):
                continue
            graph = node.subgraphs[0] if node.subgraphs else None
            if not graph:
                continue
            if name == namespace:
                yield name, graph
                return
            if namespace is None:
                yield name, graph
            if recurse and isinstance(graph, Pregel):
                child = None if namespace is None else namespace[len(name) + 1 :]
                yield from (
                    (f"{name}{NS_SEP}{n}", s)
                    for n, s in graph.get_subgraphs(namespace=child, recurse=recurse)
                )

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, Any]]:
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def _own_checkpoint_config(self, config: dict) -> dict:
        """checkpointer=True subgraphs keep one history per thread under their bare namespace."""
        if self.checkpointer is not True:
            return config
        ns = config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
        bare = NS_SEP.join(p.split(":")[0] for p in ns.split(NS_SEP))
        return {**config, CONF: {**config[CONF], CONFIG_KEY_CHECKPOINT_NS: bare}}

    def copy(self, update: dict[str, Any] | None = None) -> Pregel:
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.__dict__.update(update or {})
        return out

    def with_config(self, config: dict | None = None, **kwargs: Any) -> Pregel:
        return self.copy({"config": merge_configs(self.config, config, kwargs)})

    # ------------------------------------------------------------------ result cache
    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Drop the cached results of `nodes` (default: all nodes)."""
        from warpgraph.pregel._cache import clear_cache

        clear_cache(self, nodes)

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async twin of `clear_cache`."""
        from warpgraph.pregel._cache import aclear_cache

        await aclear_cache(self, nodes)

    # ------------------------------------------------------------------ run setup
    def _resolve_checkpointer(self, config: dict) -> Any:
        if self.checkpointer is False:
            return None
        conf = config.get(CONF, {})
        if CONFIG_KEY_CHECKPOINTER in conf:
            return conf[CONFIG_KEY_CHECKPOINTER]
        if self.checkpointer is True:
            raise RuntimeError("checkpointer=True cannot be used for root graphs.")
        return self.checkpointer

    def _runner(self) -> Any:
        # one per run (it holds no state between runs): nothing of a run outlives it
        return PregelRunner()

    # ------------------------------------------------------------------ drivers
    def _finish(self, loop: PregelLoop, config: dict | None) -> None:
        if loop.status == "draining":  # stopped before a step: resume with input None
            raise GraphDrained(loop.control.drain_reason or "shutdown")
        if loop.status == "out_of_steps":
            limit = loop.config["recursion_limit"]
            raise GraphRecursionError(
                create_error_message(
                    message=(
                        f"Recursion limit of {limit} reached "
                        "without hitting a stop condition. You can increase the "
                        "limit by setting the `recursion_limit` config key."
                    ),
                    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
                )
            )

    # ------------------------------------------------------------------ event streams
    def stream_events(
        self,
        input: Any,
        config: dict | None = None,
        *,
        version: str = "v2",
        transformers: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Events of a run: "v3" run streams (warpgraph.stream); "v1"/"v2" are async only."""
        return _events.stream_events(self, input, config, version, transformers, kwargs)

    def astream_events(
        self,
        input: Any,
        config: dict | None = None,
        *,
        version: str = "v2",
        transformers: Any = None,
        **kwargs: Any,
    ) -> Any:
        """langchain-core's event stream ("v1"/"v2") or a "v3" run stream (awaitable)."""
        return _events.astream_events(self, input, config, version, transformers, kwargs)

    # ------------------------------------------------------------------ public run API
    def stream(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        control: Any = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Stream chunks of a run (LangGraph's shapes for every mode / list of modes)."""
        setup = (context, stream_mode, print_mode, output_keys, interrupt_before)
        setup += (interrupt_after, durability, subgraphs, debug, version, control)
        loop, saver, out, mapping = self._stream_setup(input, config, setup, kwargs, aio=False)
        yield from self._run(loop, saver, out, input, config, version, mapping)

    async def astream(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        control: Any = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of `stream`."""
        setup = (context, stream_mode, print_mode, output_keys, interrupt_before)
        setup += (interrupt_after, durability, subgraphs, debug, version, control)
        loop, saver, out, mapping = self._stream_setup(input, config, setup, kwargs, aio=True)
        chunks = self._arun(loop, saver, out, input, config, version, mapping)
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            await chunks.aclose()  # a consumer stopping mid-run closes the run's stages

    def _stream_setup(
        self, input: Any, config: Any, setup: tuple, kwargs: dict, aio: bool
    ) -> tuple:
        """The loop, saver and output queue of a streamed run, and the arguments that map
        its chunks to the caller's shapes (`map_output_chunk` after the chunk)."""
        context, stream_mode, print_mode, output_keys, interrupt_before = setup[:5]
        interrupt_after, durability, subgraphs, debug, version, control = setup[5:]
        durability = _legacy_durability(durability, kwargs.pop("checkpoint_during", None))
        if stream_mode is None:
            # a nested run (inside a parent's task) reports values; a root run its default
            nested = config is not None and CONFIG_KEY_TASK_ID in config.get(CONF, {})
            stream_mode = "values" if nested else self.stream_mode
        if debug or self.debug:
            print_mode = ["updates", "values"]
        out: deque = LiveOut() if aio else deque()
        loop, saver = setup_loop(
            self,
            input,
            config,
            context=context,
            stream_mode=stream_mode,
            print_mode=print_mode,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=subgraphs,
            put=out.append,
            capture=None,
            control=control,
        )
        mapping = (stream_mode, print_mode, subgraphs, version, v2_mappers(self, version))
        return loop, saver, out, mapping

    def invoke(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        version: str = "v1",
        control: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Run to completion; the final values (with `__interrupt__` if interrupted)."""
        if stream_mode != "values" or version != "v1" or print_mode or kwargs:
            setup = (context, stream_mode, print_mode, output_keys, interrupt_before)
            setup += (interrupt_after, durability, version, control)
            options = _invoke_as_stream(self, setup, kwargs)
            chunks = list(self.stream(input, config, **options))
            return invoke_result(chunks, stream_mode, version)
        setup = (context, output_keys, interrupt_before, interrupt_after, durability, control)
        loop, saver = self._invoke_setup(input, config, setup)
        for _ in self._run(loop, saver, None, input, config, version, None):
            pass
        return latest_output(loop)

    async def ainvoke(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        version: str = "v1",
        control: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Async twin of `invoke`."""
        if stream_mode != "values" or version != "v1" or print_mode or kwargs:
            setup = (context, stream_mode, print_mode, output_keys, interrupt_before)
            setup += (interrupt_after, durability, version, control)
            options = _invoke_as_stream(self, setup, kwargs)
            chunks = [c async for c in self.astream(input, config, **options)]
            return invoke_result(chunks, stream_mode, version)
        setup = (context, output_keys, interrupt_before, interrupt_after, durability, control)
        loop, saver = self._invoke_setup(input, config, setup)
        async for _ in self._arun(loop, saver, None, input, config, version, None):
            pass
        return latest_output(loop)

    def _invoke_setup(self, input: Any, config: Any, setup: tuple) -> tuple:
        """The loop and saver of an invoke that keeps only the latest values (no queue)."""
        context, output_keys, interrupt_before, interrupt_after, durability, control = setup
        loop, saver = setup_loop(
            self,
            input,
            config,
            context=context,
            stream_mode="values",
            print_mode=(),
            output_keys=output_keys if output_keys is not None else self.output_channels,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            subgraphs=False,
            put=None,
            capture=[],
            control=control,
        )
        return loop, saver

    # ------------------------------------------------------------------ a run's outer stage
    # `_run` and `_arun` are one run's outer stage for every entry point (stream, invoke
    # and their async twins): tracing around the driven loop, then `_finish`. They differ
    # only where the async one awaits (and closes its driver explicitly: an async
    # generator is not closed when dropped).
    def _run(
        self, loop: Any, saver: Any, out: Any, input: Any, config: Any, version: str, mapping: Any
    ) -> Iterator[Any]:
        """Drive `loop` to its end under its chain run (when traced), then `_finish` it.
        Yields each chunk mapped by `map_output_chunk(chunk, *mapping)`; with `mapping`
        None (invoke) nothing."""
        run = _tracing.begin(self, loop, input, version) if _tracing.wanted(loop) else None
        chunks = drive(loop, saver, out, self._runner(), self.step_timeout)
        try:
            if run is not None:
                chunks = _tracing.observe(loop, chunks)
            if mapping is None:
                for _ in chunks:
                    pass
            else:
                for chunk in chunks:
                    if (c := map_output_chunk(chunk, *mapping)) is not SKIP:
                        yield c
            self._finish(loop, config)
        except BaseException as e:
            if run is not None:
                run.on_chain_error(e)
            raise
        if run is not None:
            run.on_chain_end(_tracing.output(loop))

    async def _arun(
        self, loop: Any, saver: Any, out: Any, input: Any, config: Any, version: str, mapping: Any
    ) -> AsyncIterator[Any]:
        """Async twin of `_run`."""
        run = await _tracing.abegin(self, loop, input, version) if _tracing.wanted(loop) else None
        driven = adrive(loop, saver, out, self._runner(), self.step_timeout)
        try:
            try:
                chunks = driven if run is None else _tracing.aobserve(loop, driven)
                if mapping is None:
                    async for _ in chunks:
                        pass
                else:
                    async for chunk in chunks:
                        if (c := map_output_chunk(chunk, *mapping)) is not SKIP:
                            yield c
            finally:
                await driven.aclose()  # a consumer stopping mid-step cancels the step's tasks
            self._finish(loop, config)
        except BaseException as e:
            if run is not None:
                await _tracing.shielded(run.on_chain_error(e))
            raise
        if run is not None:
            await run.on_chain_end(_tracing.output(loop))


def _managed_getter(spec: Any) -> Any:
    get = getattr(spec, "get", None)
    if get is None:
        raise TypeError(
            f"Unsupported managed value {spec!r}: expected a class with get(scratchpad)"
        )
    return get


def _invoke_modes(stream_mode: Any, version: str) -> Any:
    """What invoke streams: v1 values also needs the updates chunks (interrupts)."""
    return ["updates", "values"] if stream_mode == "values" and version == "v1" else stream_mode


def _invoke_as_stream(graph: Any, setup: tuple, kwargs: dict) -> dict:
    """The `stream` arguments of an invoke that needs more than the latest values."""
    context, stream_mode, print_mode, output_keys, interrupt_before = setup[:5]
    interrupt_after, durability, version, control = setup[5:]
    return {
        "context": context,
        "stream_mode": _invoke_modes(stream_mode, version),
        "print_mode": print_mode,
        "output_keys": output_keys if output_keys is not None else graph.output_channels,
        "interrupt_before": interrupt_before,
        "interrupt_after": interrupt_after,
        "durability": durability,
        "version": version,
        "control": control,
        **kwargs,
    }


def _legacy_durability(durability: Any, checkpoint_during: bool | None) -> Any:
    """`durability` from the deprecated `checkpoint_during` flag (True: async, False: exit)."""
    if checkpoint_during is None:
        return durability
    warnings.warn(
        "`checkpoint_during` is deprecated and will be removed. Please use `durability` instead.",
        category=_DeprecatedSinceV10,
        stacklevel=4,
    )
    if durability is not None:
        raise ValueError(
            "Cannot use both `checkpoint_during` and `durability` parameters. "
            "Please use `durability` instead."
        )
    return "async" if checkpoint_during else "exit"
