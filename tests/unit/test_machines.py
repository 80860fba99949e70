"""`_internal._machines`: one pump drives a sans-I/O machine with sync or async calls."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from typing import Any

import pytest
from warpgraph._internal._machines import run_async, run_sync


class _Store:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def get(self, key: str, *, default: Any = None) -> Any:
        self.calls.append(("get", key, default))
        return {"a": 1}.get(key, default)

    async def aget(self, key: str, *, default: Any = None) -> Any:
        self.calls.append(("aget", key, default))
        return {"a": 1}.get(key, default)


def _machine() -> Generator[tuple, Any, Any]:
    a = yield ("get", "a")
    b = yield ("get", "b")
    return (a, b)


def _route_for(store: _Store, aio: bool) -> Any:
    def route(op: tuple) -> tuple:
        call = store.aget if aio else store.get
        return call, (op[1],), {"default": 0}, lambda v: v * 10

    return route


def test_sync_and_async_give_the_same_result_and_calls() -> None:
    s1, s2 = _Store(), _Store()
    assert run_sync(_machine(), _route_for(s1, False)) == (10, 0)
    assert asyncio.run(run_async(_machine(), _route_for(s2, True))) == (10, 0)
    assert [c[1:] for c in s1.calls] == [c[1:] for c in s2.calls] == [("a", 0), ("b", 0)]
    assert {c[0] for c in s2.calls} == {"aget"}


def test_a_machine_without_ops_returns_at_once() -> None:
    def empty() -> Generator[tuple, Any, str]:
        return "done"
        yield  # pragma: no cover

    assert run_sync(empty(), lambda op: pytest.fail("no op expected")) == "done"


def test_errors_of_calls_reach_the_machine_caller() -> None:
    def boom(_: Any) -> Any:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        run_sync(_machine(), lambda op: (boom, (op,), None, None))
