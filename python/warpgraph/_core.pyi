"""Type stubs for ``warpgraph._core``, the native (Rust) part of warpgraph."""

from collections.abc import Callable, Container, Iterable, Sequence
from typing import Any, Literal

__version__: str

# ---------------------------------------------------------------- stand-alone functions

def task_path_str(path: str | int | tuple[Any, ...] | list[Any]) -> str:
    """LangGraph's ``task_path_str``: ints as ``{:010d}``, tuples/lists as ``"~" + ", ".join``."""

def task_id(checkpoint_id: str, parts: Sequence[str | bytes], v: int = 4) -> str:
    """Task id: xxh3_128 (``v > 1``) or sha1 (``v <= 1``) over the checkpoint id bytes + parts.

    Raises ValueError for a checkpoint id that is not hex (dashes ignored), TypeError for a
    part that is neither str nor bytes.
    """

def uuid6(clock_seq: int | None = None) -> str:
    """A strictly increasing UUIDv6 string; ``clock_seq & 0x3FFF`` (the step) or random bits."""

def utc_now() -> str:
    """``datetime.now(timezone.utc).isoformat()``."""

def xxh3_128_hexdigest(data: bytes) -> str:
    """xxh3_128 of ``data`` as 32 lowercase hex digits (interrupt ids, namespace hashes)."""

def checkpoint_metadata(config: Any, metadata: Any, excluded: set[str]) -> dict[str, Any]:
    """``warpgraph.checkpoint.base.get_checkpoint_metadata`` (``excluded``: the keys never
    copied from the config)."""

# --- the SQL savers' version codec (warpgraph.checkpoint._sql.codec) ---
# (`encode_record` is what the savers call; the pieces below it are exported so tests can
# check each against a plain-Python model)
def encode_record(
    checkpoint: dict[str, Any],
    parent: tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]] | None,
    base: tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]] | None,
    blobs: Any,
    inline_max: int,
    core_keys: Any,
    as_bytes: bool = False,
) -> tuple[
    dict[str, Any], dict[str, dict[str, Any]], dict[str, Any], bool, dict[str, Any] | bytearray
]:
    """A checkpoint's SQL record: ``(channel_versions, versions_seen, inline, diffed,
    record)``; ``parent`` / ``base`` are ``(cv, vs, inline)`` of stored states, ``diffed``
    whether the record is a delta against ``base``; ``record`` is a dict, or with
    ``as_bytes`` (when all its values are exact builtins) ormsgpack's bytes of that dict,
    as a ``bytearray``."""

# --- the SQL savers' row builders (warpgraph.checkpoint._sql.codec); ``native``: the
# serializer is the default one, whose output exact builtins get without calling it
def blob_rows(
    values: dict[str, Any],
    new_versions: dict[str, Any],
    dumps: Any,
    native: bool,
    lists: tuple[Any, Any, Any] | None = None,
) -> list[tuple[str, str, str, bytes]]:
    """``(channel, str(version), type, bytes)`` per new version with a value; `lists`:
    ``(encode, thread, ns)``, whose ``encode(thread, ns, channel, version, value)`` gives
    the typed value stored for an exact ``list`` value (an append delta)."""

def write_rows(
    thread_id: str,
    ns: str,
    checkpoint_id: str,
    writes: Any,
    task_id: str,
    task_path: str,
    idx_map: dict[str, int],
    dumps: Any,
    native: bool,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """A task's write rows as ``(regular, special)`` full table rows (values serialized
    natively as ``bytearray``)."""

def metadata_json(config: Any, metadata: Any, excluded: set[str]) -> tuple[str | None, str | None]:
    """``(json text, run_id)`` of the merged checkpoint metadata, or ``(None, None)`` when
    a value is left to the ``json`` module."""

def compact_version(version: Any) -> Any:
    """``[n, r]`` for a saver version ``f"{n:032}.{r:016}"`` that formats back exactly;
    any other value unchanged."""

def share_seen(parent_vs: dict[str, dict[str, Any]], vs: Any) -> dict[str, dict[str, Any]]:
    """``versions_seen`` whose entries are the parent's dicts where the versions are the
    same (same type and equal), fresh dict copies elsewhere."""

def versions_delta(
    base_cv: dict[str, Any],
    base_vs: dict[str, dict[str, Any]],
    cv: dict[str, Any],
    vs: dict[str, dict[str, Any]],
) -> tuple[
    dict[str, Any], list[str], dict[str, dict[str, Any]], dict[str, list[str]], list[str], int
]:
    """``(set_cv, del_cv, set_vs, del_vs_keys, del_vs, size)`` turning the base versions
    into ``(cv, vs)``, versions compacted; size counts every entry."""

def full_versions(
    cv: dict[str, Any], vs: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Fresh copies of ``(cv, vs)`` with every version compacted."""

def pack_checkpoint_envelope(checkpoint: dict[Any, Any]) -> bytes:
    """``ormsgpack.packb`` of the checkpoint without ``channel_values`` (OPT_NON_STR_KEYS).

    Supports None/bool/int (64-bit)/float/str/bytes/list/tuple/dict of exactly those types;
    raises TypeError naming the offending path and type otherwise. Encodings of
    ``versions_seen`` entries whose inner dict is met again holding the very same objects
    are reused (same bytes, less work). The ``channel_versions`` / ``versions_seen`` dicts of
    a checkpoint just made by ``Engine.create_checkpoint`` are copied from the engine's
    prepared entries when they still hold exactly the objects those were encoded from
    (checked by identity; anything replaced or mutated is encoded normally).
    """

def _envelope_cache_hits() -> int:
    """How many dicts ``pack_checkpoint_envelope`` copied from engine-prepared entries."""

def unpack_checkpoint_envelope(data: bytes) -> dict[Any, Any]:
    """Decodes a msgpack map of plain values (arrays as lists, array keys as tuples).

    Raises ValueError for truncated, corrupt or unsupported (ext types) input.
    """

# ---------------------------------------------------------------- engine

def init(
    *,
    missing: Any,
    send_type: type,
    overwrite_type: type,
    invalid_update_error: type[Exception],
    empty_channel_error: type[Exception],
    channel_types: dict[str, type],
) -> None:
    """Hands the binding the Python classes it needs (MISSING, Send, Overwrite, errors,
    channel classes); called once by ``warpgraph.pregel._engine``."""

class GraphSpec:
    """Built once per compiled graph: channel specs and node triggers / read channels."""

    def __init__(
        self,
        channels: dict[str, Any],
        nodes: dict[str, tuple[Sequence[str], Sequence[str] | str]],
    ) -> None: ...
    @property
    def channels(self) -> dict[str, Any]: ...
    @property
    def nodes(self) -> dict[str, tuple[Any, Any]]: ...
    @property
    def trigger_to_nodes(self) -> dict[str, list[str]]: ...
    def firing_nodes(
        self,
        channel_versions: dict[str, Any],
        versions_seen: dict[str, dict[str, Any]],
        available: Container[str],
    ) -> list[int]:
        """Indices (node order) of the nodes that get a PULL task on a stored checkpoint
        (the Engine's triggering rule; a node whose single read channel is empty gets
        none), without restoring it."""

class Engine:
    """Per-run state: channel values, channel_versions, versions_seen, updated_channels."""

    def __init__(self, spec: GraphSpec, checkpoint: dict[str, Any] | None) -> None: ...
    def channel_versions(self) -> dict[str, Any]: ...
    def versions_seen(self) -> dict[str, dict[str, Any]]: ...
    def updated_channels(self) -> list[str]: ...
    def set_updated_channels(self, channels: Iterable[str]) -> None: ...
    def is_available(self, channel: str) -> bool: ...
    def read(
        self,
        select: str | list[str],
        fresh_writes: list[tuple[str, Any]] | None = None,
    ) -> Any: ...
    def checkpoint_values(self) -> dict[str, Any]: ...
    def prepare_next_tasks(
        self, checkpoint_id: str, parent_ns: str, step: int, v: int = 4
    ) -> list[tuple[str, str, tuple[Any, ...], tuple[str, ...], Any]]:
        """``[(task_id, node_name, path, triggers, input)]``: PUSH tasks first, then PULL."""
    def apply_writes(
        self,
        tasks: list[tuple[str, tuple[Any, ...], Sequence[str], Sequence[tuple[str, Any]]]],
        next_version: Literal["int", "str"] | Callable[[Any, Any], Any] | None,
    ) -> list[str]:
        """LangGraph's ``apply_writes``; returns the updated channel names, sorted."""
    def advance(
        self,
        tasks: list[tuple[str, tuple[Any, ...], Sequence[str], Sequence[tuple[str, Any]]]],
        next_version: Literal["int", "str"] | Callable[[Any, Any], Any] | None,
        id_prefix: str,
        parent_ns: str,
        step: int,
        stop: int,
        v: int = 4,
    ) -> tuple[list[str], str, list[tuple[str, str, tuple[Any, ...], tuple[str, ...], Any]]]:
        """One crossing per step without a saver: ``apply_writes``, the next checkpoint id
        (``id_prefix`` + ``step`` as 12 hex digits), then ``prepare_next_tasks`` for
        ``step + 1`` (no tasks once ``step >= stop``)."""
    def mark_interrupt_seen(self) -> None: ...
    def should_interrupt(
        self,
        interrupt_nodes: list[str] | Literal["*"],
        tasks: list[tuple[str, bool]],
    ) -> bool: ...
    def create_checkpoint(
        self, checkpoint_id: str, ts: str, updated_channels: list[str] | None
    ) -> dict[str, Any]: ...
    def create_checkpoint_packed(
        self, checkpoint_id: str, ts: str, updated_channels: list[str] | None
    ) -> tuple[dict[str, Any], bytes | None]:
        """``create_checkpoint`` and its envelope (``pack_checkpoint_envelope``'s bytes for
        it), encoded in the same call; None when that fast path does not apply."""
    def next_checkpoint(
        self,
        step: int,
        updated_channels: list[str] | None,
        previous: dict[str, Any],
        envelope: bool = True,
    ) -> tuple[str, dict[str, Any], bytes | None, dict[str, Any]]:
        """``(uuid6(step), checkpoint, envelope, new_versions(previous))`` in one call:
        ``create_checkpoint_packed`` with ``utc_now()`` (``envelope=False``:
        ``create_checkpoint``, and None)."""
    def new_versions(self, previous: dict[str, Any]) -> dict[str, Any]: ...

# --- the SQLite saver's native group-commit writer (sqlite/_native.py) -------------------

def sqlite_library(library: str | None = None) -> tuple[int, int]:
    """``(sqlite3_libversion_number(), sqlite3_memory_used())`` of the SQLite that the
    already loaded shared object ``library`` uses (None: the main program); RuntimeError
    when it is not loaded or has no SQLite API."""

class SqliteItems:
    """`SqliteCore.native_item` of the usual operations, for a list of them in one
    crossing (see `rust/py/src/savers/sqlite/items.rs`)."""

    def __init__(
        self,
        caches: tuple[dict[Any, Any], dict[Any, Any]],
        encoding: tuple[Any, set[str], int, Any, dict[str, int]],
        classes: tuple[Any, type, type],
        fence: tuple[Any, str],
        lists: Any | None = None,
    ) -> None:
        """`caches`: (states, pending); `encoding`: (dumps, excluded metadata keys,
        inline_max, core keys, WRITES_IDX_MAP); `classes`: (VersionsState, PutOp, WritesOp);
        `fence`: (NO_EXPECTATION, the config key of an expected head); `lists`: the list
        encoder of append deltas, or None."""
    def extend(
        self,
        ops: list[Any],
        start: int,
        seq: int,
        target: Any,
        want_result: bool,
        items: list[tuple[Any, ...]],
    ) -> tuple[int, bool]: ...

class SqliteWriter:
    """A thread committing queued rows on its own connection, without the GIL."""

    def __init__(
        self,
        library: str | None,
        path: str,
        uri: bool,
        busy_timeout_ms: int,
        pragmas: list[str],
        sql: tuple[str, str, str, str, str],
        fallback: Callable[[list[Any]], list[Any]],
        max_batch: int,
        linger: float,
        window: float,
        wal_autocheckpoint: int,
        spin: float = 0.0,
    ) -> None: ...
    def push(self, items: list[tuple[Any, ...]]) -> None:
        """Queue ``("put", ...)``, ``("writes", ...)`` and ``("marker", seq, future)``
        items in order (see the binding's docs); RuntimeError once closed."""
    @property
    def committed(self) -> int: ...
    @property
    def batches(self) -> int: ...
    @property
    def alive(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
