"""What each inspector command reports, as JSON-ready dicts. A checkpoint that cannot be
read is an entry with its id and an `error`, never the end of the listing."""

from __future__ import annotations

from typing import Any

from warpgraph._cli.args import CliError
from warpgraph._cli.inspect import values as v
from warpgraph._cli.inspect.readers import Loaded, Reader


def _error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"cannot decode: {type(exc).__name__}" + (f": {text[0][:160]}" if text else "")


def _try_load(reader: Reader, thread: str, ns: str, cid: str) -> Loaded | str:
    try:
        return reader.load(thread, ns, cid)
    except Exception as exc:  # noqa: BLE001 - reported by id
        return _error(exc)


def threads(readers: list[Reader]) -> list[dict[str, Any]]:
    out = []
    for reader in readers:
        for thread, count, size in reader.threads():
            entry: dict[str, Any] = {
                "thread_id": thread,
                "layout": reader.layout,
                "checkpoints": count,
                "bytes": size,
                "last_checkpoint_id": None,
                "last_step": None,
                "last_update": None,
                # subgraph namespaces with checkpoints of their own (for `--ns`)
                "namespaces": [ns for ns in reader.namespaces(thread) if ns],
            }
            rows = reader.rows(thread, "")
            if rows:
                head = rows[0].checkpoint_id
                entry["last_checkpoint_id"] = head
                loaded = _try_load(reader, thread, "", head)
                if isinstance(loaded, str):
                    entry["error"] = f"checkpoint {head}: {loaded}"
                else:
                    entry["last_step"] = loaded.metadata.get("step")
                    entry["last_update"] = loaded.checkpoint.get("ts")
            out.append(entry)
    return out


def reader_for(readers: list[Reader], thread: str, layout: str | None) -> Reader:
    chosen = [r for r in readers if layout is None or r.layout == layout]
    if not chosen:
        raise CliError(f"the database has no {layout} checkpoint tables")
    for reader in chosen:
        if reader.rows(thread, "") or reader.namespaces(thread):
            return reader
    raise CliError(f"no thread {thread!r} in the database")


def history(reader: Reader, thread: str, ns: str, limit: int | None) -> list[dict[str, Any]]:
    rows = reader.rows(thread, ns)
    if not rows:
        raise CliError(f"thread {thread!r} has no checkpoints in namespace {ns!r}")
    blobs = reader.blob_sizes(thread, ns)
    out = []
    for row in rows[:limit] if limit else rows:
        entry: dict[str, Any] = {
            "checkpoint_id": row.checkpoint_id,
            "parent_checkpoint_id": row.parent_id,
            "step": None,
            "source": None,
            "next": None,
            "writes": row.writes,
            "bytes": row.row_bytes + row.write_bytes,
        }
        loaded = _try_load(reader, thread, ns, row.checkpoint_id)
        if isinstance(loaded, str):
            entry["error"] = loaded
        else:
            entry["step"] = loaded.metadata.get("step")
            entry["source"] = loaded.metadata.get("source")
            entry["next"] = v.next_nodes(loaded.checkpoint)
            entry["bytes"] += _new_blob_bytes(reader, thread, ns, loaded, blobs)
        out.append(entry)
    return out


def _new_blob_bytes(
    reader: Reader, thread: str, ns: str, loaded: Loaded, blobs: dict[tuple[str, str], int]
) -> int:
    """Bytes of the blobs this checkpoint introduced (versions its parent did not have)."""
    if not blobs:
        return 0
    mine = loaded.checkpoint.get("channel_versions") or {}
    parent: dict[str, Any] = {}
    if loaded.parent_id:
        got = _try_load(reader, thread, ns, loaded.parent_id)
        if not isinstance(got, str):
            parent = got.checkpoint.get("channel_versions") or {}
    return sum(
        blobs.get((ch, str(ver)), 0) for ch, ver in mine.items() if str(parent.get(ch)) != str(ver)
    )


def resolve(reader: Reader, thread: str, ns: str, ref: str | None) -> str:
    """A checkpoint id from a full id or a unique prefix (None: the thread's latest)."""
    rows = reader.rows(thread, ns)
    if not rows:
        raise CliError(f"thread {thread!r} has no checkpoints in namespace {ns!r}")
    if ref is None:
        return rows[0].checkpoint_id
    matches = [r.checkpoint_id for r in rows if r.checkpoint_id.startswith(ref)]
    if ref in matches:
        return ref
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CliError(f"thread {thread!r} has no checkpoint {ref!r}")
    raise CliError(f"checkpoint prefix {ref!r} is ambiguous ({len(matches)} checkpoints)")


def _load_or_fail(reader: Reader, thread: str, ns: str, cid: str) -> Loaded:
    loaded = _try_load(reader, thread, ns, cid)
    if isinstance(loaded, str):
        raise CliError(f"checkpoint {cid}: {loaded}", code=1)
    return loaded


def _channel_values(loaded: Loaded, everything: bool) -> dict[str, Any]:
    values = loaded.checkpoint.get("channel_values") or {}
    return {k: val for k, val in values.items() if everything or not v.is_internal(k)}


def show(reader: Reader, thread: str, ns: str, ref: str | None, everything: bool) -> dict:
    cid = resolve(reader, thread, ns, ref)
    loaded = _load_or_fail(reader, thread, ns, cid)
    writes = [
        {"task_id": t, "channel": ch, "value": v.jsonable(val)}
        for t, ch, val in loaded.writes
        if ch != v.INTERRUPT
    ]
    return {
        "thread_id": thread,
        "checkpoint_ns": ns,
        "checkpoint_id": cid,
        "parent_checkpoint_id": loaded.parent_id,
        "layout": reader.layout,
        "ts": loaded.checkpoint.get("ts"),
        "metadata": v.jsonable(loaded.metadata),
        "next": v.next_nodes(loaded.checkpoint),
        "values": v.jsonable(_channel_values(loaded, everything)),
        "pending_writes": writes,
        "interrupts": v.interrupts(loaded.writes),
    }


def diff(reader: Reader, thread: str, ns: str, a: str, b: str, everything: bool) -> dict:
    ida, idb = resolve(reader, thread, ns, a), resolve(reader, thread, ns, b)
    la, lb = _load_or_fail(reader, thread, ns, ida), _load_or_fail(reader, thread, ns, idb)
    return {
        "thread_id": thread,
        "checkpoint_ns": ns,
        "a": ida,
        "b": idb,
        "steps": [la.metadata.get("step"), lb.metadata.get("step")],
        "changes": v.diff_values(_channel_values(la, everything), _channel_values(lb, everything)),
    }
