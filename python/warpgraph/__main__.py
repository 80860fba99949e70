"""`python -m warpgraph run SCRIPT [ARGS...]`: run a LangGraph script on warpgraph."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or argv[0] != "run":
        print("usage: python -m warpgraph run SCRIPT [ARGS...]", file=sys.stderr)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    from warpgraph.compat import run

    return run(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
