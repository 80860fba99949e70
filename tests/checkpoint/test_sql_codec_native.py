"""The SQL savers' native version codec (`_core.compact_version`, `share_seen`,
`versions_delta`, `full_versions`) against a plain-Python statement of its semantics,
on generated version maps (saver strings, look-alikes, ints, floats, shared objects)."""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from warpgraph import _core
from warpgraph.checkpoint._sql import codec


def model_compact(v: Any) -> Any:
    if type(v) is not str or len(v) < 49 or v[32] != "." or not v[:32].isdigit():
        return v
    if not v[:32].isascii():
        return v
    try:
        r = float(v[33:])
    except ValueError:
        return v
    n = int(v[:32])
    if n >= 2**64:  # beyond msgpack's integers: kept as the string
        return v
    return [n, r] if f"{n:032}.{r:016}" == v else v


def same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def model_delta(base_cv: dict, base_vs: dict, cv: dict, vs: dict) -> tuple:
    set_cv = {
        k: model_compact(v) for k, v in cv.items() if k not in base_cv or not same(base_cv[k], v)
    }
    del_cv = [k for k in base_cv if k not in cv]
    set_vs: dict = {}
    del_vs_keys: dict = {}
    for node, seen in vs.items():
        old = base_vs.get(node)
        if old is None:
            set_vs[node] = {k: model_compact(v) for k, v in seen.items()}
            continue
        changed = {
            k: model_compact(v) for k, v in seen.items() if k not in old or not same(old[k], v)
        }
        if changed:
            set_vs[node] = changed
        gone = [k for k in old if k not in seen]
        if gone:
            del_vs_keys[node] = gone
    del_vs = [k for k in base_vs if k not in vs]
    size = (
        len(set_cv)
        + len(del_cv)
        + sum(map(len, set_vs.values()))
        + sum(map(len, del_vs_keys.values()))
        + len(del_vs)
    )
    return set_cv, del_cv, set_vs, del_vs_keys, del_vs, size


def saver_version(n: int, r: float) -> str:
    return f"{n:032}.{r:016}"


versions = st.one_of(
    st.builds(saver_version, st.integers(0, 10**32 - 1), st.floats(0, 1, exclude_max=True)),
    st.builds(saver_version, st.integers(0, 50), st.sampled_from([0.5, 0.25, 1e-7, 0.0])),
    st.integers(-5, 50),
    st.floats(allow_nan=False),
    st.sampled_from(
        [
            "00000000000000000000000000000002.0.48920383314414150",  # not the shortest form
            "00000000000000000000000000000002.0000000000000000.5",
            "00000000000000000000000000000002. 0.4892038331441415",
            "x" * 52,
            "",
        ]
    ),
)
names = st.sampled_from([f"c{i}" for i in range(8)])
version_maps = st.dictionaries(names, versions, max_size=8)
seen_maps = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), version_maps, max_size=4)


def _mutate(m: dict, rnd: random.Random, pool: list) -> dict:
    out = dict(m)
    for k in list(out):
        roll = rnd.random()
        if roll < 0.2:
            del out[k]
        elif roll < 0.4:
            out[k] = rnd.choice(pool)
        elif roll < 0.5 and type(out[k]) is str:
            out[k] = "".join(out[k])  # equal, not identical
    if pool and rnd.random() < 0.3:
        out[f"c{rnd.randrange(8)}"] = rnd.choice(pool)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(versions, min_size=1, max_size=30))
def test_compact_version_matches_the_model_and_decodes_exactly(vs: list) -> None:
    for v in vs:
        got = _core.compact_version(v)
        assert got == model_compact(v) and type(got) is type(model_compact(v))
        if type(got) is list:
            assert codec.decode_version(got) == v
        else:
            assert got is v


@settings(max_examples=300, deadline=None)
@given(version_maps, seen_maps, st.lists(versions, min_size=1, max_size=5), st.randoms())
def test_versions_delta_and_share_seen_match_the_model(
    base_cv: dict, base_vs: dict, pool: list, rnd: random.Random
) -> None:
    cv = _mutate(base_cv, rnd, pool)
    vs = {n: (s if rnd.random() < 0.4 else _mutate(s, rnd, pool)) for n, s in base_vs.items()}
    if rnd.random() < 0.3:
        vs.pop(next(iter(vs), None), None)
    if rnd.random() < 0.3:
        vs["new"] = {"c0": rnd.choice(pool)}
    assert _core.versions_delta(base_cv, base_vs, cv, vs) == model_delta(base_cv, base_vs, cv, vs)

    shared = _core.share_seen(base_vs, vs)
    assert shared == vs and list(shared) == list(vs)
    for node, seen in shared.items():
        old = base_vs.get(node)
        reuse = (
            old is not None
            and old.keys() == vs[node].keys()
            and all(same(old[k], v) for k, v in vs[node].items())
        )
        assert (seen is old) == reuse
        assert reuse or seen is not vs[node]  # a fresh copy, never the caller's dict

    c, s = _core.full_versions(cv, vs)
    assert c == {k: model_compact(v) for k, v in cv.items()}
    assert s == {n: {k: model_compact(v) for k, v in m.items()} for n, m in vs.items()}


def test_share_seen_accepts_any_mapping_and_rejects_non_mappings() -> None:
    from types import MappingProxyType

    got = _core.share_seen({}, {"a": MappingProxyType({"x": 1})})
    assert got == {"a": {"x": 1}} and type(got["a"]) is dict
    with pytest.raises(TypeError):
        _core.share_seen({}, {"a": 5})  # an int is not a versions map


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(version_maps, seen_maps, st.lists(names, max_size=3)), min_size=1, max_size=12
    ),
    st.randoms(),
)
def test_records_decode_to_the_encoded_state(steps: list, rnd: random.Random) -> None:
    """A chain of checkpoints encoded natively (`codec.encode_checkpoint`: skip deltas,
    inherited inline values) decodes, record by record against its base, to exactly the
    versions and inline values each one was encoded with."""
    from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    states: list = []

    def find_base(state, depth):
        while state.depth > depth and state.base_id is not None:
            state = next(s for s in states if s.checkpoint_id == state.base_id)
        return state

    parent = None
    for i, (cv, vs, written) in enumerate(steps):
        cp = {"v": 4, "id": f"{i:04d}", "ts": "t", "channel_versions": cv, "versions_seen": vs}
        if rnd.random() < 0.3:  # not a builtin: the record is serialized as a dict
            cp["extra"] = i if rnd.random() < 0.5 else uuid.UUID(int=i)
        blobs = [
            (ch, codec.version_key(cv[ch]), "msgpack", b"x" * rnd.choice([1, 96, 97]))
            for ch in written
            if ch in cv
        ]
        enc = codec.encode_checkpoint(serde, cp, parent, find_base, blobs)
        assert enc.record[0] == "msgpack"
        record = serde.loads_typed(enc.record)
        # the bytes written natively are those ormsgpack makes of the record as a dict
        base = None if parent is None else find_base(parent, codec.skip_base_depth(enc.depth))
        args = (
            cp,
            None if parent is None else codec._parts(parent),
            None if base is None else codec._parts(base),
            blobs,
            codec.INLINE_MAX,
            codec.CORE_KEYS,
        )
        as_dict = _core.encode_record(*args, False)[4]
        assert serde.dumps_typed(as_dict) == enc.record
        assert as_dict == record
        base = next((s for s in states if s.checkpoint_id == enc.base_id), None)
        got = codec.state_from_record(record, enc.depth, base, enc.base_id)
        assert got.channel_versions == cv and got.versions_seen == vs
        assert got.inline == enc.state.inline
        for ch, (typ, data) in enc.state.inline.items():  # a small value of the current version
            assert len(data) <= codec.INLINE_MAX and typ == "msgpack"
            assert ch in cv
        assert record.get("x", {}) == ({"extra": cp["extra"]} if "extra" in cp else {})
        states.append(enc.state)
        parent = enc.state
