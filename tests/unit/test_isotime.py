"""`_internal._isotime.fromisoformat` reads what Python 3.11's `datetime.fromisoformat`
reads, on 3.10 too (where the store meets other writers' timestamps)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from warpgraph._internal._isotime import fromisoformat

UTC = timezone.utc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01 00:00:28.5+00:00", datetime(2026, 1, 1, 0, 0, 28, 500000, UTC)),
        ("2026-01-01T00:00:28.123456+00:00", datetime(2026, 1, 1, 0, 0, 28, 123456, UTC)),
        (
            "2026-01-01 00:00:28.1234+02:00",
            datetime(2026, 1, 1, 0, 0, 28, 123400, timezone(timedelta(hours=2))),
        ),
        ("2026-01-01 00:00:29", datetime(2026, 1, 1, 0, 0, 29)),
        ("2026-01-01T00:00:29Z", datetime(2026, 1, 1, 0, 0, 29, tzinfo=UTC)),
        ("2026-01-01T00:00:29.25Z", datetime(2026, 1, 1, 0, 0, 29, 250000, UTC)),
    ],
)
def test_reads_what_python_311_reads(text: str, expected: datetime) -> None:
    assert fromisoformat(text) == expected


def test_rejects_what_is_not_a_timestamp() -> None:
    with pytest.raises(ValueError):
        fromisoformat("not a time")
