"""Tables of the Postgres savers and their versioned migrations.

The tables are prefixed `warpgraph_` so they can live next to LangGraph's own `checkpoints`
tables in one database. Migration `i` is `MIGRATIONS[i]`; `warpgraph_checkpoint_migrations`
records the applied ones. Text keys use the "C" collation so `checkpoint_id` (uuid6 text)
orders by time whatever the database's default collation.
"""

from __future__ import annotations

CHECKPOINTS = "warpgraph_checkpoints"
BLOBS = "warpgraph_checkpoint_blobs"
WRITES = "warpgraph_checkpoint_writes"
HEADS = "warpgraph_checkpoint_heads"
MIGRATIONS_TABLE = "warpgraph_checkpoint_migrations"
FENCE_FUNCTION = "warpgraph_checkpoint_fence"  # migration 5; unused from 6 on
FENCE_HEAD = "warpgraph_checkpoint_fence_head"
FENCE_LOCK_CLASS = 0x77676663  # first key of FENCE_HEAD's advisory locks
CONFLICT_SQLSTATE = "WGC01"  # raised by FENCE_HEAD

CHECKPOINT_COLUMNS = (
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, "
    "channels, versions, inlined, inline_type, inline, metadata, run_id"
)

# the first columns of every table: a thread's namespace
_NAMESPACE = """thread_id TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL DEFAULT '',"""


def _head_moved(thread: str, ns: str, actual: str) -> str:
    """The plpgsql statement of a fence that lost: raise CONFLICT_SQLSTATE with the names
    of its variables holding the namespace and the head that won in the DETAIL's JSON."""
    return f"""RAISE EXCEPTION 'checkpoint head moved' USING ERRCODE = '{CONFLICT_SQLSTATE}',
            DETAIL = json_build_object('thread_id', {thread}, 'checkpoint_ns', {ns},
                                       'expected', expected, 'actual', {actual})::text;"""


# Arbitrary constant for pg_advisory_xact_lock: serialises concurrent setup() calls.
SETUP_LOCK_KEY = 0x77617270

CREATE_MIGRATIONS_TABLE = f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (v INTEGER PRIMARY KEY)"

MIGRATIONS: list[str] = [
    # 0: checkpoints. `checkpoint`: the checkpoint serialized with, as channel_values, only
    # its small scalar values (names in `inlined`), so reads need no blob lookup for them
    # (their blobs are still written). Rows written by earlier versions hold the shared
    # codec's record instead, and their inlined values in `inline` (inline_type); both
    # are read. `channels`/`versions` list the checkpoint's (channel, version key) pairs so
    # reads join the blobs in SQL; run_id is metadata's run_id (for delete_for_runs).
    f"""CREATE TABLE IF NOT EXISTS {CHECKPOINTS} (
    {_NAMESPACE}
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    parent_checkpoint_id TEXT COLLATE "C",
    type TEXT NOT NULL,
    checkpoint BYTEA NOT NULL,
    channels TEXT[] COLLATE "C" NOT NULL,
    versions TEXT[] COLLATE "C" NOT NULL,
    inline_type TEXT,
    inline BYTEA,
    inlined TEXT[] COLLATE "C" NOT NULL DEFAULT '{{}}',
    metadata JSONB NOT NULL DEFAULT '{{}}',
    run_id TEXT,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
)""",
    # 1: one blob per (thread, ns, channel, version), written only for new versions.
    f"""CREATE TABLE IF NOT EXISTS {BLOBS} (
    {_NAMESPACE}
    channel TEXT COLLATE "C" NOT NULL,
    version TEXT COLLATE "C" NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
)""",
    # 2: pending writes; idx < 0 for the special channels of WRITES_IDX_MAP.
    f"""CREATE TABLE IF NOT EXISTS {WRITES} (
    {_NAMESPACE}
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    idx INTEGER NOT NULL,
    task_path TEXT COLLATE "C" NOT NULL DEFAULT '',
    channel TEXT NOT NULL,
    type TEXT NOT NULL,
    blob BYTEA,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
)""",
    # 3: the head of each (thread, ns), the row write fencing locked up to version 5; from
    # 6 on it is no longer written (the head is computed, see 6).
    f"""CREATE TABLE IF NOT EXISTS {HEADS} (
    {_NAMESPACE}
    checkpoint_id TEXT COLLATE "C",
    PRIMARY KEY (thread_id, checkpoint_ns)
)""",
    # 4: delete_for_runs looks checkpoints up by run_id (replaced by 7, 8).
    f"CREATE INDEX IF NOT EXISTS {CHECKPOINTS}_run_id_idx ON {CHECKPOINTS} (run_id)",
    # 5: a fenced put that lost the race raises inside its statement, so the implicit
    # transaction of a pipelined batch rolls back as a whole.
    f"""CREATE OR REPLACE FUNCTION {FENCE_FUNCTION}(
    stored BOOLEAN, thread_id TEXT, checkpoint_ns TEXT, expected TEXT, actual TEXT
) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
BEGIN
    IF NOT stored THEN
        {_head_moved("thread_id", "checkpoint_ns", "actual")}
    END IF;
    RETURN true;
END $$""",
    # 6: write fencing, from version 6 on (FENCE_FUNCTION of 5 is no longer called).
    # The head of a (thread, ns) is its latest checkpoint id, max(checkpoint_id), as in the
    # SQLite saver, so plain puts maintain nothing. A fenced put calls FENCE_HEAD first: it
    # takes the namespace's transaction-scoped advisory lock (fenced puts on one namespace
    # run one at a time, until commit; two-key space FENCE_LOCK_CLASS, so no clash with
    # single-key advisory locks; a hash collision only serialises two namespaces), then
    # reads the head with a fresh snapshot (a volatile function's query in READ COMMITTED),
    # which sees every put committed before the lock was granted. If the head is not the
    # expected one it raises CONFLICT_SQLSTATE with the head that won, which rolls back the
    # whole statement (or pipelined batch).
    f"""CREATE OR REPLACE FUNCTION {FENCE_HEAD}(thread TEXT, ns TEXT, expected TEXT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    latest TEXT;
BEGIN
    PERFORM pg_advisory_xact_lock({FENCE_LOCK_CLASS}, hashtext(thread || chr(31) || ns));
    SELECT max(c.checkpoint_id) INTO latest FROM {CHECKPOINTS} c
    WHERE c.thread_id = thread AND c.checkpoint_ns = ns;
    IF latest IS DISTINCT FROM expected THEN
        {_head_moved("thread", "ns", "latest")}
    END IF;
    RETURN true;
END $$""",
    # 7, 8: only checkpoints with a run_id are indexed by it (delete_for_runs never looks
    # for NULL), so a put without one skips the index insert.
    f"DROP INDEX IF EXISTS {CHECKPOINTS}_run_id_idx",
    (
        f"CREATE INDEX IF NOT EXISTS {CHECKPOINTS}_run_idx ON {CHECKPOINTS} (run_id)"
        " WHERE run_id IS NOT NULL"
    ),
]


def pending_migrations(applied: int | None) -> list[tuple[int, str]]:
    """(version, sql) of the migrations after the highest applied one (None: none applied)."""
    start = 0 if applied is None else applied + 1
    return [(v, MIGRATIONS[v]) for v in range(start, len(MIGRATIONS))]
