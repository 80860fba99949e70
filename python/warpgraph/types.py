"""Public value types: Send, Command, Interrupt, interrupt(), policies, snapshots, Overwrite."""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, make_dataclass
from datetime import timedelta
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    NamedTuple,
    Union,
    final,
)

from warpgraph._internal._after_import import after_import
from warpgraph._internal._compat import TypeVar
from warpgraph._internal._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_SCRATCHPAD,
    CONFIG_KEY_SEND,
    NS_SEP,
    RESUME,
)
from warpgraph._internal._constants import INTERRUPT as _INTERRUPT_KEY
from warpgraph._internal._fields import get_cached_annotated_keys, get_update_as_tuples
from warpgraph.errors import _DeprecatedSinceV10, _DeprecatedSinceV11

if TYPE_CHECKING:
    from warpgraph.checkpoint.base import BaseCheckpointSaver


class ToolOutputMixin:
    """`Command`'s stand-in base until langchain-core's messages are imported: then
    `Command` takes langchain-core's `ToolOutputMixin` in its place (`_tool_output_base`),
    so a tool returning a Command is not wrapped in a ToolMessage. Importing langchain-core
    here would cost more than all of warpgraph's import."""


__all__ = (
    "All",
    "CachePolicy",
    "CheckpointPayload",
    "CheckpointStreamPart",
    "CheckpointTask",
    "Checkpointer",
    "Command",
    "CustomStreamPart",
    "DebugPayload",
    "DebugStreamPart",
    "Durability",
    "GraphOutput",
    "Interrupt",
    "MessagesStreamPart",
    "Overwrite",
    "PregelExecutableTask",
    "PregelTask",
    "RetryPolicy",
    "Send",
    "StateSnapshot",
    "StateUpdate",
    "StreamMode",
    "StreamPart",
    "StreamWriter",
    "TaskPayload",
    "TaskResultPayload",
    "TasksStreamPart",
    "TimeoutPolicy",
    "TracePolicy",
    "UpdatesStreamPart",
    "ValuesStreamPart",
    "ensure_valid_checkpointer",
    "interrupt",
    "omit_payload",
)

StateT = TypeVar("StateT")
OutputT = TypeVar("OutputT")
ResponseT = TypeVar("ResponseT", default=Any)
N = TypeVar("N", bound=Hashable)

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are persisted: before the next step, concurrently with it, or at exit."""

All = Literal["*"]
"""Interrupt on every node."""

Checkpointer = Union[None, bool, "BaseCheckpointSaver"]
"""Subgraph checkpointer: True persistent, False none, None inherit from the parent."""

StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
"""What `stream()` emits."""

StreamWriter = Callable[[Any], None]
"""Writes one item to the "custom" stream (a no-op when that mode is off)."""


def _xxh3_128_hexdigest(data: bytes) -> str:
    """xxh3_128 of `data` as 32 lowercase hex digits (xxhash's `xxh3_128_hexdigest`)."""
    from warpgraph._core import xxh3_128_hexdigest

    return xxh3_128_hexdigest(data)


# Errors that are not worth retrying by default (bugs or permanent failures).
_NOT_RETRIED: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    ArithmeticError,
    ImportError,
    LookupError,
    NameError,
    SyntaxError,
    RuntimeError,
    ReferenceError,
    StopIteration,
    StopAsyncIteration,
    OSError,
)


def default_retry_on(exc: Exception) -> bool:
    """Default RetryPolicy predicate: retry connection errors, 5xx HTTP errors (httpx or
    requests) and unknown exceptions; not programming errors or other OS errors."""
    if isinstance(exc, ConnectionError):
        return True
    httpx = sys.modules.get("httpx")  # an httpx error implies httpx is imported
    if httpx is not None and isinstance(exc, httpx.HTTPStatusError):
        return 500 <= exc.response.status_code < 600
    requests = sys.modules.get("requests")
    if requests is not None and isinstance(exc, requests.HTTPError):
        return 500 <= exc.response.status_code < 600 if exc.response else True
    return not isinstance(exc, _NOT_RETRIED)


def _freeze(obj: Any, depth: int = 10) -> Hashable:
    """A hashable stand-in for `obj` (sorted mapping items, tuples for sequences)."""
    if isinstance(obj, Hashable) or depth <= 0:
        return obj
    if isinstance(obj, Mapping):
        return tuple(sorted((k, _freeze(v, depth - 1)) for k, v in obj.items()))
    if isinstance(obj, Sequence):
        return tuple(_freeze(item, depth - 1) for item in obj)
    if hasattr(obj, "tobytes"):  # numpy-like arrays
        return (type(obj).__name__, obj.tobytes(), getattr(obj, "shape", None))
    return obj


def default_cache_key(*args: Any, **kwargs: Any) -> str | bytes:
    """Default CachePolicy key: pickle (protocol 5) of the frozen arguments."""
    import pickle

    return pickle.dumps((_freeze(args), _freeze(kwargs)), protocol=5, fix_imports=False)


def ensure_valid_checkpointer(checkpointer: Checkpointer) -> Checkpointer:
    """Return `checkpointer` if it is None, a bool or a saver; else raise TypeError."""
    if checkpointer in (None, True, False):
        return checkpointer
    from warpgraph.checkpoint.base import BaseCheckpointSaver

    if not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError(
            "Invalid checkpointer provided. Expected an instance of "
            "`BaseCheckpointSaver`, `True`, `False`, or `None`. "
            f"Received {type(checkpointer).__name__!s}. "
            "Pass a proper saver (e.g., InMemorySaver, AsyncPostgresSaver)."
        )
    return checkpointer


# The typed shapes of "tasks"/"checkpoints"/"debug" payloads and of `version="v2"` stream
# parts live in warpgraph._internal._stream_parts (re-exported here).
from warpgraph._internal._stream_parts import (
    CheckpointPayload,
    CheckpointStreamPart,
    CheckpointTask,
    CustomStreamPart,
    DebugPayload,
    DebugStreamPart,
    MessagesStreamPart,
    StreamPart,
    TaskPayload,
    TaskResultPayload,
    TasksStreamPart,
    UpdatesStreamPart,
    ValuesStreamPart,
)


@dataclass(frozen=True)
class GraphOutput(Generic[OutputT]):
    """Result of `invoke(..., version="v2")`: the output value and the run's interrupts."""

    value: OutputT
    interrupts: tuple[Interrupt, ...] = ()

    @staticmethod
    def _warn_key_access(what: str) -> None:
        import warnings

        warnings.warn(
            f"Accessing GraphOutput via `{what}` is deprecated. "
            "Use `result.value` to access the output value directly, "
            "or `result.interrupts` for interrupts.",
            _DeprecatedSinceV11,
            stacklevel=3,
        )

    def __getitem__(self, key: str) -> Any:
        self._warn_key_access("result[key]")
        if key == _INTERRUPT_KEY:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        self._warn_key_access("key in result")
        if key == _INTERRUPT_KEY:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


_DC_KWARGS: dict[str, Any] = {"kw_only": True, "slots": True, "frozen": True}


class RetryPolicy(NamedTuple):
    """How a failing node is retried."""

    initial_interval: float = 0.5
    """Seconds before the first retry."""
    backoff_factor: float = 2.0
    """Multiplier applied to the interval after each retry."""
    max_interval: float = 128.0
    """Upper bound of the interval, in seconds."""
    max_attempts: int = 3
    """Attempts in total, the first included."""
    jitter: bool = True
    """Add random jitter to the interval."""
    retry_on: type[Exception] | Sequence[type[Exception]] | Callable[[Exception], bool] = (
        default_retry_on
    )
    """Exception classes to retry on, or a predicate over the exception."""


def _positive_seconds(value: float | timedelta | None, *, field: str) -> float | None:
    """`value` as float seconds (None stays None); it must be positive."""
    if isinstance(value, timedelta):
        value = value.total_seconds()
    elif value is not None:
        value = float(value)
    if value is not None and value <= 0:
        raise ValueError(f"{field} must be greater than 0")
    return value


@dataclass(**_DC_KWARGS)
class TimeoutPolicy:
    """Per-attempt timeouts of a node (cooperative: enforced through asyncio cancellation)."""

    run_timeout: float | timedelta | None = None
    """Hard wall-clock cap of one attempt, in seconds."""
    idle_timeout: float | timedelta | None = None
    """Longest time an attempt may go without progress, in seconds."""
    refresh_on: Literal["auto", "heartbeat"] = "auto"
    """Which signals refresh `idle_timeout`."""

    @classmethod
    def coerce(cls, value: TimeoutSpec) -> TimeoutPolicy | None:
        """Normalise to a policy with float seconds; None when no timeout is set."""
        if value is None:
            return None
        if isinstance(value, TimeoutPolicy):
            run, idle = value.run_timeout, value.idle_timeout
            already_normal = (
                value.refresh_on in ("auto", "heartbeat")
                and (run is None or (type(run) is float and run > 0))
                and (idle is None or (type(idle) is float and idle > 0))
                and (run is not None or idle is not None)
            )
            if already_normal:
                return value
        else:
            value = cls(run_timeout=value)
        if value.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run = _positive_seconds(value.run_timeout, field="run_timeout")
        idle = _positive_seconds(value.idle_timeout, field="idle_timeout")
        if run is None and idle is None:
            return None
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=value.refresh_on)


KeyFuncT = TypeVar("KeyFuncT", bound=Callable[..., str | bytes])


@dataclass(**_DC_KWARGS)
class CachePolicy(Generic[KeyFuncT]):
    """How a node's results are cached."""

    key_func: KeyFuncT = default_cache_key  # type: ignore[assignment]
    """Cache key of the node input (default: pickle of the frozen input)."""
    ttl: int | None = None
    """Seconds an entry lives; None: forever."""


@dataclass(**_DC_KWARGS)
class TracePolicy:
    """Transforms what a node's own trace run records (not for redacting secrets)."""

    process_inputs: Callable[[Any], Any] | None = None
    """Maps the node input to what is recorded."""
    process_outputs: Callable[[Any], Any] | None = None
    """Maps the node output to what is recorded."""


def omit_payload(_value: Any) -> dict[str, Any]:
    """TracePolicy processor recording an empty payload."""
    return {}


_DEFAULT_INTERRUPT_ID = "placeholder-id"


def _interrupt_id(ns: str, answered: int) -> str:
    """Id of the interrupt raised in task namespace `ns` after `answered` resumes.

    The first interrupt of a task hashes the bare namespace (LangGraph's historical id).
    """
    text = f"{ns}{NS_SEP}{answered}" if answered else ns
    return _xxh3_128_hexdigest(text.encode())


def _legacy_interrupt_id(id: str, ns: Any) -> str:
    """Interrupts made before ids existed were addressed by namespace parts (`ns=`): an
    Interrupt built that way, without an explicit id, gets the hash of the joined parts."""
    if id != _DEFAULT_INTERRUPT_ID or not isinstance(ns, Sequence):
        return id
    return _xxh3_128_hexdigest(NS_SEP.join(ns).encode())


@final
@dataclass(init=False, slots=True)
class Interrupt(Generic[ResponseT]):
    """An interrupt raised by a node: the surfaced `value` and the `id` to resume it by."""

    value: Any
    """The value surfaced to the client."""
    id: str
    """Identifies the interrupt in `Command(resume={id: value})`."""
    response_schema: type[ResponseT] | dict[str, Any] | None = None
    """Schema of the expected resume value, if one was given."""

    def __init__(
        self,
        value: Any,
        id: str = _DEFAULT_INTERRUPT_ID,
        *,
        response_schema: type[ResponseT] | dict[str, Any] | None = None,
        **deprecated_kwargs: Any,
    ) -> None:
        self.value, self.response_schema = value, response_schema
        self.id = _legacy_interrupt_id(id, deprecated_kwargs.get("ns"))

    @classmethod
    def from_ns(
        cls,
        value: Any,
        ns: str,
        *,
        response_schema: type[ResponseT] | dict[str, Any] | None = None,
    ) -> Interrupt[ResponseT]:
        """The first interrupt of the task whose checkpoint namespace is `ns`."""
        return cls(value, _interrupt_id(ns, 0), response_schema=response_schema)

    @property
    def interrupt_id(self) -> str:
        """Deprecated alias of `id`."""
        import warnings

        warnings.warn(
            "`interrupt_id` is deprecated. Use `id` instead.", _DeprecatedSinceV10, stacklevel=2
        )
        return self.id


def _record(name: str, doc: str, fields: list[tuple[str, Any]], defaults: tuple) -> Any:
    """A typing.NamedTuple class from a field table; `defaults` apply to the last fields."""
    cls = NamedTuple(name, fields)  # type: ignore[misc]
    cls.__new__.__defaults__ = defaults
    cls._field_defaults = dict(zip(cls._fields[len(fields) - len(defaults) :], defaults))
    cls.__doc__ = doc
    cls.__module__ = __name__
    return cls


StateUpdate = _record(
    "StateUpdate",
    "One update of `bulk_update_state`: values applied as if written by `as_node`.",
    [("values", "dict[str, Any] | None"), ("as_node", "str | None"), ("task_id", "str | None")],
    (None, None),
)

PregelTask = _record(
    "PregelTask",
    "A task as shown in a StateSnapshot (its error, interrupts, subgraph state, result).",
    [
        ("id", str),
        ("name", str),
        ("path", "tuple[str | int | tuple, ...]"),
        ("error", "Exception | None"),
        ("interrupts", "tuple[Interrupt, ...]"),
        ("state", "None | dict | StateSnapshot"),
        ("result", "Any | None"),
    ],
    (None, (), None, None),
)


class CacheKey(NamedTuple):
    """Cache key of a task."""

    ns: tuple[str, ...]
    key: str
    ttl: int | None


# Slotted everywhere (the loop's lazily configured tasks rely on the slot descriptors);
# the weakref slot needs Python 3.11.
_TASK_DC_KWARGS: dict[str, Any] = (
    {"weakref_slot": True, "slots": True, "frozen": True}
    if sys.version_info >= (3, 11)
    else {"slots": True, "frozen": True}
)


# (name, annotation) of every field, then the three optional ones with their defaults; the
# order is LangGraph's, which positional construction relies on.
_TASK_FIELDS: list[Any] = [
    ("name", "str"),
    ("input", "Any"),
    ("proc", "Any"),
    ("writes", "deque[tuple[str, Any]]"),
    ("config", "dict[str, Any]"),
    ("triggers", "Sequence[str]"),
    ("retry_policy", "Sequence[RetryPolicy]"),
    ("cache_key", "CacheKey | None"),
    ("id", "str"),
    ("path", "tuple[str | int | tuple, ...]"),
    ("writers", "Sequence[Any]", field(default=())),
    ("subgraphs", "Sequence[Any]", field(default=())),
    ("timeout", "TimeoutPolicy | None", field(default=None)),
]
PregelExecutableTask = make_dataclass("PregelExecutableTask", _TASK_FIELDS, **_TASK_DC_KWARGS)
PregelExecutableTask.__module__ = __name__
PregelExecutableTask.__doc__ = "A task ready to run in the current super-step."


class StateSnapshot(NamedTuple):
    """The graph's state at the beginning of a step."""

    values: dict[str, Any] | Any
    """Channel values (the output schema's view)."""
    next: tuple[str, ...]
    """Names of the nodes that run next."""
    config: dict[str, Any]
    """Config that fetches this snapshot."""
    metadata: dict[str, Any] | None
    """The checkpoint's metadata."""
    created_at: str | None
    """Timestamp of the checkpoint."""
    parent_config: dict[str, Any] | None
    """Config of the parent checkpoint."""
    tasks: tuple[PregelTask, ...]
    """Tasks of this step (with errors if already attempted)."""
    interrupts: tuple[Interrupt, ...]
    """Interrupts of this step (latest state: only those still pending)."""


TimeoutSpec = float | timedelta | TimeoutPolicy | None
"""What a `timeout=` accepts: seconds, a timedelta (a run timeout) or a policy."""


class Send:
    """A packet for `node` with input `arg`, run as its own task in the next step.

    Returned from conditional edges (e.g. map-reduce fan-out). `timeout` overrides the target
    node's timeout for this task (a number or timedelta is a run timeout).
    """

    __slots__ = ("node", "arg", "timeout")  # noqa: RUF023 - LangGraph's order

    node: str
    arg: Any
    timeout: TimeoutPolicy | None

    timed: ClassVar[bool] = False
    """Set once any Send was made with a timeout (until then tasks skip looking for one)."""

    def __init__(self, /, node: str, arg: Any, *, timeout: TimeoutSpec = None) -> None:
        self.node = node
        self.arg = arg
        if timeout is None:
            self.timeout = None
        else:
            self.timeout = TimeoutPolicy.coerce(timeout)
            Send.timed = True

    def __hash__(self) -> int:
        return hash((self.node, self.arg, self.timeout))

    def __repr__(self) -> str:
        head = f"Send(node={self.node!r}, arg={self.arg!r}"
        if self.timeout is None:
            return head + ")"
        return f"{head}, timeout={self.timeout!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Send):
            return False
        return (self.node, self.arg, self.timeout) == (other.node, other.arg, other.timeout)


@dataclass(**_DC_KWARGS)
class Command(ToolOutputMixin, Generic[N]):
    """Update the state and/or route, returned from a node or passed as graph input.

    `graph`: None (this graph) or `Command.PARENT`; `update`: a state update; `resume`: a
    value for the next interrupt, or a map {interrupt id: value}; `goto`: node name(s) or
    `Send`(s) to run next.
    """

    graph: str | None = None
    update: Any | None = None
    resume: dict[str, Any] | Any | None = None
    goto: Send | Sequence[Send | N] | N = ()

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in asdict(self).items() if v)
        return f"Command({shown})"

    def _update_as_tuples(self) -> Sequence[tuple[str, Any]]:
        """`update` as (channel, value) pairs.

        dict -> its items; a sequence of (str, value) pairs -> as is; an object with class
        annotations -> its annotated attributes; any other non-None -> [("__root__", update)].
        """
        update = self.update
        if isinstance(update, dict):
            return list(update.items())
        if isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
        ):
            return update
        keys = get_cached_annotated_keys(type(update))
        if keys:
            return get_update_as_tuples(update, keys)
        if update is not None:
            return [("__root__", update)]
        return []

    update_as_tuples = _update_as_tuples


def _tool_output_base(module: Any) -> None:
    """Put langchain-core's `ToolOutputMixin` in place of the stand-in base of `Command`."""
    mixin = getattr(module, "ToolOutputMixin", None)
    if isinstance(mixin, type) and mixin not in Command.__mro__:
        Command.__bases__ = tuple(
            mixin if base is ToolOutputMixin else base for base in Command.__bases__
        )


after_import("langchain_core.messages.tool", _tool_output_base)


def _validated_resume(adapter: Any, value: Any) -> Any:
    """`value` validated by the pydantic TypeAdapter; a failure is flagged as invalid resume."""
    if adapter is None:
        return value
    from pydantic import ValidationError

    from warpgraph.errors import _mark_invalid_resume

    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        _mark_invalid_resume(exc)
        raise


def interrupt(value: Any, *, response_schema: dict[str, Any] | type | None = None) -> Any:
    """Pause the graph inside a node, surfacing `value`; returns the resume value on re-run.

    The n-th call in a task returns the task's n-th resume value. With no resume value left
    it raises GraphInterrupt. A type `response_schema` (pydantic model, TypedDict,
    dataclass) validates the resume value; a dict schema is only surfaced.
    """
    from warpgraph.config import get_config
    from warpgraph.errors import GraphInterrupt

    conf = get_config()[CONF]
    adapter = None
    if response_schema is not None and not isinstance(response_schema, dict):
        from pydantic import TypeAdapter

        adapter = TypeAdapter(response_schema)
    scratchpad = conf[CONFIG_KEY_SCRATCHPAD]
    index = scratchpad.interrupt_counter()
    resume = scratchpad.resume
    if resume and index < len(resume):
        answer = _validated_resume(adapter, resume[index])
        conf[CONFIG_KEY_SEND]([(RESUME, resume[: index + 1])])
        return answer
    pending = scratchpad.get_null_resume(True)
    if pending is not None:
        assert len(resume) == index, (resume, index)
        answer = _validated_resume(adapter, pending)
        resume.append(pending)
        conf[CONFIG_KEY_SEND]([(RESUME, resume)])
        return answer
    raise GraphInterrupt(
        (
            Interrupt(
                value=value,
                id=_interrupt_id(conf[CONFIG_KEY_CHECKPOINT_NS], len(resume)),
                response_schema=adapter.json_schema() if adapter else response_schema,
            ),
        )
    )


@dataclass(slots=True)
class Overwrite:
    """Write `value` to a reducer channel as is, bypassing the reducer (once per step)."""

    value: Any
    """The value to store."""
    type: Literal["__overwrite__"] = "__overwrite__"
    """Discriminator that survives JSON serialisation of the dataclass."""
