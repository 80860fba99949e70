"""Search filters, compiled once per search into a predicate over stored values.

A filter maps top-level keys of the value to a condition:
- a scalar: equality (`value.get(key) == x`; a missing key reads as None);
- a dict with "$" keys: every operator must hold: $eq, $ne, $in, $nin (membership in a
  list), $gt, $gte, $lt, $lte (numeric: both sides through `float()`);
- a dict without "$" keys: the stored value must be a dict matching it, recursively
  (keys not named are free);
- a list / tuple: a list or tuple of the same length matching element by element.

The SQL stores compile the same tree into SQL (`warpgraph.store._sql.query`); this module
is the reference semantics (InMemoryStore's).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

__all__ = ("OPERATORS", "compile_filter", "unsupported_operator")

Predicate = Callable[[Any], bool]

_NUMERIC = {"$gt": operator.gt, "$gte": operator.ge, "$lt": operator.lt, "$lte": operator.le}
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin")


def unsupported_operator(name: str) -> ValueError:
    return ValueError(f"Unsupported operator: {name}")


def _operator(name: str, arg: Any) -> Predicate:
    if name == "$eq":
        return lambda v: v == arg
    if name == "$ne":
        return lambda v: v != arg
    cmp = _NUMERIC.get(name)
    if cmp is not None:
        try:
            bound = float(arg)
        except (TypeError, ValueError):  # raised per item, as an uncompiled filter would
            return lambda v: cmp(float(v), float(arg))
        return lambda v: cmp(float(v), bound)
    if name in ("$in", "$nin"):
        if not isinstance(arg, (list, tuple, set, frozenset)):
            raise ValueError(f"The {name} operator takes a list of values, got {arg!r}")
        choices = list(arg)
        if name == "$in":
            return lambda v: v in choices
        return lambda v: v not in choices
    raise unsupported_operator(name)


def _condition(expected: Any) -> Predicate:
    """Predicate over one (possibly missing -> None) stored value."""
    if isinstance(expected, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in expected):
            checks = [_operator(name, arg) for name, arg in expected.items()]
            if len(checks) == 1:
                return checks[0]

            def every(v: Any) -> bool:
                for check in checks:
                    if not check(v):
                        return False
                return True

            return every
        fields = [(k, _condition(sub)) for k, sub in expected.items()]
        return lambda v: isinstance(v, dict) and all(check(v.get(k)) for k, check in fields)
    if isinstance(expected, (list, tuple)):
        elements = [_condition(sub) for sub in expected]
        n = len(elements)
        return lambda v: (
            isinstance(v, (list, tuple))
            and len(v) == n
            and all(check(x) for check, x in zip(elements, v, strict=True))
        )
    return lambda v: v == expected


def compile_filter(filter: dict[str, Any] | None) -> Predicate | None:
    """A predicate over a stored value dict, or None when the filter is empty."""
    if not filter:
        return None
    if len(filter) == 1:
        ((key, expected),) = filter.items()
        if not isinstance(expected, (dict, list, tuple)):
            return lambda value: value.get(key) == expected
        check = _condition(expected)
        return lambda value: check(value.get(key))
    fields = [(k, _condition(expected)) for k, expected in filter.items()]

    def match(value: Any) -> bool:
        get = value.get
        for k, check in fields:
            if not check(get(k)):
                return False
        return True

    return match
