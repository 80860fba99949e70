"""Stream parts (`version="v2"` dicts) -> protocol events."""

from __future__ import annotations

import time
from typing import Any

from warpgraph.stream._types import ProtocolEvent


def convert_to_protocol_event(part: Any) -> ProtocolEvent:
    """Wrap a `{"type", "ns", "data"[, "interrupts"]}` stream part in the protocol envelope
    (namespace as a list, wall-clock timestamp in milliseconds)."""
    params: dict[str, Any] = {
        "namespace": list(part["ns"]),
        "timestamp": int(time.time() * 1000),
        "data": part["data"],
    }
    if "interrupts" in part:
        params["interrupts"] = part["interrupts"]
    return {"type": "event", "method": part["type"], "params": params}  # type: ignore[typeddict-item]
