"""`python -m warpgraph`: `--version`, and `run` (a program under the langgraph alias)."""

from __future__ import annotations

import sys

USAGE = """usage: python -m warpgraph [--version] <command> ...

commands:
  run SCRIPT [ARGS...]     run a Python script with `import langgraph...` answered by warpgraph
  run -m MODULE [ARGS...]  the same for a module (as `python -m MODULE`)
"""


def _run(args: list[str]) -> int:
    import runpy

    from warpgraph import compat

    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    compat.install()
    if args[0] == "-m":
        if len(args) < 2:
            sys.stderr.write("warpgraph run: -m needs a module name\n")
            return 2
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        return 0
    import os

    script = args[0]
    if not os.path.isfile(script):
        sys.stderr.write(f"warpgraph run: no such script: {script}\n")
        return 2
    sys.argv = list(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0 if args else 2
    if args[0] == "--version":
        from warpgraph import __version__

        sys.stdout.write(f"warpgraph {__version__}\n")
        return 0
    if args[0] == "run":
        return _run(args[1:])
    sys.stderr.write(f"warpgraph: unknown command {args[0]!r}\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
