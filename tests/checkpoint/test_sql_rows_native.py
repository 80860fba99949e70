"""The SQL savers' native row builders (`_core.blob_rows`, `write_rows`,
`metadata_json`) against the Python they replace, on generated values: the same bytes
and text, and the same errors (the Python path still names what fails)."""

from __future__ import annotations

import datetime
import enum
import json
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warpgraph import _core
from warpgraph.checkpoint._sql import codec
from warpgraph.checkpoint.base import EXCLUDED_METADATA_KEYS, WRITES_IDX_MAP
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

SERDE = JsonPlusSerializer()


class Color(enum.Enum):
    RED = 1


class Level(enum.IntEnum):
    HIGH = 3


class Tag(str):
    pass


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),  # beyond 64 bits: ormsgpack's error, via the serializer
    st.floats(),
    st.text(),
    st.binary(max_size=40),
    st.sampled_from(
        [
            "\ud800",  # a lone surrogate: the serializer replaces it
            datetime.datetime(2024, 1, 2, 3, 4, 5),
            uuid.UUID(int=7),
            Color.RED,
            Level.HIGH,
            Tag("tagged"),
            bytearray(b"ab"),
            {1, 2},
            frozenset({"a"}),
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=5), st.integers(-3, 3)), inner, max_size=4),
    ),
    max_leaves=12,
)


def python_dumps(value: Any) -> Any:
    try:
        return SERDE.dumps_typed(value)
    except Exception as exc:  # noqa: BLE001 - compared with the native outcome
        return type(exc)


def native_dumps(value: Any) -> Any:
    try:
        return _core.blob_rows({"c": value}, {"c": "1"}, SERDE.dumps_typed, True)[0][2:]
    except Exception as exc:  # noqa: BLE001
        return type(exc)


@settings(max_examples=500, deadline=None)
@given(values)
def test_native_dumps_gives_the_serializers_bytes(value: Any) -> None:
    assert native_dumps(value) == python_dumps(value)


def test_native_dumps_of_nesting_beyond_the_limit_matches() -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = [deep]
    assert native_dumps(deep) == python_dumps(deep)


def test_a_custom_serializer_gets_every_value() -> None:
    seen: list = []

    def dumps(v: Any) -> tuple[str, bytes]:
        seen.append(v)
        return "custom", b"x"

    rows = _core.blob_rows({"a": None, "b": "a", "c": 1}, dict.fromkeys("abc", 1), dumps, False)
    assert [r[2:] for r in rows] == [("custom", b"x")] * 3
    assert seen == [None, "a", 1]


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), values, max_size=4),
    st.dictionaries(
        st.sampled_from(["a", "b", "c", "e"]),
        st.one_of(st.text(max_size=8), st.integers(0, 9), st.floats(0, 1)),
        max_size=4,
    ),
)
def test_blob_rows_match_the_python_rows(values_: dict, new_versions: dict) -> None:
    want: Any
    try:
        want = [
            (ch, str(v), *SERDE.dumps_typed(values_[ch]))
            for ch, v in new_versions.items()
            if ch in values_
        ]
    except TypeError as exc:
        want = TypeError
        with pytest.raises(TypeError, match="Cannot serialize channel") as info:
            codec.blob_rows(SERDE, values_, new_versions)
        assert str(exc) in str(info.value)
        return
    assert codec.blob_rows(SERDE, values_, new_versions) == want


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", *WRITES_IDX_MAP]), values), max_size=5))
def test_write_rows_match_the_python_rows(writes: list) -> None:
    head = ("t", "ns", "cid")
    try:
        rows = codec.write_rows(SERDE, writes, "task", "path")
    except TypeError:
        with pytest.raises(TypeError, match="Cannot serialize write to channel"):
            codec.write_rows_of(SERDE, *head, writes, "task", "path")
        return
    regular = [(*head, *r) for r in rows if r[1] >= 0]
    special = [(*head, *r) for r in rows if r[1] < 0]
    # special rows replace only when every write is special (else all are regular)
    want = ([*regular, *special], []) if regular else ([], special)
    assert codec.write_rows_of(SERDE, *head, writes, "task", "path") == want


_META_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**80), 2**80),
        st.floats(),
        st.text(
            alphabet=st.characters(codec="utf-8") | st.sampled_from('"\\\n\r\t\b\f\x00\x1f\x7f')
        ),
        st.sampled_from([Level.HIGH, Tag("t"), datetime.date(2024, 1, 1), "\udc80"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=10,
)


def python_metadata(config: dict, metadata: dict) -> Any:
    merged = codec.get_checkpoint_metadata(config, metadata)
    try:
        text = _META_JSON(merged)
    except Exception as exc:  # noqa: BLE001
        return type(exc)
    rid = merged.get("run_id")
    return text, None if rid is None else str(rid)


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["source", "step", "parents", "run_id", "x"]), json_values),
    st.dictionaries(
        st.sampled_from(["run_id", "user", "thread_id", "__private", "n"]),
        st.one_of(st.text(max_size=6), st.integers(), st.floats(), st.uuids()),
    ),
)
def test_metadata_json_matches_the_json_module(metadata: dict, configurable: dict) -> None:
    config = {"configurable": configurable, "metadata": {"m": 1.5}}
    want = python_metadata(config, metadata)
    text, run_id = _core.metadata_json(config, metadata, EXCLUDED_METADATA_KEYS)
    if text is not None:  # written natively: exactly the json module's text
        assert (text, run_id) == want
    # the codec's result (native, or the json fallback) is the same, errors included
    if isinstance(want, type):  # the codec names the key whose value JSON refuses
        with pytest.raises(TypeError, match="Checkpoint metadata key"):
            codec.dump_metadata(config, metadata)
    else:
        assert codec.dump_metadata(config, metadata) == want
