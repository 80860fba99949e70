"""`python -m warpgraph` (also the `warpgraph` console script): `--version`, `run` (a
program under the langgraph alias), `bench` and the inspector (`warpgraph._cli`)."""

from __future__ import annotations

import sys

USAGE = """usage: python -m warpgraph [--version] <command> ...

commands:
  run SCRIPT [ARGS...]     run a Python script with `import langgraph...` answered by warpgraph
  run -m MODULE [ARGS...]  the same for a module (as `python -m MODULE`)
  bench [OPTIONS]          benchmark the engine and savers on this machine (--help)
  threads DB               list the threads of a SQLite file or Postgres DSN (read-only)
  history DB THREAD        a thread's checkpoints, newest first
  show DB THREAD [ID]      a checkpoint's state values, pending writes and interrupts
  diff DB THREAD A B       which channels changed between two checkpoints
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
    from warpgraph._cli import COMMANDS, run_command

    if args[0] in COMMANDS:
        return run_command(args[0], args[1:])
    sys.stderr.write(f"warpgraph: unknown command {args[0]!r}\n{USAGE}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
