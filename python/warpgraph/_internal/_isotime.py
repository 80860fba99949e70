"""`fromisoformat`: `datetime.fromisoformat`, with Python 3.11's wider grammar on 3.10.

Python 3.10 reads only 3- or 6-digit fractions of a second and no `Z`; SQLite's
timestamps and other writers' strings (`2026-01-01 00:00:28.5+00:00`) need more. Python
3.11+ reads them all, and there the function is `datetime.fromisoformat` itself.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime

__all__ = ("fromisoformat",)

if sys.version_info >= (3, 11):
    fromisoformat = datetime.fromisoformat
else:  # pragma: no cover - exercised on Python 3.10
    _FRACTION = re.compile(r"(\d{2}:\d{2}:\d{2})\.(\d+)")

    def _six_digits(match: re.Match[str]) -> str:
        return f"{match.group(1)}.{match.group(2)[:6].ljust(6, '0')}"

    def fromisoformat(value: str) -> datetime:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            fixed = _FRACTION.sub(_six_digits, value, count=1)
            if fixed.endswith(("Z", "z")):
                fixed = fixed[:-1] + "+00:00"
            return datetime.fromisoformat(fixed)
