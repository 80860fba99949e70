"""`_internal._codegen`: the one place generated code runs; identifiers only in its text."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect

import pytest
from warpgraph._internal._codegen import define, define_like, slot_builder, writes_function


def test_define_compiles_in_its_namespace() -> None:
    add = define("add", ("a", "b"), ["return a + b + k"], {"k": 10})
    assert add(1, 2) == 13


@pytest.mark.parametrize("bad", ["a b", "x=1", "1x", "f():\n    pass\ndef g", ""])
def test_define_refuses_non_identifiers(bad: str) -> None:
    with pytest.raises(ValueError, match="not an identifier"):
        define("f", (bad,), ["return 1"], {})
    with pytest.raises(ValueError, match="not an identifier"):
        define(bad, (), ["return 1"], {})


class _Target:
    def op(self, a, b=2, /, c=3, *, d, e=None):
        return (a, b, c, d, e)


def test_define_like_keeps_the_signature_and_forwards_each_kind() -> None:
    seen = []

    def body(positional: list[str], forwarded: list[str]) -> list[str]:
        seen.append((positional, forwarded))
        return [f"return self.op({', '.join(forwarded)})"]

    fn = define_like("def", "same", _Target.op, body, {})
    assert inspect.signature(fn) == inspect.signature(_Target.op)
    assert seen == [(["a", "b", "c", "d", "e"], ["a", "b", "c", "d=d", "e=e"])]
    assert fn(_Target(), 1, d=4) == (1, 2, 3, 4, None)
    assert fn(_Target(), 1, 5, c=6, d=7, e=8) == (1, 5, 6, 7, 8)

    afn = define_like("async def", "asame", _Target.op, lambda _, f: ["return 0"], {})
    assert inspect.iscoroutinefunction(afn) and asyncio.run(afn(None, 1, d=0)) == 0
    assert inspect.signature(afn) == inspect.signature(_Target.op)


def test_define_like_refuses_what_it_cannot_forward() -> None:
    def star(self, *args, **kwargs): ...

    with pytest.raises(ValueError, match="not forwarded"):
        define_like("def", "f", star, lambda p, f: ["return 1"], {})
    with pytest.raises(ValueError, match="not a function keyword"):
        define_like("class", "f", _Target.op, lambda p, f: ["pass"], {})


@dataclasses.dataclass(frozen=True, slots=True)
class _Point:
    x: int
    y: str


def test_slot_builder_builds_equal_frozen_objects() -> None:
    build = slot_builder(_Point)
    p = build(1, "a")
    assert type(p) is _Point and p == _Point(1, "a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 2  # type: ignore[misc]


def test_slot_builder_without_slots_falls_back_to_the_constructor() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        x: int

    assert slot_builder(Plain)(3) == Plain(3)


def test_writes_function_formats_names_per_step() -> None:
    steps = [("out += f{i}", {"f{i}": [("a", 1)]}), ("out.append((c{i}, input))", {"c{i}": "b"})]
    run = writes_function(steps, {})
    assert run(5) == [("a", 1), ("b", 5)]
