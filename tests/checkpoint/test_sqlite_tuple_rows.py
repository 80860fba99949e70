"""SqliteSaver.get_tuple keeps the rows it read while the database's stamp (data_version,
schema_version, the connection's total_changes) stays the same: a repeated read runs no
query, and any change in between, by this saver, by this connection's own statements
(committed or rolled back), by another connection or another process, is seen at once."""

from __future__ import annotations

import sqlite3

import pytest
from warpgraph.checkpoint.sqlite import SqliteSaver

from tests._subproc import run_python
from tests.checkpoint.test_sqlite import _cfg, _cp

pytestmark = pytest.mark.fast_paths  # (the kept rows are a fast path)


def _put(saver: SqliteSaver, value: int, thread: str = "t") -> dict:
    head = saver.get_tuple(_cfg(thread))
    parent = _cfg(thread, cid=head.checkpoint["id"]) if head else _cfg(thread)
    return saver.put(
        parent, _cp({"a": value}, {"a": value}), {"source": "loop", "step": value}, {"a": value}
    )


def _value(saver: SqliteSaver, thread: str = "t", cid: str | None = None) -> object:
    got = saver.get_tuple(_cfg(thread, cid=cid))
    return None if got is None else got.checkpoint["channel_values"].get("a")


class _Statements:
    """The statements a connection runs (its trace callback)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.seen: list[str] = []
        conn.set_trace_callback(self.seen.append)

    def queries(self) -> list[str]:
        out = [s for s in self.seen if "wg_checkpoints" in s]
        self.seen.clear()
        return out


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "db.sqlite")


def test_a_repeated_read_runs_no_query_and_gives_fresh_objects(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        cfg = _put(saver, 1)
        _put(saver, 2)
        trace = _Statements(saver.conn)
        first = saver.get_tuple(_cfg())
        assert trace.queries()  # (read once)
        again = saver.get_tuple(_cfg())
        assert trace.queries() == []
        assert again == first and again.checkpoint is not first.checkpoint
        assert again.checkpoint["channel_versions"] is not first.checkpoint["channel_versions"]
        by_id = saver.get_tuple(_cfg(cid=cfg["configurable"]["checkpoint_id"]))
        assert by_id.checkpoint["channel_values"] == {"a": 1} and trace.queries()
        saver.get_tuple(_cfg(cid=cfg["configurable"]["checkpoint_id"]))
        assert trace.queries() == []


def test_the_savers_own_writes_are_seen(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        cfg = _put(saver, 1)
        assert _value(saver) == 1
        _put(saver, 2)
        assert _value(saver) == 2
        saver.put_writes(cfg, [("a", 9)], "task")
        cid = cfg["configurable"]["checkpoint_id"]
        assert saver.get_tuple(_cfg(cid=cid)).pending_writes == [("task", "a", 9)]
        saver.put_writes(cfg, [("b", 8)], "task2")
        assert len(saver.get_tuple(_cfg(cid=cid)).pending_writes) == 2
        saver.delete_thread("t")
        assert saver.get_tuple(_cfg()) is None


def test_this_connections_own_statements_are_seen(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        _put(saver, 1)
        _put(saver, 2)
        assert _value(saver) == 2
        conn = saver.conn
        head = saver.get_tuple(_cfg()).checkpoint["id"]
        conn.execute("DELETE FROM wg_checkpoints WHERE checkpoint_id = ?", (head,))
        assert _value(saver) == 1
        # a change rolled back: read inside the transaction, then again after it
        conn.execute("BEGIN")
        conn.execute("DELETE FROM wg_checkpoints WHERE thread_id = 't'")
        assert saver.get_tuple(_cfg()) is None
        conn.execute("ROLLBACK")
        assert _value(saver) == 1
        conn.execute("DROP TABLE wg_writes")  # (DDL: no row counted as changed)
        with pytest.raises(sqlite3.OperationalError):
            saver.get_tuple(_cfg())


def test_another_connections_commits_are_seen(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver, SqliteSaver.from_conn_string(path) as other:
        _put(saver, 1)
        assert _value(saver) == 1
        assert _value(other) == 1
        _put(other, 2)
        assert _value(saver) == 2
        raw = sqlite3.connect(path)
        raw.execute("UPDATE wg_checkpoints SET metadata = '{\"step\": 77}'")
        raw.commit()
        assert saver.get_tuple(_cfg()).metadata["step"] == 77
        raw.execute("DELETE FROM wg_checkpoints")
        raw.commit()
        raw.close()
        assert saver.get_tuple(_cfg()) is None


def test_another_processes_commits_are_seen(path) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        _put(saver, 1)
        _put(saver, 2)
        assert _value(saver) == 2
        code = (
            "import sqlite3, sys\n"
            "conn = sqlite3.connect(sys.argv[1])\n"
            "head = conn.execute('SELECT max(checkpoint_id) FROM wg_checkpoints').fetchone()[0]\n"
            "conn.execute('DELETE FROM wg_checkpoints WHERE checkpoint_id = ?', (head,))\n"
            "conn.commit()\n"
        )
        done = run_python(code, path)
        assert done.returncode == 0, done.stderr
        assert _value(saver) == 1


def test_in_memory_databases_keep_no_rows() -> None:
    with SqliteSaver.from_conn_string(":memory:") as saver:
        _put(saver, 1)
        trace = _Statements(saver.conn)
        assert _value(saver) == 1 and trace.queries()
        assert _value(saver) == 1 and trace.queries()


def _view(t) -> tuple:
    return (
        t.config,
        list(t.checkpoint),
        t.checkpoint,
        t.metadata,
        t.parent_config,
        t.pending_writes,
        [type(w[2]) for w in t.pending_writes],
    )


@pytest.mark.parametrize(
    "values, metadata, writes, kept",
    [
        ({"a": 1, "s": "x"}, {"step": 3, "tags": ["a", {"b": None}], "f": 1.5}, [], True),
        ({"a": [1, 2], "t": {"k": (1, 2)}}, {"step": 1}, [("a", 5), ("b", [1, "x"])], True),
        ({"big": "x" * 600}, {"step": 1}, [], False),  # (a blob row: tails kept per read)
        ({"a": 1}, {"step": 1, "huge": 2**70}, [], False),  # (no msgpack int)
        ({"a": 1}, {"step": 1}, [("a", {1, 2}), ("c", None)], True),
        ({"a": 1}, {"step": 1}, [("a", 1), ("c", b"\x00")], False),  # (a "bytes" write)
    ],
)
def test_a_tuple_read_again_is_the_tuple_read_first(path, values, metadata, writes, kept) -> None:
    with SqliteSaver.from_conn_string(path) as saver:
        versions = dict.fromkeys(values, 1)
        first = saver.put(_cfg(), _cp(values, versions), metadata, versions)
        cfg = saver.put(first, _cp(values, versions), {**metadata, "step": 9}, {})
        if writes:
            saver.put_writes(cfg, writes, "task")
        for config in (_cfg(), cfg):
            reads = [saver.get_tuple(config) for _ in range(4)]
            key = ("t", "", config["configurable"].get("checkpoint_id"))
            assert bool(saver._core._tuple_rows[key][3]) is kept
            with SqliteSaver.from_conn_string(path) as cold:  # (nothing kept yet)
                want = _view(cold.get_tuple(config))
            for got in reads:
                assert _view(got) == want
            # fresh objects: changing one read changes no later one
            reads[-1].checkpoint["channel_values"].clear()
            reads[-1].checkpoint["channel_versions"].clear()
            reads[-1].metadata.clear()
            reads[-1].pending_writes.clear()
            assert _view(saver.get_tuple(config)) == want
