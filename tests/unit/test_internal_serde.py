"""`_internal._serde` (LangGraph's allowlist helper names) agrees with LangGraph's module."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest
from pydantic import BaseModel
from warpgraph._internal import _serde as ours

theirs = pytest.importorskip("langgraph._internal._serde")


class Color(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Inner:
    value: int


class Model(BaseModel):
    name: str


@dataclasses.dataclass
class Outer:
    inner: list[Inner]
    by_name: dict[str, Model]
    color: Optional[Color] = None  # noqa: UP045 - the typing spelling is what is tested


class Payload(TypedDict):
    a: Annotated[Inner, "meta"]
    b: Model | None
    c: Literal["x"]
    d: Any


@pytest.mark.parametrize("schemas", [[Outer], [Payload], [Inner, Model, Color], [Any], []])
def test_collect_matches_langgraph(schemas):
    assert ours.collect_allowlist_from_schemas(
        schemas=schemas
    ) == theirs.collect_allowlist_from_schemas(schemas=schemas)


def test_curated_core_allowlist_matches_langgraph():
    assert ours.curated_core_allowlist() == theirs.curated_core_allowlist()
    assert ours.build_serde_allowlist(schemas=[Outer]) >= ours.curated_core_allowlist()
