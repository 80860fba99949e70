"""Per-task context access (`get_config`, `get_store`, `get_stream_writer`) and config helpers.

The runner sets the current task's config in a context variable (also inside worker threads
and asyncio tasks); the accessors read it. `RunnableConfig` is a TypedDict, so langchain-core
is never required; when langchain-core is loaded, its child-config variable is set as well so
LangChain components called inside a node see the task's config.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from contextvars import ContextVar
from os import getenv
from typing import TYPE_CHECKING, Any

from warpgraph._internal._compat import TypedDict
from warpgraph._internal._constants import (
    _CHECKPOINT_COORDINATE_KEYS,
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RUNTIME,
    NS_END,
    NS_SEP,
)

if TYPE_CHECKING:
    from warpgraph.types import StreamWriter

__all__ = ("RunnableConfig", "get_config", "get_store", "get_stream_writer")


class RunnableConfig(TypedDict, total=False):
    """The config dict handed to nodes (same keys as langchain-core's RunnableConfig)."""

    tags: list[str]
    metadata: dict[str, Any]
    callbacks: Any
    run_name: str
    max_concurrency: int | None
    recursion_limit: int
    configurable: dict[str, Any]
    run_id: Any


_CONFIG: ContextVar[RunnableConfig | None] = ContextVar("warpgraph_config", default=None)
_LC_MODULE = "langchain_core.runnables.config"


def set_config_var(config: RunnableConfig) -> tuple[Any, Any]:
    """Make `config` the current task config; returns tokens for `reset_config_var`."""
    token = _CONFIG.set(config)
    lc = sys.modules.get(_LC_MODULE)
    if lc is None:
        return token, None
    return token, lc.var_child_runnable_config.set(config)


def reset_config_var(tokens: tuple[Any, Any]) -> None:
    """Undo `set_config_var`."""
    token, lc_token = tokens
    if lc_token is not None:
        sys.modules[_LC_MODULE].var_child_runnable_config.reset(lc_token)
    _CONFIG.reset(token)


# Types whose instances the runner may put in the config variable instead of a task config
# it has not built yet (the pregel layer registers its lazily configured task): readers
# take their `.config`, which builds it once.
LAZY_CONFIG_HOLDERS: set[type] = set()


def _filled(method: Any) -> Any:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self._task is not None:
            self._fill()
        return method(self, *args, **kwargs)

    call.__name__ = method.__name__
    return call


class LazyDictConfig(dict):
    """LangChain's child-config variable value for a task whose config is not built yet:
    an (empty) dict that fills itself with the task's config on first use."""

    __slots__ = ("_task",)

    def __init__(self, task: Any) -> None:  # no dict.__init__: empty until filled
        self._task = task

    def _fill(self) -> None:
        task, self._task = self._task, None
        dict.update(self, task.config)

    for _name in (
        "__getitem__",
        "__contains__",
        "__iter__",
        "__len__",
        "__repr__",
        "__eq__",
        "__ne__",
        "__or__",
        "__ror__",
        "__ior__",
        "__reversed__",
        "__setitem__",
        "__delitem__",
        "__reduce_ex__",
        "get",
        "keys",
        "values",
        "items",
        "copy",
        "setdefault",
        "pop",
        "popitem",
        "update",
        "clear",
    ):
        locals()[_name] = _filled(getattr(dict, _name, None) or getattr(object, _name))
    del _name
    __hash__ = None  # type: ignore[assignment]


def lc_config_var() -> Any:
    """LangChain's child-config context variable when langchain-core is loaded, else None."""
    lc = sys.modules.get(_LC_MODULE)
    return lc.var_child_runnable_config if lc is not None else None


def _current() -> Any:
    config = _CONFIG.get()
    lc = sys.modules.get(_LC_MODULE)
    if lc is not None:
        # langchain-core runnables set only their own variable: one set after ours (a graph
        # called from a chain or a tool) is the current config, with that run's callbacks
        outer = lc.var_child_runnable_config.get()
        if outer is not None and outer is not config and type(outer) is not LazyDictConfig:
            return outer
    if type(config) in LAZY_CONFIG_HOLDERS:
        config = config.config
    return config


def _lc_current() -> Any:
    """LangChain's current child config (set by a LangChain runnable running this code)."""
    var = lc_config_var()
    return var.get() if var is not None else None


def current_config() -> RunnableConfig | None:
    """The current task config, or None outside a task."""
    return _current()


def get_config() -> RunnableConfig:
    """The config of the running node/task; RuntimeError outside one."""
    if config := _current():
        return config
    raise RuntimeError("Called get_config outside of a runnable context")


def get_store() -> Any:
    """The store of the running graph (None when compiled without one)."""
    return get_config()[CONF][CONFIG_KEY_RUNTIME].store


def get_stream_writer() -> StreamWriter:
    """The writer of the `custom` stream for the running node (a no-op when not streamed)."""
    return get_config()[CONF][CONFIG_KEY_RUNTIME].stream_writer


# ---------------------------------------------------------------- config helpers (internal)


class _DefaultRecursionLimit(int):
    """The recursion limit `ensure_config` fills in; `merge_configs` never lets it override."""


DEFAULT_RECURSION_LIMIT = _DefaultRecursionLimit(
    getenv("LANGGRAPH_DEFAULT_RECURSION_LIMIT", "10007")
)
CONFIG_KEYS = (
    "tags",
    "metadata",
    "callbacks",
    "run_name",
    "max_concurrency",
    "recursion_limit",
    "configurable",
    "run_id",
)
_CONFIG_KEY_SET = frozenset(CONFIG_KEYS)
_SIZED_TYPES = (list, tuple, dict)  # (`_not_empty`: empty ones are no values)
_COPIABLE_KEYS = frozenset(("tags", "metadata", "callbacks", "configurable"))
_PROPAGATE_TO_METADATA = frozenset(
    ("checkpoint_ns", "graph_id", "checkpoint_id", "run_id", "thread_id", "task_id", "assistant_id")
)


def recast_checkpoint_ns(ns: str) -> str:
    """`ns` without task ids and numeric segments ("a:id|1|b:id" -> "a|b")."""
    return NS_SEP.join(part.split(NS_END)[0] for part in ns.split(NS_SEP) if not part.isdigit())


def patch_checkpoint_map(config: dict | None, metadata: dict | None) -> dict | None:
    """`config` with the checkpoint map of a snapshot: the parents' checkpoint ids from
    `metadata` plus this checkpoint's own (unchanged when it has no parents)."""
    if config is None:
        return None
    parents = metadata.get("parents") if metadata else None
    if not parents:
        return config
    conf = config[CONF]
    own = {conf.get(CONFIG_KEY_CHECKPOINT_NS, ""): conf.get(CONFIG_KEY_CHECKPOINT_ID)}
    return {**config, CONF: {**conf, "checkpoint_map": {**parents, **own}}}


def patch_configurable(config: RunnableConfig | None, patch: dict[str, Any]) -> RunnableConfig:
    """A shallow copy of `config` with `patch` merged into its configurable."""
    if config is None:
        return {CONF: patch}
    if CONF not in config:
        return {**config, CONF: patch}
    return {**config, CONF: {**config[CONF], **patch}}


def patch_config(
    config: RunnableConfig | None,
    *,
    callbacks: Any = None,
    recursion_limit: int | None = None,
    max_concurrency: int | None = None,
    run_name: str | None = None,
    configurable: dict[str, Any] | None = None,
) -> RunnableConfig:
    """A copy of `config` with the given keys replaced (new callbacks drop run_name/run_id)."""
    out: dict[str, Any] = dict(config) if config is not None else {}
    if callbacks is not None:
        out["callbacks"] = callbacks
        out.pop("run_name", None)
        out.pop("run_id", None)
    if recursion_limit is not None:
        out["recursion_limit"] = recursion_limit
    if max_concurrency is not None:
        out["max_concurrency"] = max_concurrency
    if run_name is not None:
        out["run_name"] = run_name
    if configurable is not None:
        out[CONF] = {**out.get(CONF, {}), **configurable}
    return out  # type: ignore[return-value]


def _copy_one_level(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _merge_metadata(base: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict:
    """Newer keys win; only `lc_versions` merges one level deeper; mappings copied one level."""
    out = {k: _copy_one_level(v) for k, v in (base or {}).items()}
    for k, v in (new or {}).items():
        old = out.get(k)
        if k == "lc_versions" and isinstance(old, Mapping) and isinstance(v, Mapping):
            out[k] = {**old, **v}
        else:
            out[k] = _copy_one_level(v)
    return out


def _merge_callbacks(base: Any, new: Any) -> Any:
    """Merge callbacks values: None, a list of handlers, or a callback manager."""
    if new is None:
        return base
    if base is None:
        return new.copy() if isinstance(new, list) or hasattr(new, "add_handler") else new
    if isinstance(new, list):
        if isinstance(base, list):
            return base + new
        if hasattr(base, "add_handler"):
            manager = base.copy()
            for handler in new:
                manager.add_handler(handler, inherit=True)
            return manager
    elif hasattr(new, "add_handler"):
        if isinstance(base, list):
            manager = new.copy()
            for handler in base:
                manager.add_handler(handler, inherit=True)
            return manager
        if hasattr(base, "merge"):
            return base.merge(new)
    raise NotImplementedError(f"Unsupported callback types: {type(base)}, {type(new)}")


def merge_configs(*configs: RunnableConfig | None) -> RunnableConfig:
    """Merge configs left to right like LangGraph (tags concatenate, configurable and
    metadata merge, callbacks merge, a default recursion_limit never overrides)."""
    base: dict[str, Any] = {}
    for config in configs:
        if config is None:
            continue
        for key, value in config.items():
            if not value:
                continue
            if key == "metadata":
                base[key] = _merge_metadata(base.get(key), value)
            elif key == "tags":
                old = base.get(key)
                base[key] = [*old, *value] if old else value
            elif key == CONF:
                old = base.get(key)
                base[key] = {**old, **value} if old else value
            elif key == "callbacks":
                base[key] = _merge_callbacks(base.get(key), value)
            elif key == "recursion_limit":
                if not isinstance(value, _DefaultRecursionLimit):
                    base[key] = value
            else:
                base[key] = value
    if CONF not in base:
        base[CONF] = {}
    return base  # type: ignore[return-value]


def _not_empty(value: Any) -> bool:
    if isinstance(value, (list, tuple, dict)):
        return len(value) > 0
    return value is not None


def ensure_config(*configs: RunnableConfig | None) -> RunnableConfig:
    """A config with every standard key, built from the ambient task config (if any) and
    `configs` like LangGraph's `ensure_config`."""
    out: dict[str, Any] = {
        "tags": [],
        "metadata": {},
        "callbacks": None,
        "recursion_limit": DEFAULT_RECURSION_LIMIT,
        CONF: {},
    }
    inherited_tags: set[str] = set()
    if ambient := _current() or _lc_current():
        for k, v in ambient.items():
            if _not_empty(v):
                out[k] = v.copy() if k in _COPIABLE_KEYS and hasattr(v, "copy") else v
        inherited_tags.update(out["tags"])
        # an explicit checkpoint coordinate addresses its own lineage: drop the ambient one
        if out.get(CONF):
            for config in configs:
                explicit = config.get(CONF) if config else None
                if explicit and any(
                    _not_empty(explicit.get(k)) for k in _CHECKPOINT_COORDINATE_KEYS
                ):
                    out[CONF] = {}
                    break
    for config in configs:
        if config is None:
            continue
        extra = False  # (keys that are not config keys go to the configurable below)
        for k, v in config.items():
            # (`_not_empty(v)` written out: a call per key of every run's config)
            if v is None or (isinstance(v, _SIZED_TYPES) and len(v) == 0):
                continue
            if k not in _CONFIG_KEY_SET:
                extra = True
                continue
            if k == CONF:
                out[k] = {**out[k], **v} if out.get(k) else dict(v)
            elif k == "callbacks":
                out[k] = _merge_callbacks(out.get(k), v)
            elif k == "metadata":
                out[k] = _merge_metadata(out.get(k), v)
            elif k == "tags":
                new = [t for t in v if t not in inherited_tags]
                out[k] = [*out[k], *new] if out.get(k) else new
            else:
                out[k] = v
        if extra:
            for k, v in config.items():
                if k not in _CONFIG_KEY_SET and _not_empty(v):
                    out[CONF][k] = v
    configurable, metadata = out.get(CONF), out.get("metadata")
    if configurable and metadata is not None:
        for key in _PROPAGATE_TO_METADATA:
            if key not in metadata and (value := configurable.get(key)):
                metadata[key] = value
    return out  # type: ignore[return-value]
