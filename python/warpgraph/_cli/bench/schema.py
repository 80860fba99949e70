"""The `--json` report: its JSON Schema (documented in docs/benchmarks.md) and builder.

`version` is bumped on any change that can break a reader (a renamed or removed field, a
changed meaning); new optional fields keep it.
"""

from __future__ import annotations

from typing import Any

SCHEMA_ID = "warpgraph-bench"
SCHEMA_VERSION = 1

_NUM = {"type": ["number", "null"]}
_SUMMARY = {
    "type": "object",
    "required": ["runs", "median", "min", "max", "spread"],
    "properties": {
        "runs": {"type": "array", "items": {"type": "number"}},
        "median": _NUM,
        "min": _NUM,
        "max": _NUM,
        "spread": _NUM,
    },
}

JSON_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "warpgraph bench report",
    "type": "object",
    "required": ["schema", "version", "command", "machine", "config", "results", "storage"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "version": {"const": SCHEMA_VERSION},
        "command": {"type": "array", "items": {"type": "string"}},
        "machine": {
            "type": "object",
            "required": ["cpu", "cores", "os", "python", "sqlite", "postgres", "packages"],
            "properties": {
                "cpu": {"type": "string"},
                "cores": {"type": ["integer", "null"]},
                "os": {"type": "string"},
                "python": {"type": "string"},
                "sqlite": {"type": "string"},
                "postgres": {"type": ["string", "null"]},
                "packages": {"type": "object"},
            },
        },
        "config": {
            "type": "object",
            "required": ["saver", "durability", "repeat", "full", "compare", "floor", "sizes"],
            "properties": {
                "saver": {"enum": ["memory", "sqlite", "postgres"]},
                "durability": {"enum": ["sync", "async", "exit"]},
                "repeat": {"type": "integer"},
                "full": {"type": "boolean"},
                "compare": {"type": ["string", "null"]},
                "floor": {"type": "boolean"},
                "sizes": {"type": "object"},
            },
        },
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["workload", "metric", "unit", "size", "sides", "ratios"],
                "properties": {
                    "workload": {"type": "string"},
                    "metric": {"type": "string"},
                    "unit": {"type": "string"},
                    "size": {"type": "integer"},
                    "sides": {
                        "type": "object",
                        "required": ["warpgraph"],
                        "properties": {
                            "warpgraph": _SUMMARY,
                            "langgraph": _SUMMARY,
                            "floor": _SUMMARY,
                        },
                    },
                    "ratios": {
                        "type": "object",
                        "properties": {"vs_langgraph": _SUMMARY, "vs_floor": _SUMMARY},
                    },
                },
            },
        },
        "storage": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["workload", "saver", "series"],
                "properties": {
                    "workload": {"type": "string"},
                    "saver": {"type": "string"},
                    "series": {
                        "type": "object",
                        "properties": {
                            side: {
                                "type": "array",
                                "items": {
                                    "type": "array",
                                    "items": {"type": "integer"},
                                    "minItems": 2,
                                    "maxItems": 2,
                                },
                            }
                            for side in ("warpgraph", "langgraph")
                        },
                    },
                },
            },
        },
    },
}


def build_report(
    command: list[str],
    machine: dict[str, Any],
    config: dict[str, Any],
    results: list[dict[str, Any]],
    storage: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "schema": SCHEMA_ID,
        "version": SCHEMA_VERSION,
        "command": command,
        "machine": machine,
        "config": config,
        "results": results,
        "storage": storage,
    }
