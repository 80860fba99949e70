"""Engine facade: the Rust `_core.Engine`, or the pure-Python twin when
`WARPGRAPH_PURE_ENGINE=1` (used by tests as an executable spec of the same contract)."""

from __future__ import annotations

import importlib
import os

from warpgraph import _core
from warpgraph._internal._flags import FAST_PATHS

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
    return {
        name: getattr(importlib.import_module(f"warpgraph.channels.{mod}"), name)
        for name, mod in _CHANNEL_MODULES.items()
    }


def _init_native() -> None:
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
        **({} if FAST_PATHS else {"fast_paths": False}),  # (no envelope caches)
    )


_init_native()
NATIVE = os.environ.get("WARPGRAPH_PURE_ENGINE") != "1"

if NATIVE:
    Engine = _core.Engine
    GraphSpec = _core.GraphSpec
else:  # the pure-Python twin: an executable spec for tests (needs the `xxhash` test dep)
    from warpgraph.pregel import _engine_py

    Engine = _engine_py.Engine  # type: ignore[misc]
    GraphSpec = _engine_py.GraphSpec  # type: ignore[misc]

task_path_str = _core.task_path_str
task_id = _core.task_id
uuid6 = _core.uuid6
