"""Deprecation warnings that say since which LangGraph version, and until which, a feature
is deprecated (the classes LangGraph's own deprecations use)."""

from __future__ import annotations

__all__ = (
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
)


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecation with its versions: `since` (deprecated in) and `expected_removal`
    (the next major version unless given)."""

    message: str
    since: tuple[int, int]
    expected_removal: tuple[int, int]

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        (a, b), (c, d) = self.since, self.expected_removal
        return f"{self.message}. Deprecated in LangGraph V{a}.{b} to be removed in V{c}.{d}."


def _since(since: tuple[int, int], removal: tuple[int, int], doc: str) -> type:
    def __init__(self: LangGraphDeprecationWarning, message: str, *args: object) -> None:
        LangGraphDeprecationWarning.__init__(
            self, message, *args, since=since, expected_removal=removal
        )

    name = f"LangGraphDeprecatedSinceV{since[0]}{since[1]}"
    return type(name, (LangGraphDeprecationWarning,), {"__init__": __init__, "__doc__": doc})


LangGraphDeprecatedSinceV05 = _since((0, 5), (2, 0), "Deprecated since LangGraph v0.5.0.")
LangGraphDeprecatedSinceV10 = _since((1, 0), (2, 0), "Deprecated since LangGraph v1.0.0.")
LangGraphDeprecatedSinceV11 = _since((1, 1), (3, 0), "Deprecated since LangGraph v1.1.0.")
for _cls in (LangGraphDeprecatedSinceV05, LangGraphDeprecatedSinceV10, LangGraphDeprecatedSinceV11):
    _cls.__module__ = __name__
del _cls
