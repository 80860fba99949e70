"""Search filters compiled to SQL with bound parameters only (InMemoryStore's semantics,
`warpgraph.store._filter`).

Keys must look like JSON property names (letters, digits, "_", "-", "."): anything else -
quotes, spaces, SQL - is refused with a ValueError before a statement is built. A key is
one property (a "." in it is part of the name, as in InMemoryStore and LangGraph's
Postgres store) except in SQLite, where "a.b" is the path a -> b (LangGraph's SQLite
store); nested dict filters descend. Every condition is written so it is never NULL (missing paths are false), so
negations ($ne, $nin) hold for missing keys as they do in Python.
"""

from __future__ import annotations

import re
from typing import Any

from warpgraph.store._filter import unsupported_operator
from warpgraph.store._sql.dialect import Dialect, dumps

__all__ = ("compile_filter_sql", "validate_filter_key")

_KEY = re.compile(r"^[a-zA-Z0-9_.-]+$")
_CMP = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}


def validate_filter_key(key: Any) -> None:
    if not isinstance(key, str) or not _KEY.match(key):
        raise ValueError(
            f"Invalid filter key: '{key}'. Filter keys must contain only alphanumeric "
            "characters, underscores, dots, and hyphens."
        )


class _Compiler:
    def __init__(self, dialect: Dialect) -> None:
        self.d = dialect
        self.params: list[Any] = []

    def frag(self, pair: tuple[str, list]) -> str:
        sql, params = pair
        self.params.extend(params)
        return sql

    @property
    def false(self) -> str:
        return "0" if self.d.ph == "?" else "false"

    @property
    def true(self) -> str:
        return "1" if self.d.ph == "?" else "true"

    # conditions; `parts` is the path to the value tested
    def exact(self, parts: tuple, expected: Any) -> str:
        """Python equality with `expected`."""
        d = self.d
        if expected is None:
            head = self.frag(d.type_of(d.json_path(parts)))
            self.params.extend([d.t_null, d.t_null])
            return f"(COALESCE({head}, {d.ph}) = {d.ph})"
        if isinstance(expected, bool):
            return self.frag(d.bool_is(d.json_path(parts), expected))
        if isinstance(expected, (int, float)):
            # the comparison is built after the type check's params (CASE order)
            return self._case(parts, d.t_number, lambda: self._num(parts, "=", expected))
        if isinstance(expected, str):
            return self._case(parts, d.t_text, lambda: self._text_eq(parts, expected))
        if isinstance(expected, (list, tuple)):
            return self._case(parts, d.t_array, lambda: self._array(parts, expected, self.exact))
        if isinstance(expected, dict):
            return self._case(parts, d.t_object, lambda: self._object(parts, expected, True))
        # anything else: compare JSON text (never equal in practice: values are JSON)
        return self._case(parts, d.t_text, lambda: self._text_eq(parts, dumps(expected)))

    def _case(self, parts: tuple, types: tuple[str, ...] | str, build_then: Any) -> str:
        d = self.d
        path = d.json_path(parts)
        names = (types,) if isinstance(types, str) else types
        head = self.frag(d.type_of(path))
        self.params.extend(names)
        then = build_then()
        return f"(CASE WHEN {head} IN ({d.p(len(names))}) THEN {then} ELSE {self.false} END)"

    def _num(self, parts: tuple, op: str, bound: Any) -> str:
        expr = self.frag(self.d.number_of(self.d.json_path(parts)))
        self.params.append(float(bound))
        return f"({expr} {op} {self.d.ph})"

    def _text_eq(self, parts: tuple, text: str) -> str:
        expr = self.frag(self.d.text_of(self.d.json_path(parts)))
        self.params.append(text)
        return f"({expr} = {self.d.ph})"

    def _array(self, parts: tuple, expected: Any, each: Any) -> str:
        length = self.frag(self.d.array_length(self.d.json_path(parts)))
        self.params.append(len(expected))
        conds = [f"({length} = {self.d.ph})"]
        conds += [each((*parts, i), sub) for i, sub in enumerate(expected)]
        return "(" + " AND ".join(conds) + ")"

    def _object(self, parts: tuple, expected: dict, exact: bool) -> str:
        conds = []
        if exact:
            count = self.frag(self.d.key_count(self.d.json_path(parts)))
            self.params.append(len(expected))
            conds.append(f"({count} = {self.d.ph})")
        for key, sub in expected.items():
            validate_filter_key(key)
            conds.append(
                self.exact((*parts, key), sub) if exact else self.match((*parts, key), sub)
            )
        return "(" + " AND ".join(conds) + ")" if conds else self.true

    def match(self, parts: tuple, expected: Any) -> str:
        """InMemoryStore's `_compare_values(stored, expected)`."""
        if isinstance(expected, dict):
            if any(isinstance(k, str) and k.startswith("$") for k in expected):
                return (
                    "("
                    + " AND ".join(self.operator(parts, k, v) for k, v in expected.items())
                    + ")"
                )
            return self._case(parts, self.d.t_object, lambda: self._object(parts, expected, False))
        if isinstance(expected, (list, tuple)):
            return self._case(
                parts, self.d.t_array, lambda: self._array(parts, expected, self.match)
            )
        return self.exact(parts, expected)

    def operator(self, parts: tuple, name: str, arg: Any) -> str:
        if name == "$eq":
            return self.exact(parts, arg)
        if name == "$ne":
            return f"(NOT {self.exact(parts, arg)})"
        if name in _CMP:
            float(arg)  # the same error as InMemoryStore for a non-numeric bound
            return self._case(
                parts,
                self.d.t_number,
                lambda: self._num(parts, _CMP[name], arg),
            )
        if name in ("$in", "$nin"):
            if not isinstance(arg, (list, tuple, set, frozenset)):
                raise ValueError(f"The {name} operator takes a list of values, got {arg!r}")
            alts = [self.exact(parts, v) for v in arg]
            anyof = "(" + " OR ".join(alts) + ")" if alts else self.false
            return anyof if name == "$in" else f"(NOT {anyof})"
        raise unsupported_operator(name)


def compile_filter_sql(dialect: Dialect, filter: dict[str, Any] | None) -> tuple[str, list]:
    """(condition, params) for a search filter; ("", []) when there is none."""
    if not filter:
        return "", []
    c = _Compiler(dialect)
    conds = []
    for key, expected in filter.items():
        validate_filter_key(key)
        parts = tuple(key.split(".")) if dialect.dotted_paths else (key,)
        conds.append(c.match(parts, expected))
    return " AND ".join(conds), c.params
