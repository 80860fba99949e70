"""Process-wide switches, read once when warpgraph is imported.

`WARPGRAPH_FAST_PATHS=0` routes every run through the general path: no lone steps run
inside the step machine (`pregel/_lone.py`), the loop hands no saver operation on itself
(`loop.perform_write` / `loop.lone_session`), the engine encodes no envelope for the saver
(`loop.packed_puts`) and keeps no envelope sections or seen cache (`_core.init`), the
loop copies what it hands to savers, the saver sessions make one plain call per operation
(no `put_batch` transactions, no group-commit writer), the SQLite saver's writers are the
Python ones and the SQL row builders serialize every value through the serializer.
Results and saved data are the same as with the fast paths, only slower: CI runs the
tests both ways so that each path is checked against the other.
"""

from __future__ import annotations

import os

__all__ = ("ENV_FAST_PATHS", "FAST_PATHS")

ENV_FAST_PATHS = "WARPGRAPH_FAST_PATHS"

FAST_PATHS: bool = os.environ.get(ENV_FAST_PATHS, "1").strip().lower() not in ("0", "false", "no")
"""False when `WARPGRAPH_FAST_PATHS=0` (also "false" / "no")."""
