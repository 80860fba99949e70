"""Regenerate golden.json with the REFERENCE serializer (langgraph-checkpoint's JsonPlus).

Run: .venv/bin/python tests/golden/serde/make_golden.py
"""

from __future__ import annotations

import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))

import langgraph.types as lg_types
import wg_serde_cases
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot


def main() -> None:
    serde = JsonPlusSerializer()
    out = {}
    for name, (value, _) in wg_serde_cases.build(lg_types, _DeltaSnapshot).items():
        type_, data = serde.dumps_typed(value)
        out[name] = [type_, bytes(data).hex()]
    path = HERE / "golden.json"
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    main()
