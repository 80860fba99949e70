"""EncryptedSerializer.from_aes_gcm: round trips, wrong keys, tampering, key sources."""

from __future__ import annotations

import datetime
import os

import pytest

pytest.importorskip("cryptography")

from warpgraph.checkpoint.serde.encrypted import EncryptedSerializer
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, SerdeDecodeError

VALUES = [
    {"n": 1, "items": [1, 2, 3], "when": datetime.datetime(2026, 1, 2, 3, 4, 5)},
    "text",
    b"raw bytes",
    None,
    [1.5, {"nested": (1, 2)}],
]


@pytest.mark.parametrize("value", VALUES, ids=repr)
def test_round_trip_and_ciphertext_hides_plaintext(value) -> None:
    serde = EncryptedSerializer.from_aes_gcm(key=b"k" * 32)
    typ, data = serde.dumps_typed(value)
    plain_typ, plain = JsonPlusSerializer().dumps_typed(value)
    assert typ == f"{plain_typ}+aesgcm"
    if plain:
        assert plain not in data
    assert serde.loads_typed((typ, data)) == JsonPlusSerializer().loads_typed((plain_typ, plain))


def test_nonce_is_fresh_per_dump() -> None:
    serde = EncryptedSerializer.from_aes_gcm(key=b"k" * 16)
    assert serde.dumps_typed({"a": 1})[1] != serde.dumps_typed({"a": 1})[1]


def test_wrong_key_and_tampering_are_rejected() -> None:
    serde = EncryptedSerializer.from_aes_gcm(key=b"a" * 32)
    typ, data = serde.dumps_typed({"secret": 42})
    other = EncryptedSerializer.from_aes_gcm(key=b"b" * 32)
    with pytest.raises(SerdeDecodeError, match="authentication"):
        other.loads_typed((typ, data))
    flipped = data[:-1] + bytes([data[-1] ^ 1])
    with pytest.raises(SerdeDecodeError, match="authentication"):
        serde.loads_typed((typ, flipped))
    with pytest.raises(SerdeDecodeError, match="shorter"):
        serde.loads_typed((typ, data[:10]))
    with pytest.raises(SerdeDecodeError, match="Unsupported cipher"):
        serde.loads_typed(("msgpack+rot13", data))


def test_unencrypted_payloads_still_load() -> None:
    serde = EncryptedSerializer.from_aes_gcm(key=b"k" * 24)
    assert serde.loads_typed(JsonPlusSerializer().dumps_typed({"x": [1]})) == {"x": [1]}


def test_key_from_env_and_hex(monkeypatch) -> None:
    monkeypatch.setenv("WARPGRAPH_AES_KEY", (b"z" * 32).hex())
    from_env = EncryptedSerializer.from_aes_gcm()
    explicit = EncryptedSerializer.from_aes_gcm(key=b"z" * 32)
    assert explicit.loads_typed(from_env.dumps_typed("v")) == "v"


def test_missing_or_bad_key_is_a_clear_error(monkeypatch) -> None:
    monkeypatch.delenv("WARPGRAPH_AES_KEY", raising=False)
    with pytest.raises(ValueError, match="WARPGRAPH_AES_KEY"):
        EncryptedSerializer.from_aes_gcm()
    with pytest.raises(ValueError, match="16, 24 or 32 bytes"):
        EncryptedSerializer.from_aes_gcm(key=os.urandom(20))


def test_works_inside_a_saver() -> None:
    from warpgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver(serde=EncryptedSerializer.from_aes_gcm(key=b"s" * 32))
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    checkpoint = {
        "v": 4,
        "id": "1f0e0000-0000-6000-8000-000000000001",
        "ts": "2026-01-01T00:00:00+00:00",
        "channel_values": {"a": "secret"},
        "channel_versions": {"a": 1},
        "versions_seen": {},
    }
    saved = saver.put(config, checkpoint, {"source": "input", "step": -1}, {"a": 1})
    assert saver.get_tuple(saved).checkpoint["channel_values"] == {"a": "secret"}
    assert all(b"secret" not in blob for _, blob in saver.blobs.values())
