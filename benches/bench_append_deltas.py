"""A long chat thread: what checkpointing a growing message list costs, warpgraph's savers
(append deltas, `warpgraph/checkpoint/_sql/appends.py`) against LangGraph's, same run.

Run timed:   pytest benches/bench_append_deltas.py --benchmark-enable --benchmark-group-by=group
As a test:   pytest benches/bench_append_deltas.py   (--benchmark-disable: one short thread
             per side, final states compared; no timed assertions)
A/B:         PYTHONPATH=benches .venv/bin/python benches/bench_append_deltas.py [turns]
             (the sides take turns in one process; prints per side the thread's total
             time, its encode time - the serializer's `dumps_typed` calls - and the stored
             bytes, and LangGraph / warpgraph ratios)

The thread: TURNS turns, each a new `invoke` on the same thread (as a chat server runs a
turn), its one node appending a human and an AI message (~100 characters each). Kinds:
* `messages`: langchain-core messages through `add_messages`;
* `dicts`: plain dicts through `operator.add`.
Savers: `memory` (each library's InMemorySaver), `sqlite` (each library's SqliteSaver on
a fresh file) and, when $WARPGRAPH_PG_DSN names a server (A/B only), `postgres` (each
library's PostgresSaver on a fresh database). Stored bytes: the saver's blob values
(memory) or the checkpoint, blob and write tables' payload bytes (sqlite, postgres). A
whole-value saver stores O(turns^2) bytes; append deltas store O(total).
"""

from __future__ import annotations

import importlib
import operator
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

LIBS = ("langgraph", "warpgraph")
WHOLE = "wg-whole"  # (A/B only) warpgraph with append_deltas=False
KINDS = ("messages", "dicts")
SAVERS = ("memory", "sqlite")
TURNS = 1000
TEST_TURNS = 30
TEXT = "lorem ipsum dolor sit amet, consectetur adipiscing elit " * 2


class Dicts(TypedDict):
    log: Annotated[list, operator.add]
    n: int


def _dict_turn(state: dict) -> dict:
    n = state["n"]
    return {
        "log": [
            {"role": "user", "content": f"{n} {TEXT}", "id": f"u{n}"},
            {"role": "assistant", "content": f"{n} {TEXT}", "id": f"a{n}"},
        ]
    }


def _message_turn(state: dict) -> dict:
    from langchain_core.messages import AIMessage, HumanMessage

    n = state["n"]
    return {
        "messages": [
            HumanMessage(f"{n} {TEXT}", id=f"u{n}"),
            AIMessage(f"{n} {TEXT}", id=f"a{n}"),
        ]
    }


class _Timed:
    """Wraps a serializer's `dumps_typed` (an instance attribute: the serializer's type,
    which warpgraph's fast paths check, is unchanged) and sums the time spent in it."""

    def __init__(self, serde: Any) -> None:
        self.spent = 0.0
        inner = serde.dumps_typed

        def dumps_typed(obj: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(obj)
            finally:
                self.spent += time.perf_counter() - t0

        serde.dumps_typed = dumps_typed


class Side:
    def __init__(self, lib: str, kind: str, saver_kind: str, tmp: str) -> None:
        self.lib, self.kind, self.saver_kind, self.tmp = lib, kind, saver_kind, tmp
        graph = importlib.import_module(f"{lib}.graph")
        self.graph_mod = graph
        if kind == "messages":
            message = importlib.import_module(f"{lib}.graph.message")

            chat = TypedDict("Chat", {"messages": Annotated[list, message.add_messages], "n": int})

            self.schema, self.node, self.channel = chat, _message_turn, "messages"
        else:
            self.schema, self.node, self.channel = Dicts, _dict_turn, "log"

    def _saver(self, **kwargs: Any) -> tuple[Any, _Timed]:
        """A fresh saver and the timer of its serializer (wrapped before the saver is made:
        warpgraph's SqliteSaver keeps a reference to its `dumps_typed`)."""
        serde = importlib.import_module(f"{self.lib}.checkpoint.serde.jsonplus")
        serde = serde.JsonPlusSerializer()
        timed = _Timed(serde)
        if self.saver_kind == "memory":
            module = importlib.import_module(f"{self.lib}.checkpoint.memory")
            return module.InMemorySaver(serde=serde, **kwargs), timed
        path = os.path.join(self.tmp, f"{self.lib}-{self.kind}-{uuid.uuid4().hex}.db")
        self.path = path
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        if self.saver_kind == "postgres":
            return self._postgres(serde, **kwargs), timed
        module = importlib.import_module(f"{self.lib}.checkpoint.sqlite")
        return module.SqliteSaver(conn, serde=serde, **kwargs), timed

    def _postgres(self, serde: Any, **kwargs: Any) -> Any:
        """Each library's PostgresSaver on a fresh database of $WARPGRAPH_PG_DSN's server."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        admin = os.environ["WARPGRAPH_PG_DSN"]
        name = f"bench_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        dsn = make_conninfo(admin, dbname=name)
        assert conninfo_to_dict(dsn)["dbname"] == name
        conn = psycopg.connect(dsn, autocommit=True, prepare_threshold=0)
        module = importlib.import_module(f"{self.lib}.checkpoint.postgres")
        saver = module.PostgresSaver(conn, serde=serde, **kwargs)
        saver.setup()
        self.pg = (admin, name, conn)
        return saver

    def thread(self, turns: int, **kwargs: Any) -> tuple[float, float, int, Any]:
        """Run a fresh thread of `turns` turns: (total s, encode s, stored bytes, state).
        `kwargs`: the saver's options (warpgraph: `append_deltas=False`)."""
        saver, timed = self._saver(**kwargs)
        g = self.graph_mod.StateGraph(self.schema)
        g.add_node("turn", self.node)
        g.add_edge(self.graph_mod.START, "turn")
        g.add_edge("turn", self.graph_mod.END)
        app = g.compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "chat"}}
        t0 = time.perf_counter()
        for n in range(turns):
            app.invoke({"n": n}, config)
        spent = time.perf_counter() - t0
        state = app.get_state(config).values
        stored = self._stored(saver)
        if self.saver_kind == "sqlite":
            saver.conn.close()
            os.unlink(self.path)
        elif self.saver_kind == "postgres":
            import psycopg

            admin, name, conn = self.pg
            conn.close()
            with psycopg.connect(admin, autocommit=True) as admin_conn:
                admin_conn.execute(f"DROP DATABASE {name}")
        return spent, timed.spent, stored, state

    def _stored(self, saver: Any) -> int:
        if self.saver_kind == "memory":
            return sum(len(b[1]) for b in saver.blobs.values())
        conn = saver.conn
        if self.saver_kind == "postgres":
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
                )
            ]
            total = 0
            for table in tables:
                cols = dict(
                    conn.execute(
                        "SELECT column_name, data_type FROM information_schema.columns "
                        "WHERE table_name = %s",
                        (table,),
                    ).fetchall()
                )
                for col in ("checkpoint", "metadata", "blob", "value", "inline"):
                    if col in cols:  # (payload bytes, not the stored, maybe compressed size)
                        text = "" if cols[col] == "bytea" else "::text"
                        query = f"SELECT sum(octet_length({col}{text})) FROM {table}"
                        total += conn.execute(query).fetchone()[0] or 0
            return total
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        total = 0
        for table in tables:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            for col in ("checkpoint", "metadata", "blob", "value"):
                if col in cols:
                    total += (
                        conn.execute(f"SELECT sum(length({col})) FROM {table}").fetchone()[0] or 0
                    )
        return total


def _final(state: dict, channel: str) -> list:
    out = []
    for item in state[channel]:
        out.append(item if isinstance(item, dict) else (type(item).__name__, item.content, item.id))
    return out


# --- pytest-benchmark -------------------------------------------------------------------
_FINALS: dict[tuple[str, str], dict[str, Any]] = {}


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("saver", SAVERS)
@pytest.mark.parametrize("kind", KINDS)
def test_chat_thread(benchmark: Any, tmp_path: Any, kind: str, saver: str, lib: str) -> None:
    pytest.importorskip("langchain_core")
    side = Side(lib, kind, saver, str(tmp_path))
    benchmark.group = f"chat/{kind}/{saver}"
    benchmark.extra_info.update({"kind": kind, "saver": saver, "lib": lib})
    turns = TURNS if benchmark.enabled else TEST_TURNS
    got = benchmark.pedantic(side.thread, args=(turns,), rounds=3 if benchmark.enabled else 1)
    benchmark.extra_info["stored_bytes"] = got[2]
    benchmark.extra_info["encode_s"] = got[1]
    finals = _FINALS.setdefault((kind, saver), {})
    finals[lib] = _final(got[3], side.channel)
    assert len(finals[lib]) == 2 * turns
    if len(finals) == 2:
        assert finals["warpgraph"] == finals["langgraph"]


# --- A/B in one process -------------------------------------------------------------------
def _ab(turns: int = TURNS, rounds: int = 3) -> None:
    tmp = tempfile.mkdtemp()
    rows: dict[tuple[str, str, str], list[tuple[float, float, int]]] = {}
    savers = (*SAVERS, "postgres") if os.environ.get("WARPGRAPH_PG_DSN") else SAVERS
    for _ in range(rounds):
        for kind in KINDS:
            for saver in savers:
                for lib in LIBS:
                    got = Side(lib, kind, saver, tmp).thread(turns)
                    rows.setdefault((kind, saver, lib), []).append(got[:3])
                # warpgraph storing every value whole (as before append deltas)
                got = Side("warpgraph", kind, saver, tmp).thread(turns, append_deltas=False)
                rows.setdefault((kind, saver, WHOLE), []).append(got[:3])
    print(f"{turns}-turn thread, 2 messages a turn, median of {rounds}")
    for kind in KINDS:
        for saver in savers:
            med = {}
            for lib in (*LIBS, WHOLE):
                runs = rows[(kind, saver, lib)]
                med[lib] = [statistics.median(r[i] for r in runs) for i in range(3)]
                total, encode, stored = med[lib]
                print(
                    f"{kind:8} {saver:6} {lib:9} total {total * 1e3:8.1f} ms  "
                    f"encode {encode * 1e3:8.1f} ms  stored {stored / 1e6:8.2f} MB"
                )
            ref, ours = med["langgraph"], med["warpgraph"]
            # (warpgraph's SqliteSaver encodes the values of exact builtin types natively,
            # without its serializer: only its list values' encoding is seen)
            encode = f"{ref[1] / ours[1]:6.1f}x" if ours[1] else "   n/a "
            print(
                f"{kind:8} {saver:6} ratio     total {ref[0] / ours[0]:6.1f}x  "
                f"encode {encode}  stored {ref[2] / ours[2]:6.1f}x"
            )


if __name__ == "__main__":
    _ab(int(sys.argv[1]) if len(sys.argv) > 1 else TURNS)
