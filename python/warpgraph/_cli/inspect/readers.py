"""Read-only access to the checkpoint tables of one layout in one database.

Layouts: warpgraph's savers (`wg_*` tables in SQLite, `warpgraph_*` in Postgres; read
through the savers' own read path, never their setup) and LangGraph's SqliteSaver /
PostgresSaver (`checkpoints`, `writes` / `checkpoint_blobs`, `checkpoint_writes`; decoded
here with warpgraph's serializer, which reads LangGraph's bytes). No reader writes: the
connection is read-only (`mode=ro` for SQLite, `default_transaction_read_only` for
Postgres) and no reader calls a saver's `setup()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Loaded:
    """One checkpoint, decoded."""

    checkpoint_id: str
    parent_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    writes: list[tuple[str, str, Any]] = field(default_factory=list)  # (task, channel, value)


@dataclass
class Row:
    """One checkpoint's row, undecoded: enough for a history line if decoding fails."""

    checkpoint_id: str
    parent_id: str | None
    row_bytes: int
    writes: int
    write_bytes: int


class Reader:
    layout = ""
    mark = "?"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        sql = sql.replace("?", self.mark)
        if self.mark == "?":
            return self.conn.execute(sql, params).fetchall()
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()

    # table names and payload sizes, per layout
    checkpoints = ""
    writes_table = ""
    row_size = ""
    write_size = ""
    blobs_table: str | None = None
    blob_size = ""

    def threads(self) -> list[tuple[str, int, int]]:
        """(thread_id, checkpoints in every namespace, payload bytes) per thread."""
        rows = self.query(
            f"SELECT thread_id, count(*), coalesce(sum({self.row_size}), 0) "
            f"FROM {self.checkpoints} GROUP BY thread_id ORDER BY thread_id"
        )
        sizes = {t: int(b) for t, _, b in rows}
        extra = [
            (self.writes_table, self.write_size),
            *([(self.blobs_table, self.blob_size)] if self.blobs_table else []),
        ]
        for table, size in extra:
            for t, b in self.query(
                f"SELECT thread_id, coalesce(sum({size}), 0) FROM {table} GROUP BY thread_id"
            ):
                if t in sizes:
                    sizes[t] += int(b)
        return [(t, int(n), sizes[t]) for t, n, _ in rows]

    def rows(self, thread: str, ns: str) -> list[Row]:
        """The thread's checkpoints in `ns`, newest first."""
        counts = {
            cid: (int(n), int(b))
            for cid, n, b in self.query(
                f"SELECT checkpoint_id, count(*), coalesce(sum({self.write_size}), 0) "
                f"FROM {self.writes_table} WHERE thread_id = ? AND checkpoint_ns = ? "
                "GROUP BY checkpoint_id",
                (thread, ns),
            )
        }
        out = []
        for cid, parent, size in self.query(
            f"SELECT checkpoint_id, parent_checkpoint_id, {self.row_size} FROM "
            f"{self.checkpoints} WHERE thread_id = ? AND checkpoint_ns = ? "
            "ORDER BY checkpoint_id DESC",
            (thread, ns),
        ):
            n, wb = counts.get(cid, (0, 0))
            out.append(Row(cid, parent, int(size or 0), n, wb))
        return out

    def namespaces(self, thread: str) -> list[str]:
        return [
            r[0]
            for r in self.query(
                f"SELECT DISTINCT checkpoint_ns FROM {self.checkpoints} WHERE thread_id = ? "
                "ORDER BY checkpoint_ns",
                (thread,),
            )
        ]

    def blob_sizes(self, thread: str, ns: str) -> dict[tuple[str, str], int]:
        if not self.blobs_table:
            return {}
        return {
            (c, str(v)): int(b or 0)
            for c, v, b in self.query(
                f"SELECT channel, version, {self.blob_size} FROM {self.blobs_table} "
                "WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread, ns),
            )
        }

    def load(self, thread: str, ns: str, checkpoint_id: str) -> Loaded:
        raise NotImplementedError


class _SaverReader(Reader):
    """warpgraph's layouts: the saver's `get_tuple` (its decoding, skip deltas, blobs)."""

    layout = "warpgraph"
    saver: Any

    def load(self, thread: str, ns: str, checkpoint_id: str) -> Loaded:
        config = {
            "configurable": {
                "thread_id": thread,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        tup = self.saver.get_tuple(config)
        if tup is None:
            raise LookupError(f"no checkpoint {checkpoint_id}")
        parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        writes = [(w[0], w[1], w[2]) for w in tup.pending_writes or ()]
        return Loaded(checkpoint_id, parent, dict(tup.checkpoint), dict(tup.metadata), writes)


class WarpgraphSqlite(_SaverReader):
    checkpoints, writes_table, blobs_table = "wg_checkpoints", "wg_writes", "wg_blobs"
    row_size = "length(checkpoint) + length(metadata)"
    write_size = "coalesce(length(value), 0)"
    blob_size = "coalesce(length(blob), 0)"

    def __init__(self, conn: Any) -> None:
        from warpgraph.checkpoint.sqlite import SqliteSaver

        super().__init__(conn)
        self.saver = SqliteSaver(conn)
        self.saver.is_setup = True  # read as it is: never migrate


class WarpgraphPostgres(_SaverReader):
    mark = "%s"
    checkpoints = "warpgraph_checkpoints"
    writes_table = "warpgraph_checkpoint_writes"
    blobs_table = "warpgraph_checkpoint_blobs"
    row_size = (
        "octet_length(checkpoint) + coalesce(octet_length(inline), 0) + pg_column_size(metadata)"
    )
    write_size = "coalesce(octet_length(blob), 0)"
    blob_size = "coalesce(octet_length(blob), 0)"

    def __init__(self, conn: Any) -> None:
        from warpgraph.checkpoint.postgres import PostgresSaver

        super().__init__(conn)
        self.saver = PostgresSaver(conn)


def _serde() -> Any:
    from warpgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer()


def _json(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode()
    return json.loads(value) if isinstance(value, str) else dict(value)


class _LangGraphReader(Reader):
    """LangGraph's layouts: the rows decoded here with warpgraph's serializer."""

    layout = "langgraph"
    write_value = ""
    """The column of a write's serialized value."""

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)
        self.serde = _serde()

    def _checkpoint_row(self, thread: str, ns: str, checkpoint_id: str, columns: str) -> tuple:
        """(parent id, *columns) of the checkpoint; LookupError if there is none."""
        rows = self.query(
            f"SELECT parent_checkpoint_id, {columns} FROM {self.checkpoints} "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread, ns, checkpoint_id),
        )
        if not rows:
            raise LookupError(f"no checkpoint {checkpoint_id}")
        return rows[0]

    def _payload(self, data: Any) -> Any:
        """A stored value's bytes as the serializer takes them."""
        return data

    def _writes(self, thread: str, ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        """The checkpoint's pending writes, decoded, in (task, idx) order."""
        return [
            (task, channel, self.serde.loads_typed((t, self._payload(v))))
            for task, channel, t, v in self.query(
                f"SELECT task_id, channel, type, {self.write_value} FROM {self.writes_table} "
                "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
                "ORDER BY task_id, idx",
                (thread, ns, checkpoint_id),
            )
        ]


class LangGraphSqlite(_LangGraphReader):
    checkpoints, writes_table = "checkpoints", "writes"
    row_size = "length(checkpoint) + coalesce(length(metadata), 0)"
    write_size = "coalesce(length(value), 0)"
    write_value = "value"

    def load(self, thread: str, ns: str, checkpoint_id: str) -> Loaded:
        parent, typ, blob, meta = self._checkpoint_row(
            thread, ns, checkpoint_id, "type, checkpoint, metadata"
        )
        checkpoint = self.serde.loads_typed((typ, blob))
        writes = self._writes(thread, ns, checkpoint_id)
        return Loaded(checkpoint_id, parent, dict(checkpoint), _json(meta), writes)


class LangGraphPostgres(_LangGraphReader):
    mark = "%s"
    checkpoints, writes_table, blobs_table = "checkpoints", "checkpoint_writes", "checkpoint_blobs"
    row_size = "pg_column_size(checkpoint) + pg_column_size(metadata)"
    write_size = "coalesce(octet_length(blob), 0)"
    blob_size = "coalesce(octet_length(blob), 0)"
    write_value = "blob"

    def _payload(self, data: Any) -> Any:
        return bytes(data) if data is not None else b""

    def load(self, thread: str, ns: str, checkpoint_id: str) -> Loaded:
        parent, checkpoint, meta = self._checkpoint_row(
            thread, ns, checkpoint_id, "checkpoint, metadata"
        )
        checkpoint = _json(checkpoint)
        values = dict(checkpoint.get("channel_values") or {})
        versions = checkpoint.get("channel_versions") or {}
        blobs = {
            (c, v): (t, b)
            for c, v, t, b in self.query(
                "SELECT channel, version, type, blob FROM checkpoint_blobs "
                "WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread, ns),
            )
        }
        for channel, version in versions.items():
            found = blobs.get((channel, str(version)))
            if found is not None and found[0] != "empty":
                values[channel] = self.serde.loads_typed((found[0], bytes(found[1])))
        checkpoint["channel_values"] = values
        writes = self._writes(thread, ns, checkpoint_id)
        return Loaded(checkpoint_id, parent, checkpoint, _json(meta), writes)
