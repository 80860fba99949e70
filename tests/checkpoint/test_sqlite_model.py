"""Random operation sequences on SqliteSaver and on InMemorySaver (the model: a plain
per-checkpoint store, passing the conformance suite) must read back identically.

This exercises the skip-delta encoding of versions: forks from old checkpoints, channels
and nodes removed from the versions, re-puts of an existing id (whose dependents must be
re-based), and deletes/prunes that remove checkpoints other rows were diffed against.
"""

from __future__ import annotations

import random
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.checkpoint.sqlite import SqliteSaver

CHANNELS = [f"c{i}" for i in range(12)]
NODES = [f"n{i}" for i in range(8)]
THREADS = ["t1", "t2"]
NSES = ["", "sub"]


def _version(n: int, style: int) -> object:
    # ints, or LangGraph's saver strings (packed compactly by the codec), never mixed for
    # one channel. A (channel, version) always names one value, as with the savers'
    # random-suffixed versions: blobs are stored per version, shared by forks.
    return n if style == 0 else f"{n:032}.{(n * 7919 % 1000) / 1013:016}"


def operations(seed: int, length: int) -> list:
    rnd = random.Random(seed)
    kinds = ["put"] * 6 + ["writes"] * 2 + ["reput", "runs", "prune", "copy"]
    return [(rnd.choice(kinds), i, random.Random(rnd.random())) for i in range(length)]


def _apply(savers, ops) -> None:
    known: dict[tuple[str, str], list[tuple[str, dict, dict]]] = {}
    counter = 0
    for kind, i, rnd in ops:
        thread, ns = rnd.choice(THREADS), rnd.choice(NSES)
        history = known.setdefault((thread, ns), [])
        if kind in ("put", "reput"):
            if kind == "reput" and history:
                cid = rnd.choice(history)[0]
            else:
                counter += 1
                cid = f"{counter:08d}"
            parent = rnd.choice([None] + history) if history else None
            cv = dict(parent[1]) if parent else {}
            vs = {k: dict(v) for k, v in parent[2].items()} if parent else {}
            new_versions = {}
            for ch in rnd.sample(CHANNELS, rnd.randint(0, 4)):
                style = CHANNELS.index(ch) % 2
                n = i * 16 + CHANNELS.index(ch) + 1  # (channel, version) -> one value
                cv[ch] = new_versions[ch] = _version(n, style)
            for ch in rnd.sample(sorted(cv), min(len(cv), rnd.randint(0, 1))):
                del cv[ch]
            for node in rnd.sample(NODES, rnd.randint(0, 3)):
                vs.setdefault(node, {})
                if cv:
                    ch = rnd.choice(sorted(cv))
                    vs[node][ch] = cv[ch]
                if vs[node] and rnd.random() < 0.2:
                    del vs[node][rnd.choice(sorted(vs[node]))]
            if vs and rnd.random() < 0.15:
                del vs[rnd.choice(sorted(vs))]
            values = {ch: {"v": i, "ch": ch} for ch in new_versions if rnd.random() < 0.9}
            checkpoint = {
                "v": 4,
                "id": cid,
                "ts": f"2026-01-01T00:00:{i:02d}",
                "channel_values": values,
                "channel_versions": cv,
                "versions_seen": vs,
                "updated_channels": sorted(new_versions),
            }
            config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
            if parent:
                config["configurable"]["checkpoint_id"] = parent[0]
            metadata = {"source": "loop", "step": i, "run_id": rnd.choice(["r1", "r2", "r3"])}
            for saver in savers:
                saver.put(config, checkpoint, metadata, new_versions)
            history[:] = [h for h in history if h[0] != cid] + [(cid, cv, vs)]
        elif kind == "writes" and history:
            cid = rnd.choice(history)[0]
            config = {
                "configurable": {"thread_id": thread, "checkpoint_ns": ns, "checkpoint_id": cid}
            }
            # all regular or all special: in a mixed call the SQL savers keep a task's first
            # special write (as LangGraph's SQL savers), the in-memory model the last one
            kinds = rnd.choice([["a", "b"], ["__error__", "__interrupt__"]])
            writes = [(rnd.choice(kinds), i) for _ in range(2)]
            task, path = rnd.choice(["task-a", "task-b"]), rnd.choice(["", "p1"])
            for saver in savers:
                saver.put_writes(config, writes, task, path)
        elif kind == "runs":
            run = rnd.choice(["r1", "r2", "r3"])
            for saver in savers:
                saver.delete_for_runs([run])
            _resync(savers[0], known)
        elif kind == "prune":
            for saver in savers:
                saver.prune([thread], strategy="keep_latest")
            _resync(savers[0], known)
        elif kind == "copy":
            for saver in savers:
                saver.copy_thread("t1", "t3")


def _resync(model, known) -> None:
    for (thread, ns), history in known.items():
        alive = {
            t.checkpoint["id"]
            for t in model.list({"configurable": {"thread_id": thread, "checkpoint_ns": ns}})
        }
        history[:] = [h for h in history if h[0] in alive]


def _dump(saver, thread: str, ns: str) -> list:
    cfg = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    out = [tuple(t) for t in saver.list(cfg)]
    latest = saver.get_tuple(cfg)
    out.append(None if latest is None else tuple(latest))
    for t in out[:-1]:
        out.append(tuple(saver.get_tuple(t[0])))
    return out


@settings(max_examples=80)
@given(st.integers(0, 2**32), st.integers(3, 40))
def test_sqlite_saver_reads_back_like_the_in_memory_model(seed: int, length: int) -> None:
    ops = operations(seed, length)
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        model = InMemorySaver()
        _apply([model, saver], ops)
        for thread in THREADS + ["t3"]:
            for ns in NSES:
                assert _dump(saver, thread, ns) == _dump(model, thread, ns)
        # a fresh saver on the same connection (cold cache) reads the same
        cold = SqliteSaver(conn)
        for thread in THREADS + ["t3"]:
            for ns in NSES:
                assert _dump(cold, thread, ns) == _dump(model, thread, ns)
    finally:
        conn.close()
