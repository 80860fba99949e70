"""The `warpgraph` command line: `bench` (benchmarks) and the read-only inspector
(`threads`, `history`, `show`, `diff`). `warpgraph.__main__` dispatches here."""

from __future__ import annotations

import sys

from warpgraph._cli.args import CliError

COMMANDS = ("bench", "threads", "history", "show", "diff")


def run_command(name: str, argv: list[str]) -> int:
    try:
        if name == "bench":
            from warpgraph._cli.bench.cli import main

            return main(argv)
        from warpgraph._cli.inspect.cli import main as inspect_main

        return inspect_main(name, argv)
    except CliError as exc:
        sys.stderr.write(f"warpgraph {name}: {exc}\n")
        return exc.code
    except BrokenPipeError:
        return 0
