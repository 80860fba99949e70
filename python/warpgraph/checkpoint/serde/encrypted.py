"""`EncryptedSerializer`: encrypts another serializer's bytes; type tag `"{type}+{cipher}"`."""

from __future__ import annotations

import os
from typing import Any

from warpgraph.checkpoint.serde.base import CipherProtocol, SerializerProtocol
from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer, SerdeDecodeError


class EncryptedSerializer(SerializerProtocol):
    """Wraps `serde`, encrypting on dump and decrypting on load (plain tags load unencrypted)."""

    def __init__(self, cipher: CipherProtocol, serde: SerializerProtocol | None = None) -> None:
        self.cipher = cipher
        self.serde = serde if serde is not None else JsonPlusSerializer()

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        typ, data = self.serde.dumps_typed(obj)
        ciphername, ciphertext = self.cipher.encrypt(data)
        return f"{typ}+{ciphername}", ciphertext

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        tag, payload = data
        if "+" not in tag:
            return self.serde.loads_typed(data)
        typ, ciphername = tag.split("+", 1)
        return self.serde.loads_typed((typ, self.cipher.decrypt(ciphername, payload)))

    @classmethod
    def from_pycryptodome_aes(
        cls, serde: SerializerProtocol | None = None, **kwargs: Any
    ) -> EncryptedSerializer:
        """AES (EAX by default) via pycryptodome; key from `key=` or env `LANGGRAPH_AES_KEY`.

        Ciphertext layout: nonce(16) + tag(16) + ciphertext, cipher name "aes".
        """
        aes = _optional_module(
            "Crypto.Cipher.AES", "EncryptedSerializer.from_pycryptodome_aes", "pycryptodome"
        )
        key = kwargs.pop("key", None)
        if key is None:
            key = _env_key("LANGGRAPH_AES_KEY").encode()
            if len(key) not in (16, 24, 32):
                raise ValueError("LANGGRAPH_AES_KEY must be 16, 24, or 32 bytes long.")
        kwargs["mode"] = kwargs.get("mode") or aes.MODE_EAX  # pycryptodome modes are >= 1
        return cls(_AesCipher(aes, key, kwargs), serde)

    @classmethod
    def from_aes_gcm(
        cls,
        serde: SerializerProtocol | None = None,
        *,
        key: bytes | str | None = None,
        env: str = "WARPGRAPH_AES_KEY",
    ) -> EncryptedSerializer:
        """AES-GCM via `cryptography` (the `warpgraph[encryption]` extra).

        The key comes from `key=` or the environment variable `env` (16, 24 or 32 bytes, or
        that many bytes hex-encoded). Layout: nonce(12) + ciphertext-with-tag, cipher name
        "aesgcm" (type tag "{inner}+aesgcm"). A tampered payload or a wrong key raises
        SerdeDecodeError; nothing is decoded from unauthenticated bytes.
        """
        aead = _optional_module(
            "cryptography.hazmat.primitives.ciphers.aead",
            "EncryptedSerializer.from_aes_gcm",
            "'warpgraph[encryption]'",
        )
        if key is None:
            key = _env_key(env)
        return cls(_AesGcmCipher(aead.AESGCM(_coerce_aes_key(key))), serde)


class _AesCipher(CipherProtocol):
    def __init__(self, aes: Any, key: bytes, options: dict[str, Any]) -> None:
        self.aes, self.key, self.options = aes, key, options

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        cipher = self.aes.new(self.key, **self.options)
        ciphertext, tag = cipher.encrypt_and_digest(plaintext)
        return "aes", cipher.nonce + tag + ciphertext

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != "aes":
            raise SerdeDecodeError(f"Unsupported cipher: {ciphername}")
        if len(ciphertext) < 32:
            raise SerdeDecodeError("AES payload shorter than nonce + tag")
        cipher = self.aes.new(self.key, **self.options, nonce=ciphertext[:16])
        try:
            return cipher.decrypt_and_verify(ciphertext[32:], ciphertext[16:32])
        except ValueError as exc:
            raise SerdeDecodeError(f"AES payload failed authentication: {exc}") from exc


def _coerce_aes_key(key: bytes | str) -> bytes:
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) in (32, 48, 64):
        try:
            raw = bytes.fromhex(raw.decode("ascii"))
        except ValueError:
            pass
    if len(raw) not in (16, 24, 32):
        raise ValueError(f"AES key must be 16, 24 or 32 bytes (or hex of those), got {len(raw)}")
    return raw


class _AesGcmCipher(CipherProtocol):
    _NONCE = 12

    def __init__(self, aead: Any) -> None:
        self.aead = aead

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        nonce = os.urandom(self._NONCE)
        return "aesgcm", nonce + self.aead.encrypt(nonce, plaintext, b"aesgcm")

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        if ciphername != "aesgcm":
            raise SerdeDecodeError(f"Unsupported cipher: {ciphername}")
        if len(ciphertext) < self._NONCE + 16:
            raise SerdeDecodeError("AES-GCM payload shorter than nonce + tag")
        from cryptography.exceptions import InvalidTag

        try:
            return self.aead.decrypt(
                ciphertext[: self._NONCE], ciphertext[self._NONCE :], b"aesgcm"
            )
        except InvalidTag as exc:
            raise SerdeDecodeError("AES-GCM payload failed authentication") from exc


def _optional_module(name: str, feature: str, install: str) -> Any:
    """Import an optional crypto backend, or say which package `feature` needs."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise ImportError(f"{feature} needs an optional package: pip install {install}") from None


def _env_key(var: str) -> str:
    value = os.getenv(var)
    if value is None:
        raise ValueError(f"no AES key: pass key= or set the {var} environment variable")
    return value
