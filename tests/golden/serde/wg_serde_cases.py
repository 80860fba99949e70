"""Values encoded by the golden serde files; shared by make_golden.py and the tests.

`build(types)` takes the module providing Send/Interrupt/Command/Overwrite (langgraph.types
for the reference, warpgraph.types for warpgraph) and returns {name: (value, expected_load)}
where expected_load is the value `loads_typed` should give back (usually the value itself).
"""

from __future__ import annotations

import dataclasses
import enum
import pathlib
import re
import uuid
from collections import deque
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal
from ipaddress import IPv4Address, IPv6Network
from typing import Any, NamedTuple

SAME: Any = object()


class Color(enum.Enum):
    RED = 1
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1


@dataclasses.dataclass
class Point:
    x: int
    y: list


@dataclasses.dataclass
class Box:
    label: str
    corner: Point


class Pair(NamedTuple):
    left: int
    right: str = "r"


USER_TYPES: list[type] = [Color, Level, Point, Box, Pair]

try:
    import pydantic

    class Model(pydantic.BaseModel):
        a: int
        b: str = "x"
        tags: list[str] = []

    class Outer(pydantic.BaseModel):
        inner: Model
        when: datetime

    USER_TYPES += [Model, Outer]
except ImportError:  # pragma: no cover
    pydantic = None


def build(types: Any, delta_snapshot: Any) -> dict[str, tuple[Any, Any]]:
    """Golden cases: name -> (value, expected result of loads_typed)."""
    cases: dict[str, Any] = {
        "none": None,
        "true": True,
        "false": False,
        "int_small": 7,
        "int_neg": -129,
        "int_i64_max": 2**63 - 1,
        "int_u64_max": 2**64 - 1,
        "float": 1.25,
        "float_inf": float("-inf"),
        "str": "héllo ✓",
        "str_empty": "",
        "bytes": b"\x00\xffraw",
        "bytearray": bytearray(b"mutable"),
        "list": [1, "a", None, [2.5, True]],
        "tuple": (1, (2, 3)),
        "dict": {"a": {"b": [1, {"c": None}]}, "z": 1},
        "dict_int_keys": {1: "one", 2: "two"},
        "dict_tuple_keys": {(1, 2): "pair"},
        "set": {1, 2, 3},
        "frozenset": frozenset({"a"}),
        "deque": deque([1, "x"]),
        "datetime_naive": datetime(2024, 2, 29, 13, 14, 15, 161718),
        "datetime_utc": datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc),
        "datetime_offset": datetime(2024, 1, 2, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        "date": date(1999, 12, 31),
        "time": time(23, 59, 58, 123),
        "time_tz": time(1, 2, tzinfo=timezone.utc),
        "timedelta": timedelta(days=-1, seconds=5, microseconds=7),
        "timezone_named": timezone(timedelta(hours=-3), "BRT"),
        "timezone_utc": timezone.utc,
        "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "decimal": Decimal("-12.3400"),
        "path": pathlib.Path("/tmp/a b/c.txt"),
        "pattern": re.compile(r"^a+\d$", re.IGNORECASE | re.MULTILINE),
        "ipv4": IPv4Address("10.1.2.3"),
        "ipv6_net": IPv6Network("2001:db8::/32"),
        "enum": Color.BLUE,
        "int_enum": Level.LOW,
        "dataclass": Point(1, [2, 3]),
        "dataclass_nested": Box("b", Point(0, [])),
        "namedtuple": Pair(3),
        "exception": ValueError("boom"),
        "delta_snapshot": delta_snapshot([1, 2]),
        "send": types.Send("node", {"k": [1, 2]}),
        "send_in_list": [types.Send("a", 1), types.Send("b", None)],
        "interrupt": types.Interrupt(value={"q": "ok?"}, id="abc"),
        "command": types.Command(update={"x": 1}, goto=[types.Send("n", 2)], resume="yes"),
        "command_graph": types.Command(graph=types.Command.PARENT, goto="a"),
        "overwrite": types.Overwrite([1, 2]),
        "checkpoint": {
            "v": 4,
            "id": "1ef4f797-8335-6428-8001-8a1503f9b875",
            "ts": "2024-07-31T20:14:19.804150+00:00",
            "channel_versions": {"__start__": "00000000000000000000000000000002.0.1", "a": 1},
            "versions_seen": {"__input__": {}, "node": {"a": 1}},
            "updated_channels": ["a"],
        },
    }
    expected: dict[str, Any] = {
        "tuple": [1, [2, 3]],
        "namedtuple": Pair(3),
        "exception": "ValueError('boom')",
    }
    try:
        from zoneinfo import ZoneInfo

        cases["zoneinfo"] = ZoneInfo("Europe/Paris")
    except (ImportError, KeyError):  # pragma: no cover
        pass
    if pydantic is not None:
        cases["pydantic"] = Model(a=1, tags=["t"])
        cases["pydantic_nested"] = Outer(inner=Model(a=2), when=datetime(2020, 5, 6))
    try:
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

        cases["human_message"] = HumanMessage(content="hi", id="m1")
        cases["ai_message"] = AIMessage(
            content="", id="m2", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]
        )
        cases["tool_message"] = ToolMessage(content="r", tool_call_id="c1", id="m3")
    except ImportError:  # pragma: no cover
        pass
    return {k: (v, expected.get(k, v)) for k, v in cases.items()}
