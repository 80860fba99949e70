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
    """Gives an untyped serializer the typed interface (type tag = class name)."""

    def __init__(self, serde: UntypedSerializerProtocol) -> None:
        self.serde = serde

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return type(obj).__name__, self.serde.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.serde.loads(data[1])


def maybe_add_typed_methods(
    serde: SerializerProtocol | UntypedSerializerProtocol,
) -> SerializerProtocol:
    """Return `serde` if it is typed, else wrap it in `SerializerCompat`."""
    if isinstance(serde, SerializerProtocol):
        return serde
    return SerializerCompat(serde)


class CipherProtocol(Protocol):
    """Symmetric cipher used by `EncryptedSerializer`."""

    def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
        """Return `(cipher name, ciphertext)`."""
        ...

    def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
        """Return the plaintext."""
        ...
