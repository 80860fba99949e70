"""`serde._repeats`: lists of repeated item objects encoded once per object, same bytes."""

from __future__ import annotations

import dataclasses
import random
from datetime import datetime, timezone
from uuid import UUID

import ormsgpack
import pytest
from warpgraph.checkpoint.serde._encode import pack
from warpgraph.checkpoint.serde._repeats import MIN_ITEMS, array_header, pack_repeating
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer


@dataclasses.dataclass
class _Point:
    x: int
    when: datetime


@pytest.mark.parametrize("n", [0, 1, 15, 16, 255, 65535, 65536, 70000])
def test_array_header_is_the_encoders_own(n: int) -> None:
    whole = ormsgpack.packb([None] * n)
    assert whole == array_header(n) + b"\xc0" * n


def _items(rng: random.Random) -> list:
    pool = [
        {"a": [1, 2, {"b": "x" * rng.randrange(40)}], 3: None},
        ["nested", [1.5, True], {"k": b"\x00\x01"}],
        _Point(rng.randrange(1000), datetime(2024, 5, 1, tzinfo=timezone.utc)),
        {"uuid": UUID(int=rng.getrandbits(128)), "t": (1, 2)},
        {"big": 2**63 - 1, "neg": -(2**40), "f": 1e300},
    ]
    return [rng.choice(pool) for _ in range(rng.randrange(MIN_ITEMS, 3000))]


@pytest.mark.parametrize("seed", range(20))
def test_repeated_items_give_the_bytes_of_one_call(seed: int) -> None:
    items = _items(random.Random(seed))
    joined = pack_repeating(items, pack)
    assert joined is not None  # (five objects over >= 16 places: the sample sees repeats)
    assert joined == pack(items)


def test_lists_without_repeats_or_of_scalars_are_left_to_one_call() -> None:
    assert pack_repeating([{"i": i} for i in range(500)], pack) is None
    assert pack_repeating([7] * 500, pack) is None
    assert pack_repeating(["s"] * 500, pack) is None
    d = {"x": 1}
    assert pack_repeating([d] * (MIN_ITEMS - 1), pack) is None


def test_the_serializer_stores_the_same_bytes_and_reads_distinct_copies() -> None:
    serde = JsonPlusSerializer()
    item = {"msg": "hi" * 50, "n": [1, 2, 3]}
    value = [item] * 1000 + [{"other": True}] * 24
    typed = serde.dumps_typed(value)
    assert typed == ("msgpack", pack(value))
    back = serde.loads_typed(typed)
    assert back == value
    back[0]["n"].append(4)  # decoded items are distinct objects, as LangGraph's
    assert back[1]["n"] == [1, 2, 3]


def test_an_item_that_cannot_be_encoded_raises_as_one_call_does() -> None:
    class Opaque:
        pass

    bad = Opaque()
    items = [{"ok": 1}] * 20 + [{"bad": bad}] * 20
    with pytest.raises(TypeError) as one_call:
        pack(items)
    with pytest.raises(TypeError) as joined:
        pack_repeating(items, pack)
    assert str(joined.value) == str(one_call.value)
