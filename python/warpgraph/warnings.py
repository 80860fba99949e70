"""Deprecation warnings, worded and classed as LangGraph's (`langgraph.warnings`)."""

from __future__ import annotations

__all__ = (
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
)


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated feature: `since` is the version that deprecated it, `expected_removal`
    the one expected to remove it (by default the next major version)."""

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
        (s0, s1), (r0, r1) = self.since, self.expected_removal
        return f"{self.message}. Deprecated in LangGraph V{s0}.{s1} to be removed in V{r0}.{r1}."


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 0.5, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.0, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.1, to be removed in 3.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))
