"""`_internal._codegen`: the one place generated code runs; identifiers only in its text."""

from __future__ import annotations

import dataclasses

import pytest
from warpgraph._internal._codegen import define, slot_builder, writes_function


def test_define_compiles_in_its_namespace() -> None:
    add = define("add", ("a", "b"), ["return a + b + k"], {"k": 10})
    assert add(1, 2) == 13


@pytest.mark.parametrize("bad", ["a b", "x=1", "1x", "f():\n    pass\ndef g", ""])
def test_define_refuses_non_identifiers(bad: str) -> None:
    with pytest.raises(ValueError, match="not an identifier"):
        define("f", (bad,), ["return 1"], {})
    with pytest.raises(ValueError, match="not an identifier"):
        define(bad, (), ["return 1"], {})


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
