"""The LangGraph side of `warpgraph bench --compare langgraph`, in a process of its own.

First answers whether LangGraph imports (`{"ok", "missing"}`), then reads one JSON
request a line from stdin (`prepare`, `run`, `close`), answers one JSON line on stdout;
exits at end of input. Usage: `python -m warpgraph._cli.bench.worker SAVER`. Runs the same workload definitions as warpgraph's side.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any


def hello(saver: str, out: Any) -> bool:
    """The first answer: whether LangGraph (and the saver's package) imports here."""
    from warpgraph._cli.bench.lib import langgraph_missing

    missing = langgraph_missing(saver)
    out.write(json.dumps({"ok": missing is None, "missing": missing}) + "\n")
    out.flush()
    return missing is None


def serve(inp: Any, out: Any) -> None:
    from warpgraph._cli.bench.sides import LocalSide

    side: LocalSide | None = None
    for line in inp:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            op = req["op"]
            if op == "prepare":
                if side is not None:
                    side.close()
                side = LocalSide(
                    "langgraph", req["saver"], req["durability"], req["workdir"], req["dsn"]
                )
                side.prepare(req["workload"], int(req["size"]))
                reply: dict[str, Any] = {"ok": True}
            elif op == "run":
                if side is None:
                    raise RuntimeError("run before prepare")
                result = side.run(req["thread"])
                reply = {"ok": True, "metrics": result.metrics, "series": result.series}
            elif op == "close":
                if side is not None:
                    side.close()
                    side = None
                reply = {"ok": True}
            else:
                raise ValueError(f"unknown request {op!r}")
        except Exception as exc:  # noqa: BLE001 - reported to the parent process
            tb = traceback.format_exc(limit=3).strip().splitlines()
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc} ({tb[-3:]})"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    if side is not None:
        side.close()


def main() -> int:
    # answers go to the real stdout; anything the libraries print goes to stderr
    out = sys.stdout
    sys.stdout = sys.stderr
    if not hello(sys.argv[1] if len(sys.argv) > 1 else "memory", out):
        return 0
    serve(sys.stdin, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
