"""`run_runtime` builds the run's Runtime in one construction: it must equal the parent's
merge with a Runtime of the run's own fields (what it computed before), for every parent."""

from __future__ import annotations

import types

import pytest
from warpgraph.runtime import (
    DEFAULT_RUNTIME,
    RunControl,
    Runtime,
    _no_op_stream_writer,
    run_runtime,
)


def _merged(parent, *, context, store, stream_writer, configurable, control):
    from warpgraph.runtime import _server_info

    if not isinstance(parent, Runtime):
        parent = Runtime(context=getattr(parent, "context", None))
    own = Runtime(
        context=context,
        store=store,
        stream_writer=stream_writer or _no_op_stream_writer,
        server_info=_server_info(configurable),
        control=control or parent.control or RunControl(),
    )
    return parent.merge(own)


def _writer(_):
    pass


def _beat():
    pass


_FULL = Runtime(
    context={"user": 1},
    store=object(),
    stream_writer=_writer,
    heartbeat=_beat,
    previous=[1],
    execution_info=None,
    server_info=None,
    control=RunControl(),
)


@pytest.mark.parametrize(
    "parent",
    [DEFAULT_RUNTIME, _FULL, types.SimpleNamespace(context="outer"), None],
    ids=["default", "full", "foreign", "none"],
)
@pytest.mark.parametrize(
    "own",
    [
        {"context": None, "store": None, "stream_writer": None, "configurable": {}},
        {"context": {}, "store": 0, "stream_writer": print, "configurable": {"graph_id": "g"}},
        {"context": "c", "store": "s", "stream_writer": None, "configurable": {"assistant_id": 1}},
    ],
    ids=["empty", "falsy", "given"],
)
@pytest.mark.parametrize("control", [None, RunControl()], ids=["no-control", "control"])
def test_run_runtime_equals_the_merge(parent, own, control) -> None:
    got = run_runtime(parent, control=control, **own)
    want = _merged(parent, control=control, **own)
    assert type(got) is Runtime
    fresh = control is None and getattr(parent, "control", None) is None
    for name in ("context", "store", "stream_writer", "heartbeat", "previous"):
        assert getattr(got, name) is getattr(want, name), name
    assert got.execution_info == want.execution_info
    assert got.server_info == want.server_info
    if fresh:  # (each call makes its own RunControl)
        assert type(got.control) is RunControl and got.control is not want.control
    else:
        assert got.control is want.control
