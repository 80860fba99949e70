"""Engine facade: the Rust `_core.Engine` by default, the Python twin when
`WARPGRAPH_PURE_ENGINE=1` or when the native Engine is not built."""

from __future__ import annotations

import importlib
import os
from typing import Any

from warpgraph.pregel import _engine_py

__all__ = ("NATIVE", "Engine", "GraphSpec", "task_id", "task_path_str", "uuid6")

_CHANNEL_MODULES = {
    "LastValue": "last_value",
    "LastValueAfterFinish": "last_value",
    "EphemeralValue": "ephemeral_value",
    "BinaryOperatorAggregate": "binop",
    "Topic": "topic",
    "NamedBarrierValue": "named_barrier_value",
    "NamedBarrierValueAfterFinish": "named_barrier_value",
    "AnyValue": "any_value",
    "UntrackedValue": "untracked_value",
}


def _channel_types() -> dict[str, type]:
    out: dict[str, type] = {}
    for name, mod in _CHANNEL_MODULES.items():
        try:
            out[name] = getattr(importlib.import_module(f"warpgraph.channels.{mod}"), name)
        except (ImportError, AttributeError):
            pass  # not written yet: Rust wraps such channels generically
    return out


def _load_native() -> Any:
    if os.environ.get("WARPGRAPH_PURE_ENGINE") == "1":
        return None
    try:
        from warpgraph import _core
    except ImportError:
        return None
    if not hasattr(_core, "Engine") or not hasattr(_core, "init"):
        return None
    from warpgraph._internal._typing import MISSING
    from warpgraph.errors import EmptyChannelError, InvalidUpdateError
    from warpgraph.types import Overwrite, Send

    _core.init(
        missing=MISSING,
        send_type=Send,
        overwrite_type=Overwrite,
        invalid_update_error=InvalidUpdateError,
        empty_channel_error=EmptyChannelError,
        channel_types=_channel_types(),
    )
    return _core


_native = _load_native()
NATIVE = _native is not None

if _native is not None:
    Engine = _native.Engine
    GraphSpec = _native.GraphSpec
else:
    Engine = _engine_py.Engine  # type: ignore[misc]
    GraphSpec = _engine_py.GraphSpec  # type: ignore[misc]


def _pick(name: str, fallback: Any) -> Any:
    try:
        from warpgraph import _core
    except ImportError:
        return fallback
    return getattr(_core, name, fallback)


task_path_str = _pick("task_path_str", _engine_py.task_path_str)
task_id = _pick("task_id", _engine_py.task_id)


def _py_uuid6(clock_seq: int | None = None) -> str:
    from warpgraph.checkpoint.base.id import uuid6 as _u

    return str(_u(clock_seq=clock_seq))


uuid6 = _pick("uuid6", _py_uuid6)
