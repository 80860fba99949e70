"""StateGraph: a builder of graphs whose nodes read and write a shared state."""

from __future__ import annotations

import logging
import typing
import warnings
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Generic

from warpgraph._internal._constants import NS_END, NS_SEP
from warpgraph._internal._deprecation import renamed_kwarg
from warpgraph._internal._generics import ContextT, InputT, OutputT, StateT
from warpgraph.channels.base import BaseChannel
from warpgraph.channels.last_value import LastValue
from warpgraph.constants import END, START
from warpgraph.graph._branch import BranchSpec, branch_name
from warpgraph.graph._node import StateNodeSpec, infer_node_hints, node_name, plain_name
from warpgraph.graph._schema import _channel_in as _is_field_channel  # noqa: F401 - LangGraph's name
from warpgraph.graph._schema import get_channels
from warpgraph.warnings import LangGraphDeprecatedSinceV05 as V05
from warpgraph.warnings import LangGraphDeprecatedSinceV10 as V10

if TYPE_CHECKING:
    from warpgraph.graph._compiled import CompiledStateGraph

__all__ = ("CompiledStateGraph", "StateGraph")

logger = logging.getLogger(__name__)

DEFAULT_ERROR_HANDLER = "__default_error_handler__"

_get_node_name = plain_name  # LangGraph's private name for it (its tests import it)


def __getattr__(name: str) -> Any:
    # CompiledStateGraph needs the Pregel runtime; load it only when asked for
    if name == "CompiledStateGraph":
        from warpgraph.graph._compiled import CompiledStateGraph

        return CompiledStateGraph
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _coerce_to_runnable(thing: Any, name: str | None, trace: bool) -> Any:
    from warpgraph._internal._runnable import coerce_to_runnable

    try:
        return coerce_to_runnable(thing, name=name, trace=trace)
    except TypeError as exc:
        if "trace" not in str(exc):
            raise
        return coerce_to_runnable(thing, name=name)


def _coerce_timeout(value: Any) -> Any:
    from warpgraph.types import TimeoutPolicy

    return TimeoutPolicy.coerce(value)


def _warn_invalid_state_schema(schema: Any) -> None:
    if isinstance(schema, type) or typing.get_args(schema):
        return
    warnings.warn(
        f"Invalid state_schema: {schema}. Expected a type or Annotated[type, reducer]. "
        "Please provide a valid schema to ensure correct updates.\n"
        " See: https://langchain-ai.github.io/langgraph/reference/graphs/#stategraph"
    )


def _get_channel(name: str, annotation: Any, *, allow_managed: bool = True) -> Any:
    """LangGraph's private name for the channel of one state key (its tests import it)."""
    from warpgraph.graph._schema import get_channel

    return get_channel(name, annotation, allow_managed=allow_managed)


def _reject_unknown(kwargs: dict[str, Any], where: str) -> None:
    if kwargs:
        names = ", ".join(sorted(kwargs))
        raise TypeError(f"{where}() got unexpected keyword argument(s): {names}")


_SEQUENCE_DUPLICATE = (
    "Node names must be unique: node with the name '{name}' already exists. If you need to "
    "use two different runnables/callables with the same name (for example, using `lambda`), "
    "please provide them as tuples (name, runnable/callable)."
)


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """A graph whose nodes communicate by reading and writing a shared state.

    Each node maps `State -> Partial<State>`; a state key annotated with a reducer
    (`Annotated[list, operator.add]`) aggregates the updates of several nodes.
    Call `.compile()` to get an executable graph.
    """

    def __init__(
        self,
        state_schema: Any,
        context_schema: Any | None = None,
        *,
        input_schema: Any | None = None,
        output_schema: Any | None = None,
        **kwargs: Any,
    ) -> None:
        context_schema = renamed_kwarg(
            kwargs, "config_schema", "context_schema", V10, context_schema
        )
        input_schema = renamed_kwarg(kwargs, "input", "input_schema", V05, input_schema)
        output_schema = renamed_kwarg(kwargs, "output", "output_schema", V05, output_schema)
        _reject_unknown(kwargs, "StateGraph")

        self.nodes: dict[str, StateNodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self.branches: defaultdict[str, dict[str, BranchSpec]] = defaultdict(dict)
        self.schemas: dict[Any, dict[str, Any]] = {}
        self.channels: dict[str, BaseChannel] = {}
        self.managed: dict[str, Any] = {}
        self.compiled = False
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self._node_defaults: dict[str, Any] = {}

        self.state_schema = state_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.context_schema = context_schema

        self._add_schema(self.state_schema)
        self._add_schema(self.input_schema, allow_managed=False)
        self._add_schema(self.output_schema, allow_managed=False)

    def set_node_defaults(
        self,
        *,
        retry_policy: Any = None,
        cache_policy: Any = None,
        error_handler: Any = None,
        timeout: Any = None,
    ) -> StateGraph:
        """Defaults applied at compile() to nodes that do not set their own policy
        (not inherited by subgraphs). `retry_policy` and `timeout` also apply to the error
        handler nodes; `cache_policy` and `error_handler` only to the other nodes."""
        if error_handler is not None:
            self._node_defaults["error_handler"] = error_handler
        if retry_policy is not None:
            self._node_defaults["retry_policy"] = retry_policy
        if cache_policy is not None:
            self._node_defaults["cache_policy"] = cache_policy
        if timeout is not None:
            self._node_defaults["timeout"] = _coerce_timeout(timeout)
        return self

    def _apply_node_defaults(self) -> None:
        defaults = self._node_defaults
        handler = defaults.get("error_handler")
        if handler is not None:  # one handler node for every node without its own
            if DEFAULT_ERROR_HANDLER in self.nodes:
                raise ValueError(
                    "Auto-generated default error handler node "
                    f"`{DEFAULT_ERROR_HANDLER}` already exists."
                )
            self.nodes[DEFAULT_ERROR_HANDLER] = self._handler_spec(
                handler, DEFAULT_ERROR_HANDLER, self.state_schema
            )
        for spec in self.nodes.values():
            regular = not spec.is_error_handler
            if regular and handler is not None and spec.error_handler_node is None:
                spec.error_handler_node = DEFAULT_ERROR_HANDLER
            for attr in ("retry_policy", "cache_policy", "timeout"):
                value = defaults.get(attr)
                # (a handler's result is never cached)
                if (
                    value is not None
                    and getattr(spec, attr) is None
                    and (regular or attr != "cache_policy")
                ):
                    setattr(spec, attr, value)

    def _handler_spec(self, handler: Any, name: str, input_schema: Any) -> StateNodeSpec:
        return StateNodeSpec(
            runnable=_coerce_to_runnable(handler, name=name, trace=False),
            metadata=None,
            input_schema=input_schema,
            retry_policy=None,
            is_error_handler=True,
        )

    @property
    def _node_error_handler_map(self) -> dict[str, str]:
        return {
            name: spec.error_handler_node
            for name, spec in self.nodes.items()
            if not spec.is_error_handler and spec.error_handler_node is not None
        }

    @property
    def _all_edges(self) -> set[tuple[str, str]]:
        return self.edges | {(s, end) for starts, end in self.waiting_edges for s in starts}

    def _add_schema(self, schema: Any, /, allow_managed: bool = True) -> None:
        """Register `schema`'s keys: channels and managed values merge into the graph's,
        and a key declared twice must agree (a plain LastValue redeclaration is fine)."""
        if schema in self.schemas:
            return
        _warn_invalid_state_schema(schema)
        channels, managed, _ = get_channels(schema)
        if managed and not allow_managed:
            raise ValueError(
                f"Invalid managed channels detected in {getattr(schema, '__name__', '')}: "
                f"{', '.join(managed)}. Managed channels are not permitted in Input/Output schema."
            )
        self.schemas[schema] = {**channels, **managed}
        clash = next(
            (
                k
                for k, c in channels.items()
                if (old := self.channels.setdefault(k, c)) is not c
                and old != c
                and not isinstance(c, LastValue)
            ),
            None,
        )
        if clash is not None:
            raise ValueError(f"Channel '{clash}' already exists with a different type")
        for key, spec in managed.items():
            if self.managed.setdefault(key, spec) != spec:
                raise ValueError(f"Managed value '{key}' already exists with a different type")

    def _warn_if_compiled(self, what: str) -> None:
        if self.compiled:
            logger.warning(
                f"Adding {what} to a graph that has already been compiled. This will "
                "not be reflected in the compiled graph."
            )

    def add_node(
        self,
        node: Any,
        action: Any = None,
        *,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        input_schema: Any | None = None,
        retry_policy: Any = None,
        cache_policy: Any = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        timeout: Any = None,
        trace_policy: Any = None,
        error_handler: Any = None,
        **kwargs: Any,
    ) -> StateGraph:
        """Add a node; `node` is its name (then `action` is the callable) or the callable.
        `error_handler`: a node run (with the same input and a `NodeError` parameter) when
        this node fails after its retries; its own failures fail the run."""
        retry_policy = renamed_kwarg(kwargs, "retry", "retry_policy", V05, retry_policy)
        input_schema = renamed_kwarg(kwargs, "input", "input_schema", V05, input_schema)
        _reject_unknown(kwargs, "add_node")
        if not isinstance(node, str):
            action = node
            node = node_name(action)
        self._warn_if_compiled("a node")
        if action is None:
            raise RuntimeError(f"Node `{node}` was added without an action")
        if node in self.nodes:
            raise ValueError(f"Node `{node}` already present.")
        if node in (START, END):
            raise ValueError(f"Node `{node}` is reserved.")
        bad = next((c for c in (NS_SEP, NS_END) if c in node), None)  # namespace separators
        if bad is not None:
            raise ValueError(
                f"'{bad}' is a reserved character and is not allowed in the node names."
            )
        inferred, ends = infer_node_hints(action, want_input=input_schema is None)
        if destinations is not None:
            ends = destinations  # type: ignore[assignment]
        schema = input_schema or inferred
        handler_name = None
        if error_handler is not None:  # its node goes first, as in LangGraph
            handler_name = f"__error_handler__{node}"
            if handler_name in self.nodes:
                raise ValueError(
                    f"Auto-generated error handler node `{handler_name}` already exists."
                )
            self.nodes[handler_name] = self._handler_spec(
                error_handler, handler_name, schema or self.state_schema
            )
        self.nodes[node] = StateNodeSpec(
            runnable=_coerce_to_runnable(action, name=node, trace=False),
            metadata=metadata,
            input_schema=schema or self.state_schema,
            retry_policy=retry_policy,
            cache_policy=cache_policy,
            ends=ends,
            defer=defer,
            timeout=_coerce_timeout(timeout),
            trace_policy=trace_policy,
            error_handler_node=handler_name,
        )
        if schema is not None:
            self._add_schema(schema)
        return self

    def add_edge(self, start_key: str | list[str], end_key: str) -> StateGraph:
        """Edge start -> end; a list of starts waits for all of them (a join)."""
        self._warn_if_compiled("an edge")
        join = not isinstance(start_key, str)
        sources = list(start_key) if join else [start_key]
        # LangGraph's checks and messages, in its order; a join's nodes must exist already
        for source in sources:
            if source == END:
                raise ValueError("END cannot be a start node")
            if join and source not in self.nodes:
                raise ValueError(f"Need to add_node `{source}` first")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        if not join:
            self.edges.add((start_key, end_key))
        elif end_key != END and end_key not in self.nodes:
            raise ValueError(f"Need to add_node `{end_key}` first")
        else:
            self.waiting_edges.add((tuple(sources), end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any] | Any,
        path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> StateGraph:
        """After `source`, call `path` on the state; it returns node name(s) or Send(s)."""
        self._warn_if_compiled("an edge")
        raw_name = branch_name(path)
        name = raw_name or "condition"
        if name in self.branches[source]:
            raise ValueError(f"Branch with name `{raw_name}` already exists for node `{source}`")
        runnable = _coerce_to_runnable(path, name=None, trace=True)
        spec = BranchSpec.from_path(runnable, path_map, True, source=path)
        self.branches[source][name] = spec
        if spec.input_schema is not None:
            self._add_schema(spec.input_schema)
        return self

    def add_sequence(self, nodes: Sequence[Any]) -> StateGraph:
        """Add nodes (callables or `(name, callable)`) chained by edges in order."""
        if not nodes:
            raise ValueError("Sequence requires at least one node.")
        named = [
            item if isinstance(item, tuple) and len(item) == 2 else (plain_name(item), item)
            for item in nodes
        ]
        chain: list[str] = []
        for name, action in named:
            if name in self.nodes:
                raise ValueError(_SEQUENCE_DUPLICATE.format(name=name))
            self.add_node(name, action)
            chain.append(name)
        for src, dst in pairwise(chain):
            self.add_edge(src, dst)
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        """Same as `add_edge(START, key)`."""
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self, path: Callable[..., Any] | Any, path_map: dict | list[str] | None = None
    ) -> StateGraph:
        """Same as `add_conditional_edges(START, path, path_map)`."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph:
        """Same as `add_edge(key, END)`."""
        return self.add_edge(key, END)

    def validate(self, interrupt: Sequence[str] | None = None) -> StateGraph:
        """Check edges, branches and interrupt nodes; raise ValueError naming the problem."""
        nodes = self.nodes
        sources = {src for src, _ in self._all_edges} | set(self.branches)
        sources.update(name for name, spec in nodes.items() if spec.ends)
        for unknown in sources.difference(nodes, (START,)):
            raise ValueError(f"Found edge starting at unknown node '{unknown}'")
        if START not in sources:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another node"
            )
        targets = {end for _, end in self._all_edges}
        for spec in nodes.values():
            targets.update(spec.ends or ())
        for start, branches in self.branches.items():
            for cond, branch in branches.items():
                if branch.ends is None:  # may route to any other node, or end
                    targets.update(n for n in nodes if n != start)
                    targets.add(END)
                    continue
                for end in branch.ends.values():
                    if end != END and end not in nodes:
                        raise ValueError(
                            f"At '{start}' node, '{cond}' branch found unknown target '{end}'"
                        )
                targets.update(branch.ends.values())
        for unknown in targets.difference(nodes, (END,)):
            raise ValueError(f"Found edge ending at unknown node `{unknown}`")
        missing = [name for name in interrupt or () if name not in nodes]
        if missing:
            raise ValueError(f"Interrupt node `{missing[0]}` not found")
        self.compiled = True
        return self

    def _serde_allowlist(self) -> set[tuple[str, ...]]:
        """`(module, name)` of the user types the state can hold (decoded from checkpoints)."""
        from warpgraph.checkpoint.serde.allowlist import collect_allowlist

        schemas = [self.state_schema, self.input_schema, self.output_schema, self.context_schema]
        schemas += [spec.input_schema for spec in self.nodes.values()]
        schemas += [b.input_schema for bs in self.branches.values() for b in bs.values()]
        found = collect_allowlist(schemas=schemas, channels=self.channels)
        return {(cls.__module__, cls.__name__) for cls in found}

    def _with_allowlist(self, checkpointer: Any) -> Any:
        if checkpointer in (None, True, False) or not hasattr(checkpointer, "with_allowlist"):
            return checkpointer
        allowlist = self._serde_allowlist()
        return checkpointer.with_allowlist(allowlist) if allowlist else checkpointer

    def compile(
        self,
        checkpointer: Any = None,
        *,
        cache: Any = None,
        store: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        debug: bool = False,
        name: str | None = None,
        transformers: Any = None,
    ) -> CompiledStateGraph:
        """Validate and compile into an executable `CompiledStateGraph` (a Pregel)."""
        from warpgraph.graph._compile import compile_graph
        from warpgraph.types import ensure_valid_checkpointer

        checkpointer = ensure_valid_checkpointer(checkpointer)
        interrupt_before = interrupt_before or []
        interrupt_after = interrupt_after or []
        # LangGraph checks these names only when interrupt_after is not "*"
        if interrupt_after != "*":
            before = interrupt_before if interrupt_before != "*" else []
            self.validate(interrupt=list(before) + list(interrupt_after))
        else:
            self.validate(interrupt=[])
        self._apply_node_defaults()
        return compile_graph(
            self,
            checkpointer=self._with_allowlist(checkpointer),
            cache=cache,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=name or "LangGraph",
            stream_transformers=transformers,
        )
