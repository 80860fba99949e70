"""SQL fragments that differ between SQLite and Postgres; everything else is shared.

Values are JSON text in SQLite (`json_extract` / `json_type` with a bound JSON path) and
`jsonb` in Postgres (`#>` / `jsonb_typeof` with a bound text[] path). Every user-supplied
piece of a statement (filter keys included, as parts of the bound path) is a parameter.
"""

from __future__ import annotations

import json
from array import array
from datetime import datetime
from typing import Any

try:  # faster JSON when available (LangGraph's stores use it); never required
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None

__all__ = ("Dialect", "PostgresDialect", "SqliteDialect", "dumps", "loads")


if _orjson is not None:

    def dumps(value: Any) -> str:
        return _orjson.dumps(value).decode()

    loads = _orjson.loads
else:  # pragma: no cover

    def dumps(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    loads = json.loads


def pack_vector(vector: Any) -> bytes:
    """float32 little-endian bytes (sqlite-vec's layout, so LangGraph's files read back)."""
    return array("f", vector).tobytes()


def unpack_vector(blob: Any) -> list[float]:
    out = array("f")
    out.frombytes(bytes(blob))
    return out.tolist()


class Dialect:
    """Base of the two dialects: placeholder, JSON access and type names."""

    ph: str
    vectors_table: str
    recent_index: str | None = None
    """An index on (updated_at DESC, prefix, key) the store's setup creates, which lets a
    search read its page in order and stop (see `plan.recent_first`); None: none."""
    dotted_paths: bool
    refresh_needs_config: bool
    """Whether reads restart TTLs only when the TTL config says `refresh_on_read`
    (LangGraph's SQLite store) rather than whenever the op asks (its Postgres store)."""
    """Whether a filter key "a.b" is the nested path a -> b (else one property)."""
    # json type names
    t_text: tuple[str, ...]
    t_number: tuple[str, ...]
    t_array: str
    t_object: str
    t_null: str

    def p(self, n: int) -> str:
        return ", ".join([self.ph] * n)

    # --- JSON access: each returns (sql, params) over the column `value`
    def json_path(self, parts: tuple[Any, ...]) -> Any:
        raise NotImplementedError

    def type_of(self, path: Any) -> tuple[str, list]:
        raise NotImplementedError

    def text_of(self, path: Any) -> tuple[str, list]:
        raise NotImplementedError

    def number_of(self, path: Any) -> tuple[str, list]:
        raise NotImplementedError

    def array_length(self, path: Any) -> tuple[str, list]:
        raise NotImplementedError

    def key_count(self, path: Any) -> tuple[str, list]:
        raise NotImplementedError

    def bool_is(self, path: Any, value: bool) -> tuple[str, list]:
        raise NotImplementedError

    # --- namespaces
    def prefix_condition(self, prefix_text: str, column: str = "prefix") -> tuple[str, list]:
        raise NotImplementedError

    # --- values and time
    def encode_value(self, value: Any) -> Any:
        return dumps(value)

    def decode_value(self, value: Any) -> Any:
        return loads(value) if isinstance(value, (str, bytes, bytearray, memoryview)) else value

    def timestamp(self, moment: datetime) -> Any:
        return moment

    value_param: str
    """The placeholder of a value in INSERT (a cast where the column needs one)."""
    replaced_columns: tuple[str, ...]
    """The columns a replaced row takes from the put (`ON CONFLICT ... DO UPDATE SET`)."""

    def upsert(self, rows: int) -> str:
        """The INSERT of `rows` puts (prefix, key, value, created_at, updated_at,
        expires_at, ttl_minutes each) updating the rows already there in place."""
        ph = self.ph
        row = f"({ph}, {ph}, {self.value_param}, {ph}, {ph}, {ph}, {ph})"
        return (
            "INSERT INTO store "
            "(prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) VALUES "
            + ", ".join([row] * rows)
            + " ON CONFLICT (prefix, key) DO UPDATE SET "
            + ", ".join(f"{c} = excluded.{c}" for c in self.replaced_columns)
        )


class SqliteDialect(Dialect):
    ph = "?"
    dotted_paths = True
    refresh_needs_config = True
    vectors_table = "store_vectors"
    recent_index = "store_recent_idx"
    t_text = ("text",)
    t_number = ("integer", "real")
    t_array = "array"
    t_object = "object"
    t_null = "null"
    value_param = "?"

    def json_path(self, parts: tuple[Any, ...]) -> str:
        out = ["$"]
        for part in parts:
            # keys are validated (no quotes), indexes are ints we made
            out.append(f"[{part}]" if isinstance(part, int) else f'."{part}"')
        return "".join(out)

    def type_of(self, path: str) -> tuple[str, list]:
        return "json_type(value, ?)", [path]

    def text_of(self, path: str) -> tuple[str, list]:
        return "json_extract(value, ?)", [path]

    def number_of(self, path: str) -> tuple[str, list]:
        return "CAST(json_extract(value, ?) AS REAL)", [path]

    def array_length(self, path: str) -> tuple[str, list]:
        return "json_array_length(value, ?)", [path]

    def key_count(self, path: str) -> tuple[str, list]:
        return "(SELECT count(*) FROM json_each(value, ?))", [path]

    def bool_is(self, path: str, value: bool) -> tuple[str, list]:
        return "COALESCE(json_type(value, ?) = ?, 0)", [path, "true" if value else "false"]

    def prefix_condition(self, prefix_text: str, column: str = "prefix") -> tuple[str, list]:
        # "a.b" itself or anything below it: "a.b." <= prefix < "a.b/" ("/" follows ".")
        return (
            f"({column} = ? OR ({column} >= ? AND {column} < ?))",
            [prefix_text, prefix_text + ".", prefix_text + "/"],
        )

    def timestamp(self, moment: datetime) -> str:
        return moment.isoformat(" ")

    # an in-place update of a replaced row (same rowid: its key indexes stay as they are),
    # with LangGraph's values: created_at restarts as with its INSERT OR REPLACE
    replaced_columns = ("value", "created_at", "updated_at", "expires_at", "ttl_minutes")


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class PostgresDialect(Dialect):
    ph = "%s"
    dotted_paths = False
    refresh_needs_config = False
    vectors_table = "warpgraph_store_vectors"
    t_text = ("string",)
    t_number = ("number",)
    t_array = "array"
    t_object = "object"
    t_null = "null"
    value_param = "%s::jsonb"

    def json_path(self, parts: tuple[Any, ...]) -> list[str]:
        return [str(part) for part in parts]

    def type_of(self, path: list[str]) -> tuple[str, list]:
        return "jsonb_typeof(value #> %s::text[])", [path]

    def text_of(self, path: list[str]) -> tuple[str, list]:
        return "(value #>> %s::text[])", [path]

    def number_of(self, path: list[str]) -> tuple[str, list]:
        # only evaluated under a number type check (see filters.py)
        return "(value #>> %s::text[])::double precision", [path]

    def array_length(self, path: list[str]) -> tuple[str, list]:
        return "jsonb_array_length(value #> %s::text[])", [path]

    def key_count(self, path: list[str]) -> tuple[str, list]:
        return "(SELECT count(*) FROM jsonb_object_keys(value #> %s::text[]))", [path]

    def bool_is(self, path: list[str], value: bool) -> tuple[str, list]:
        return "COALESCE((value #> %s::text[]) = %s::jsonb, false)", [path, dumps(value)]

    def prefix_condition(self, prefix_text: str, column: str = "prefix") -> tuple[str, list]:
        return (
            f"({column} = %s OR {column} LIKE %s)",
            [prefix_text, _like_escape(prefix_text) + ".%"],
        )

    def decode_value(self, value: Any) -> Any:
        return loads(value) if isinstance(value, (str, bytes)) else value

    replaced_columns = ("value", "updated_at", "expires_at", "ttl_minutes")  # created_at kept
