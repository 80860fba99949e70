"""Names LangGraph's own tests and ecosystem import from private or legacy module paths:
each exists under warpgraph's mirror path and behaves as LangGraph's."""

from __future__ import annotations

import importlib
import warnings
from collections import defaultdict
from functools import partial

import pytest
import warpgraph.constants as wg_constants
import warpgraph.warnings as wg_warnings


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("constants", ["CONF", "TASKS", "CONFIG_KEY_CHECKPOINTER", "START", "END"]),
        ("checkpoint.memory", ["InMemorySaver", "MemorySaver", "PersistentDict"]),
        ("pregel._checkpoint", ["copy_checkpoint"]),
        ("_internal._config", ["patch_configurable", "merge_configs", "ensure_config"]),
        ("_internal._constants", ["CONFIG_KEY_NODE_ERROR", "_CHECKPOINT_COORDINATE_KEYS"]),
        ("_internal._typing", ["StateLike", "DeprecatedKwargs", "EMPTY_SEQ"]),
        ("checkpoint.postgres._internal", ["Conn", "get_connection"]),
        ("checkpoint.postgres._ainternal", ["Conn", "get_connection"]),
    ],
)
def test_names_match_langgraph(module: str, names: list[str]) -> None:
    ours = importlib.import_module(f"warpgraph.{module}")
    theirs = importlib.import_module(f"langgraph.{module}")
    for name in names:
        assert hasattr(ours, name), f"warpgraph.{module}.{name} is missing"
        mine, ref = getattr(ours, name), getattr(theirs, name)
        if isinstance(ref, (str, tuple)):
            assert mine == ref, name


@pytest.mark.parametrize(
    "cls",
    ["LangGraphDeprecatedSinceV05", "LangGraphDeprecatedSinceV10", "LangGraphDeprecatedSinceV11"],
)
def test_deprecation_warnings_read_as_langgraphs(cls: str) -> None:
    import langgraph.warnings as lg_warnings

    ours = getattr(wg_warnings, cls)("Use the other thing.")
    theirs = getattr(lg_warnings, cls)("Use the other thing.")
    assert str(ours) == str(theirs)
    assert (ours.since, ours.expected_removal) == (theirs.since, theirs.expected_removal)
    assert isinstance(ours, wg_warnings.LangGraphDeprecationWarning)
    assert isinstance(ours, DeprecationWarning)


def test_legacy_constants_warn_and_resolve() -> None:
    from warpgraph._internal._constants import CONFIG_KEY_SEND
    from warpgraph.types import Send

    with pytest.warns(wg_warnings.LangGraphDeprecatedSinceV10, match="langgraph.types"):
        assert wg_constants.Send is Send
    with pytest.warns(wg_warnings.LangGraphDeprecatedSinceV10, match="now private"):
        assert wg_constants.CONFIG_KEY_SEND == CONFIG_KEY_SEND
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert wg_constants.TASKS == "__pregel_tasks"  # a listed name: no warning
    with pytest.raises(AttributeError, match="no attribute 'NOT_A_CONSTANT'"):
        wg_constants.NOT_A_CONSTANT  # noqa: B018


def test_persistent_dict_round_trips_a_savers_stores(tmp_path) -> None:
    from warpgraph.checkpoint.memory import InMemorySaver, PersistentDict

    path = str(tmp_path / "stores")
    d = PersistentDict(lambda: defaultdict(dict), filename=path)
    d["t"]["ns"] = {"id1": (("msgpack", b"\x80"), ("json", b"{}"), None)}
    d[("t", "ns", "c", 1)] = ("bytes", b"\x00\xff")
    d.sync()
    back = PersistentDict(lambda: defaultdict(dict), filename=path)
    back.load()
    assert back == d
    assert isinstance(back["t"], defaultdict)  # nested containers come back from the factory
    back["t"]["other"]["x"] = 1  # and keep working as such

    # a saver on persistent stores runs a graph and flushes them when closed
    saver = InMemorySaver(factory=partial(PersistentDict, filename=str(tmp_path / "saver")))
    with saver:
        config = {"configurable": {"thread_id": "1", "checkpoint_ns": ""}}
        from warpgraph.checkpoint.base import empty_checkpoint

        saver.put(config, empty_checkpoint(), {"step": -1}, {})
        assert saver.get_tuple(config) is not None
    assert (tmp_path / "saver").stat().st_size > 0


def test_persistent_dict_refuses_what_it_cannot_store_and_corrupt_files(tmp_path) -> None:
    from warpgraph.checkpoint.memory import PersistentDict

    d = PersistentDict(filename=str(tmp_path / "x"))
    d["k"] = object()
    with pytest.raises(TypeError, match="cannot store a value of type object"):
        d.sync()
    (tmp_path / "bad").write_bytes(b"\xc1\xc1\xc1")
    bad = PersistentDict(filename=str(tmp_path / "bad"))
    with pytest.raises(ValueError, match="corrupt"):
        bad.load()
    missing = PersistentDict(filename=str(tmp_path / "nope"))
    missing.load()
    assert missing == {}


def test_more_private_names_exist() -> None:
    from warpgraph._internal._runnable import RunnableLike, run_in_executor  # noqa: F401
    from warpgraph.channels.binop import _get_overwrite, _operators_equal, _strip_extras
    from warpgraph.pregel._loop import AsyncPregelLoop, PregelLoop, SyncPregelLoop
    from warpgraph.pregel.protocol import StreamChunk  # noqa: F401
    from warpgraph.types import Overwrite

    assert SyncPregelLoop is PregelLoop and AsyncPregelLoop is PregelLoop
    assert _get_overwrite(Overwrite([1])) == (True, [1])
    assert _get_overwrite({"__overwrite__": 2}) == (True, 2)
    assert _get_overwrite({"a": 1}) == (False, None)
    assert _operators_equal(len, len) and not _operators_equal(len, abs)
    assert _strip_extras(list[int]) is list
    assert (RunnableLike | None) is not None  # usable in annotations as LangGraph's


async def test_run_in_executor_runs_on_a_thread_in_the_callers_context() -> None:
    import contextvars
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from warpgraph._internal._runnable import run_in_executor

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var")
    var.set("caller")
    main = threading.get_ident()

    def where(x: int, *, y: int) -> tuple:
        return x + y, var.get(), threading.get_ident() != main

    assert await run_in_executor(None, where, 1, y=2) == (3, "caller", True)
    assert await run_in_executor({"configurable": {}}, where, 1, y=3) == (4, "caller", True)
    with ThreadPoolExecutor(1) as pool:
        assert await run_in_executor(pool, where, 2, y=2) == (4, "caller", True)


@pytest.mark.parametrize("lc", [True, False])
def test_messages_delta_reducer_matches_langgraphs(lc: bool, monkeypatch) -> None:
    from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
    from langgraph.graph.message import _messages_delta_reducer as theirs
    from warpgraph.graph import message as wg_message

    state = [HumanMessage("a", id="1"), AIMessage("b", id="2")]
    writes = [
        [HumanMessage("c", id="3"), RemoveMessage(id="1")],
        AIMessage("b2", id="2"),
        [RemoveMessage(id="nope"), HumanMessage("no id")],
    ]
    if lc:
        assert wg_message._messages_delta_reducer(state, writes) == theirs(state, writes)
        reset = [
            [HumanMessage("x", id="9"), RemoveMessage(id="__remove_all__"), AIMessage("y", id="8")]
        ]
        assert wg_message._messages_delta_reducer(state, reset) == theirs(state, reset)
        # batching-invariant
        once = wg_message._messages_delta_reducer(state, writes)
        twice = wg_message._messages_delta_reducer(
            wg_message._messages_delta_reducer(state, writes[:1]), writes[1:]
        )
        assert once == twice
    else:  # without langchain-core: dict messages, {"type": "remove"} tombstones
        from warpgraph._internal import _lc_messages

        monkeypatch.setattr(_lc_messages, "_lc", False)
        out = wg_message._messages_delta_reducer(
            [
                {"role": "user", "content": "a", "id": "1"},
                {"role": "ai", "content": "b", "id": "2"},
            ],
            [[{"type": "remove", "id": "1"}], "hi", {"role": "ai", "content": "b2", "id": "2"}],
        )
        assert out == [
            {"role": "ai", "content": "b2", "id": "2"},
            {"role": "user", "content": "hi"},
        ]
