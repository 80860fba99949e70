"""InMemorySaver.list keeps each namespace's ids sorted between calls (`_ordered`): puts
in id order append to that order, anything else sorts again, and every deleter drops it;
whatever happened in between, `list` gives what sorting the stored ids gives."""

from __future__ import annotations

import random

from warpgraph.checkpoint.memory import InMemorySaver


def _id(n: int) -> str:
    return f"1ef{n:05x}-0000-6000-8000-000000000000"


def _put(saver: InMemorySaver, n: int, thread: str = "t", run: str = "r") -> None:
    cp = {
        "v": 4,
        "id": _id(n),
        "ts": "2024-01-01T00:00:00+00:00",
        "channel_values": {"a": n},
        "channel_versions": {"a": n + 1},
        "versions_seen": {},
        "updated_channels": ["a"],
    }
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    saver.put(config, cp, {"source": "loop", "step": n, "run_id": run}, {"a": n + 1})


def _listed(saver: InMemorySaver, thread: str = "t", **kwargs) -> list[str]:
    config = {"configurable": {"thread_id": thread}}
    return [t.checkpoint["id"] for t in saver.list(config, **kwargs)]


def _expected(saver: InMemorySaver, thread: str = "t") -> list[str]:
    return sorted(saver.storage.get(thread, {}).get("", {}), reverse=True)


def test_puts_in_order_extend_the_kept_order():
    saver = InMemorySaver()
    for n in range(5):
        _put(saver, n)
    assert _listed(saver) == _expected(saver)
    kept = saver._orders[("t", "")][1]
    for n in range(5, 9):
        _put(saver, n)
    assert _listed(saver, limit=3) == [_id(8), _id(7), _id(6)]
    assert saver._orders[("t", "")][1] is kept  # (extended, not sorted again)
    assert _listed(saver) == _expected(saver)


def test_out_of_order_puts_and_deletions_sort_again():
    saver = InMemorySaver()
    for n in (10, 11, 12):
        _put(saver, n)
    assert _listed(saver) == _expected(saver)
    _put(saver, 5)  # older than the kept ones
    assert _listed(saver) == _expected(saver)
    _put(saver, 20, run="gone")
    assert _listed(saver) == _expected(saver)
    saver.delete_for_runs(["gone"])  # one fewer ...
    _put(saver, 7)  # ... and one more: as many ids as the kept order had
    assert _listed(saver) == _expected(saver) and _id(7) in _listed(saver)
    saver.prune(["t"])
    _put(saver, 3)
    assert _listed(saver) == _expected(saver)
    saver.delete_thread("t")
    assert _listed(saver) == []
    _put(saver, 1)
    assert _listed(saver) == [_id(1)]


def test_copy_thread_into_a_listed_thread():
    saver = InMemorySaver()
    for n in (1, 4, 6):
        _put(saver, n, thread="src")
    for n in (2, 3, 5):
        _put(saver, n, thread="dst")
    assert _listed(saver, "dst") == _expected(saver, "dst")
    saver.copy_thread("src", "dst")
    assert _listed(saver, "dst") == _expected(saver, "dst")
    assert len(_listed(saver, "dst")) == 6


def test_before_limit_and_puts_while_listing():
    saver = InMemorySaver()
    for n in range(0, 40, 2):
        _put(saver, n)
    rng = random.Random(7)
    for _ in range(30):
        before = _id(rng.randrange(-1, 42))
        limit = rng.choice([None, 1, 3, 50])
        got = _listed(saver, before={"configurable": {"checkpoint_id": before}}, limit=limit)
        want = [c for c in _expected(saver) if c < before][:limit]
        assert got == want
    walked = []
    for n, tup in enumerate(saver.list({"configurable": {"thread_id": "t"}})):
        walked.append(tup.checkpoint["id"])
        _put(saver, 100 + n)  # a put meanwhile: newer than every id being walked
    assert walked == [c for c in _expected(saver) if c < _id(100)]
    assert _listed(saver) == _expected(saver)
