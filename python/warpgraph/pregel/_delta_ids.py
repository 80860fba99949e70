"""Stable ids for the messages written to DeltaChannels.

A DeltaChannel is rebuilt from its saved writes on every load, and its reducer need not give
messages ids, so a message saved without one would come back id-less (or with a new id each
read). Before a write is saved or applied, `stamp_ids` gives it ids: in a channel folded by
`_messages_delta_reducer`, every message-like value (a message, a message dict, a string, a
`(role, content)` pair; alone, in a list or in an Overwrite) becomes a message with an id;
other DeltaChannels only get ids on message objects and on message dicts (in a list they
become messages). Values passed in are never changed except message objects' ids.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from uuid import uuid4

from warpgraph._internal._lc_messages import MESSAGES_DELTA_REDUCER, lc_messages
from warpgraph.channels.binop import _unwrap_overwrite
from warpgraph.types import Overwrite

__all__ = ("stamp_ids",)

_ROLES = frozenset(("user", "human", "assistant", "ai", "tool", "system", "function"))
_TYPES = frozenset(("human", "ai", "tool", "system", "function", "remove"))


def _lc() -> Any:
    return lc_messages()


def _message_dict(item: dict) -> bool:
    return item.get("role") in _ROLES or item.get("type") in _TYPES


def _give_id(item: Any, lc: Any) -> None:
    if isinstance(item, lc.BaseMessage) and item.id is None:
        item.id = str(uuid4())


def _as_message(item: Any, lc: Any, *, must: bool = False) -> Any:
    if isinstance(item, lc.BaseMessage):
        _give_id(item, lc)
        return item
    try:
        msg = lc.convert_to_messages([item])[0]
    except Exception:
        if must:
            raise
        return item
    if not msg.id:
        msg.id = str(uuid4())
    return msg


def _each(items: Any, fn: Callable[[Any], Any]) -> Any:
    out = [fn(x) for x in items]
    if all(a is b for a, b in zip(out, items)):
        return items
    return out if isinstance(items, list) else tuple(out)


def _for_messages_reducer(value: Any, lc: Any) -> Any:
    hit, inner = _unwrap_overwrite(value)
    if hit:
        if isinstance(inner, (list, tuple)):
            items = _each(inner, lambda x: _as_message(x, lc))
            if items is not inner:
                return Overwrite(items)
        return value
    if isinstance(value, list):
        return _each(
            value,
            lambda x: _as_message(x, lc, must=isinstance(x, dict) and _message_dict(x)),
        )
    return _as_message(value, lc)


def _for_other_reducer(value: Any, lc: Any) -> Any:
    hit, inner = _unwrap_overwrite(value)
    if hit:
        if isinstance(inner, (list, tuple)):
            for x in inner:
                _give_id(x, lc)
        return value
    if isinstance(value, list):

        def item(x: Any) -> Any:
            if isinstance(x, dict) and _message_dict(x):
                return _as_message(x, lc, must=True)
            _give_id(x, lc)
            return x

        return _each(value, item)
    if isinstance(value, dict) and _message_dict(value) and not value.get("id"):
        return {**value, "id": str(uuid4())}
    _give_id(value, lc)
    return value


def stamp_ids(specs: Mapping[str, Any], writes: Any) -> None:
    """Give the messages of `writes` (a list or deque of `(channel, value)`, changed in
    place) that go to the DeltaChannels of `specs` (name -> channel) their ids."""
    lc = None
    for i, (ch, value) in enumerate(writes):
        spec = specs.get(ch)
        if spec is None:
            continue
        if lc is None:
            lc = _lc()
            if lc is None:  # no langchain-core: no message objects to give ids
                return
        if getattr(spec.reducer, MESSAGES_DELTA_REDUCER, False):
            new = _for_messages_reducer(value, lc)
        else:
            new = _for_other_reducer(value, lc)
        if new is not value:
            writes[i] = (ch, new)
