"""add_messages / MessagesState against the reference (langgraph.graph.message).

Inputs are generated as plain specs and materialised afresh for each library (the reducer
assigns ids in place). Auto-assigned uuid4 ids are compared by order of first appearance.
"""

import re
import sys
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core import messages as lc
from langgraph.graph import message as ref_message
from warpgraph._internal import _lc_messages as lc_loader
from warpgraph.graph import message as wg_message

IDS = ["a", "b", "c", "d"]
ROLES = ["user", "assistant", "system"]
TYPES = ["human", "ai", "system"]
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

maybe_id = st.one_of(st.none(), st.sampled_from(IDS))
text = st.text(alphabet="xyz ", max_size=4)

dict_spec = st.one_of(
    st.tuples(st.just("dict_role"), st.sampled_from(ROLES), text, maybe_id),
    st.tuples(st.just("dict_type"), st.sampled_from(TYPES), text, maybe_id),
    st.tuples(st.just("str"), st.just(""), text, st.none()),
    st.tuples(st.just("tuple"), st.sampled_from(ROLES), text, st.none()),
    st.tuples(st.just("remove_dict"), st.just(""), st.just(""), st.sampled_from(IDS)),
)
lc_spec = st.one_of(
    dict_spec,
    st.tuples(st.just("human"), st.just(""), text, maybe_id),
    st.tuples(st.just("ai"), st.just(""), text, maybe_id),
    st.tuples(st.just("ai_chunk"), st.just(""), text, maybe_id),
    st.tuples(st.just("remove"), st.just(""), st.just(""), st.sampled_from(IDS)),
    st.tuples(st.just("remove_all"), st.just(""), st.just(""), st.none()),
)


def materialise(spec: tuple) -> Any:
    kind, role, content, mid = spec
    extra = {} if mid is None else {"id": mid}
    if kind == "dict_role":
        return {"role": role, "content": content, **extra}
    if kind == "dict_type":
        return {"type": role, "content": content, **extra}
    if kind == "str":
        return content
    if kind == "tuple":
        return (role, content)
    if kind == "remove_dict":
        return {"type": "remove", "content": "", "id": mid}
    if kind == "human":
        return lc.HumanMessage(content=content, **extra)
    if kind == "ai":
        return lc.AIMessage(content=content, **extra)
    if kind == "ai_chunk":
        return lc.AIMessageChunk(content=content, **extra)
    if kind == "remove":
        return lc.RemoveMessage(id=mid)
    if kind == "remove_all":
        return lc.RemoveMessage(id=ref_message.REMOVE_ALL_MESSAGES)
    raise AssertionError(kind)


def side(specs: Any) -> Any:
    """A list of messages, or a single message when given one spec (not in a list)."""
    if isinstance(specs, tuple):
        return materialise(specs)
    return [materialise(s) for s in specs]


class Canon:
    """Maps generated uuid4 ids to 'auto0', 'auto1', ... by first appearance."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def id(self, mid: Any) -> Any:
        if isinstance(mid, str) and UUID.match(mid):
            return self.seen.setdefault(mid, f"auto{len(self.seen)}")
        return mid


def outcome(func: Any, left: Any, right: Any, view: Any) -> Any:
    try:
        result = func(left, right)
    except Exception as exc:  # noqa: BLE001 - compared across libraries
        return ("error", type(exc).__name__, str(exc).split("\n")[0])
    canon = Canon()
    return [view(m, canon) for m in result]


def lc_view(m: Any, canon: Canon) -> tuple:
    return (type(m).__name__, m.content, canon.id(m.id), getattr(m, "name", None))


side_strategy = st.one_of(st.lists(lc_spec, max_size=6), lc_spec)


@given(left=side_strategy, right=side_strategy)
def test_add_messages_matches_reference(left: Any, right: Any) -> None:
    ref = outcome(ref_message.add_messages, side(left), side(right), lc_view)
    ours = outcome(wg_message.add_messages, side(left), side(right), lc_view)
    assert ours == ref


@given(first=st.lists(lc_spec, max_size=4), second=st.lists(lc_spec, max_size=4))
def test_add_messages_chained_matches_reference(first: list, second: list) -> None:
    """Reducing twice (state grows across steps) keeps identical ids and order."""
    results = []
    for mod in (ref_message, wg_message):
        try:
            state = mod.add_messages([], side(first))
            state = mod.add_messages(state, side(second))
        except Exception as exc:  # noqa: BLE001
            results.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
            continue
        canon = Canon()
        results.append([lc_view(m, canon) for m in state])
    assert results[1] == results[0]


def test_add_messages_keeps_identity_of_plain_messages() -> None:
    for mod in (ref_message, wg_message):
        left = [lc.HumanMessage(content="a", id="1")]
        right = [lc.AIMessage(content="b")]
        merged = mod.add_messages(left, right)
        assert merged[0] is left[0] and merged[1] is right[0]
        assert UUID.match(right[0].id)


def test_add_messages_argument_errors_match() -> None:
    results = []
    for mod in (ref_message, wg_message):
        row = []
        for kwargs in ({"left": [1]}, {"right": []}, {"left": []}):
            try:
                mod.add_messages(**kwargs)
            except ValueError as exc:
                row.append(str(exc))
        reducer = mod.add_messages(format="langchain-openai")
        merged = reducer([], [{"role": "user", "content": "hi", "id": "1"}])
        row.append([(type(m).__name__, m.content, m.id) for m in merged])
        try:
            mod.add_messages([], [], format="bogus")
        except ValueError as exc:
            row.append(str(exc))
        results.append(row)
    assert results[1] == results[0]


# ---------------------------------------------------------------- without langchain-core


@pytest.fixture
def no_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make warpgraph's add_messages behave as if langchain-core were not installed."""
    monkeypatch.setattr(lc_loader, "_lc", False)


def dict_view(m: Any, canon: Canon) -> tuple:
    return (m["content"], canon.id(m["id"]))


def ref_dict_view(m: Any, canon: Canon) -> tuple:
    return (m.content, canon.id(m.id))


dict_side = st.one_of(st.lists(dict_spec, max_size=6), dict_spec)


@given(left=dict_side, right=dict_side)
def test_dict_messages_without_langchain(left: Any, right: Any) -> None:
    """Dict mode keeps dicts but merges, assigns ids and removes exactly like the reference."""
    ref = outcome(ref_message.add_messages, side(left), side(right), ref_dict_view)
    saved = lc_loader._lc
    lc_loader._lc = False
    try:
        ours = outcome(wg_message.add_messages, side(left), side(right), dict_view)
    finally:
        lc_loader._lc = saved
    assert ours == ref


def test_dict_mode_keeps_dicts_and_does_not_mutate(no_langchain: None) -> None:
    left = [{"role": "user", "content": "hi"}]
    right = {"role": "assistant", "content": "yo", "id": "x"}
    merged = wg_message.add_messages(left, right)
    assert left == [{"role": "user", "content": "hi"}]
    assert merged[0]["content"] == "hi" and UUID.match(merged[0]["id"])
    assert merged[1] is right
    replaced = wg_message.add_messages(merged, [{"role": "assistant", "content": "new", "id": "x"}])
    assert [m["content"] for m in replaced] == ["hi", "new"]
    removed = wg_message.add_messages(replaced, [{"type": "remove", "id": "x"}])
    assert [m["content"] for m in removed] == ["hi"]
    cleared = wg_message.add_messages(
        removed, [{"type": "remove", "id": wg_message.REMOVE_ALL_MESSAGES}, "again"]
    )
    assert cleared == [{"role": "user", "content": "again", "id": cleared[0]["id"]}]
    with pytest.raises(NotImplementedError, match="Unsupported message type: int"):
        wg_message.add_messages([], [3])


BLOCK_LANGCHAIN = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name == "langchain_core" or name.startswith("langchain_core."):
            raise ImportError(f"blocked {name}")
sys.meta_path.insert(0, Block())
from warpgraph.graph import MessagesState, StateGraph, add_messages
merged = add_messages([{"role": "user", "content": "a"}], [("ai", "b"), "c"])
assert [type(m) for m in merged] == [dict] * 3, merged
assert [m["content"] for m in merged] == ["a", "b", "c"]
assert "langchain_core" not in sys.modules
StateGraph(MessagesState)
print("ok")
"""


def test_works_without_langchain_installed() -> None:
    """In a fresh interpreter where langchain_core cannot be imported."""
    import subprocess

    env_path = ":".join(p for p in sys.path if p)
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK_LANGCHAIN],
        capture_output=True,
        check=False,
        text=True,
        env={"PYTHONPATH": env_path},
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_messages_state_channel_matches_reference() -> None:
    from langgraph.graph import StateGraph as RefGraph
    from warpgraph.graph import StateGraph as WgGraph

    ref = RefGraph(ref_message.MessagesState).channels["messages"]
    ours = WgGraph(wg_message.MessagesState).channels["messages"]
    assert type(ours).__name__ == type(ref).__name__ == "BinaryOperatorAggregate"
    assert ours.operator is wg_message.add_messages
    assert list(ours.get()) == list(ref.get()) == []


def test_uuid_ids_are_fresh() -> None:
    merged = wg_message.add_messages([], [{"role": "user", "content": "a"}] * 3)
    ids = [m.id for m in merged]
    assert len(set(ids)) == 3 and all(uuid.UUID(i).version == 4 for i in ids)
