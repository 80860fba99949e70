"""Serializer protocols and the adapter for untyped (dumps/loads) serializers."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


class UntypedSerializerProtocol(Protocol):
    """A serializer with `dumps(obj) -> bytes` / `loads(bytes) -> obj`."""

    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


@runtime_checkable
class SerializerProtocol(Protocol):
    """A serializer with `dumps_typed(obj) -> (type, bytes)` / `loads_typed((type, bytes))`."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]: ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any: ...


class SerializerCompat(SerializerProtocol):
    """Gives an untyped serializer the typed interface: the type tag is the value's class
    name on the way out and ignored on the way in."""

    __slots__ = ("serde",)

    def __init__(self, serde: UntypedSerializerProtocol) -> None:
        self.serde = serde

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        payload = self.serde.dumps(obj)
        return obj.__class__.__name__, payload

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        _tag, payload = data
        return self.serde.loads(payload)


def maybe_add_typed_methods(
    serde: SerializerProtocol | UntypedSerializerProtocol,
) -> SerializerProtocol:
    """`serde` itself when it has the typed interface, else `serde` behind `SerializerCompat`."""
    typed = isinstance(serde, SerializerProtocol)
    return serde if typed else SerializerCompat(serde)  # type: ignore[return-value]


class CipherProtocol(Protocol):
    """Symmetric cipher used by `EncryptedSerializer`."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """Return `(cipher name, ciphertext)`."""
        ...

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Return the plaintext."""
        ...
