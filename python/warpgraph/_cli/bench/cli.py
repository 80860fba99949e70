"""`warpgraph bench`: argument handling, checks before anything runs, the run, the output."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import uuid
from typing import Any

from warpgraph._cli.args import CliError, Parser, check_writable
from warpgraph._cli.bench.runner import Options, result_rows, run_workload
from warpgraph._cli.bench.savers import SAVERS, dsn_with_schema
from warpgraph._cli.bench.workloads import WORKLOADS

DURABILITIES = ("sync", "async", "exit")
PG_DSN_ENV = "WARPGRAPH_PG_DSN"


def parser() -> Parser:
    p = Parser(
        prog="warpgraph bench",
        description="Measure warpgraph's engine and savers on this machine (quick suite on a "
        "temporary SQLite file by default).",
    )
    p.add_argument("--saver", choices=SAVERS, default="sqlite", help="default: sqlite")
    p.add_argument("--dsn", help=f"Postgres connection string (default: ${PG_DSN_ENV})")
    p.add_argument(
        "--workload",
        action="append",
        choices=list(WORKLOADS),
        metavar="NAME",
        help="run only this workload (repeatable): " + ", ".join(WORKLOADS),
    )
    p.add_argument("--size", type=int, help="the workloads' size parameter (nodes, steps, ...)")
    p.add_argument("--durability", choices=DURABILITIES, default="sync", help="default: sync")
    p.add_argument("--repeat", type=int, help="timed turns per workload (default 3, --full 7)")
    p.add_argument("--full", action="store_true", help="full sizes and 7 turns")
    p.add_argument("--compare", choices=["langgraph"], help="also run LangGraph (worker process)")
    p.add_argument("--floor", action="store_true", help="also the raw driver's minimum")
    p.add_argument("--json", metavar="FILE", help="write the machine-readable report")
    p.add_argument("--plot", metavar="FILE", help="write a plot (.png or .html)")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    return p


def _postgres_version(dsn: str) -> str:
    try:
        import psycopg
    except ImportError:
        raise CliError(
            "--saver postgres needs psycopg: pip install 'warpgraph[postgres]'"
        ) from None
    try:
        with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
            return str(conn.execute("SHOW server_version").fetchone()[0])
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CliError(f"cannot connect to Postgres ({reason})") from None


def _plot_check(path: str) -> None:
    low = path.lower()
    if not low.endswith((".png", ".html")):
        raise CliError(f"--plot {path}: the file must end in .png or .html")
    if low.endswith(".png"):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise CliError(
                f"--plot {path}: PNG plots need matplotlib: pip install 'warpgraph[bench]' "
                "(or write .html, which needs nothing)"
            ) from None


def validate(args: Any) -> tuple[Options, str | None]:
    """Every check that can fail before running: a CliError (exit 2) names what is wrong."""
    if args.size is not None and args.size < 1:
        raise CliError(f"--size must be at least 1, not {args.size}")
    if args.repeat is not None and args.repeat < 1:
        raise CliError(f"--repeat must be at least 1, not {args.repeat}")
    dsn = args.dsn
    if args.saver == "postgres":
        dsn = dsn or os.environ.get(PG_DSN_ENV)
        if not dsn:
            raise CliError(f"--saver postgres needs --dsn DSN or ${PG_DSN_ENV}")
    elif args.dsn:
        raise CliError(f"--dsn is for --saver postgres, not --saver {args.saver}")
    if args.floor and args.saver == "memory":
        raise CliError("--floor needs a database: --saver sqlite or --saver postgres")
    for path in (args.json, args.plot):
        if path:
            check_writable(path)
    if args.plot:
        _plot_check(args.plot)
    pg_version = _postgres_version(dsn) if args.saver == "postgres" else None
    opts = Options(
        saver=args.saver,
        workloads=list(dict.fromkeys(args.workload or WORKLOADS)),
        size=args.size,
        durability=args.durability,
        repeat=args.repeat or (7 if args.full else 3),
        full=args.full,
        compare=args.compare == "langgraph",
        floor=args.floor,
        dsn=dsn,
    )
    return opts, pg_version


class _Schemas:
    """The run's own Postgres schemas (one per side), dropped at the end."""

    def __init__(self, dsn: str) -> None:
        import psycopg

        self.dsn = dsn
        self.base = f"wg_bench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        self.names: list[str] = []
        self._psycopg = psycopg

    def create(self, side: str) -> str:
        name = f"{self.base}_{side[:5]}"
        with self._psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        self.names.append(name)
        return dsn_with_schema(self.dsn, name)

    def drop(self) -> None:
        if not self.names:
            return
        with self._psycopg.connect(self.dsn, autocommit=True) as conn:
            for name in self.names:
                conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        self.names = []


def start_worker(opts: Options) -> Any:
    """LangGraph's worker process, started (and its imports checked) before anything runs."""
    from warpgraph._cli.bench.sides import LangGraphMissing, WorkerSide

    try:
        return WorkerSide(opts.saver, opts.durability)
    except LangGraphMissing as exc:
        raise CliError(str(exc)) from None


def execute(
    opts: Options, machine: dict[str, Any], argv: list[str], quiet: bool, worker: Any
) -> dict:
    from warpgraph._cli.bench.schema import build_report
    from warpgraph._cli.bench.sides import FloorSide, LocalSide
    from warpgraph._cli.report import progress

    workdir = tempfile.mkdtemp(prefix="warpgraph-bench-")
    schemas = _Schemas(opts.dsn) if opts.saver == "postgres" else None
    floor = None
    results: list[dict] = []
    storage: list[dict] = []
    try:

        def dsn_for(side: str) -> str | None:
            return schemas.create(side) if schemas is not None else None

        wg = LocalSide("warpgraph", opts.saver, opts.durability, workdir, dsn_for("warpgraph"))
        sides: list[Any] = [wg]
        if worker is not None:
            worker.place(workdir, dsn_for("langgraph"))
            sides.append(worker)
        if opts.floor:
            floor = FloorSide(opts.saver, workdir, dsn_for("floor"))
        with progress(not quiet) as task:
            for name in opts.workloads:
                size = opts.size_of(name)
                turns = opts.repeat * (len(sides) + (1 if floor else 0))
                tick = task(f"{name} ({size})", turns)
                collected = run_workload(name, size, sides, floor, opts.repeat, tick)
                results += result_rows(name, size, WORKLOADS[name].unit, collected)
                if collected["series"]:
                    storage.append(
                        {"workload": name, "saver": opts.saver, "series": collected["series"]}
                    )
    finally:
        if worker is not None:
            worker.shutdown()
        if floor is not None:
            floor.shutdown()
        if schemas is not None:
            schemas.drop()
        shutil.rmtree(workdir, ignore_errors=True)
    config = {
        "saver": opts.saver,
        "durability": opts.durability,
        "repeat": opts.repeat,
        "full": opts.full,
        "compare": "langgraph" if opts.compare else None,
        "floor": opts.floor,
        "sizes": {name: opts.size_of(name) for name in opts.workloads},
    }
    return build_report(["warpgraph", "bench", *argv], machine, config, results, storage)


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if not (args.plot and args.plot.lower().endswith(".png")) or os.environ.get("MPLCONFIGDIR"):
        return _main(args, argv)
    # matplotlib keeps a font cache in its config dir: give it one inside a temp dir, so
    # the run writes nothing but the files it is given
    with tempfile.TemporaryDirectory(prefix="warpgraph-bench-mpl-") as mpl:
        os.environ["MPLCONFIGDIR"] = mpl
        try:
            return _main(args, argv)
        finally:
            del os.environ["MPLCONFIGDIR"]


def _main(args: Any, argv: list[str]) -> int:
    from warpgraph._cli.bench.machine import header_lines, machine_info
    from warpgraph._cli.report import EXTRA_HINT, bench_rows, have_rich, print_table

    opts, pg_version = validate(args)
    worker = start_worker(opts) if opts.compare else None  # shut down by execute()
    if not have_rich():
        sys.stderr.write(f"warpgraph bench: plain output; {EXTRA_HINT}\n")
    machine = machine_info(pg_version)
    for line in header_lines(machine):
        sys.stdout.write(line + "\n")
    sys.stdout.flush()
    try:
        report = execute(opts, machine, argv, args.quiet, worker)
    except KeyboardInterrupt:
        sys.stderr.write("warpgraph bench: interrupted\n")
        return 130
    except Exception as exc:
        raise CliError(f"the run failed: {type(exc).__name__}: {exc}", code=1) from exc
    c = report["config"]
    turns = f"{c['repeat']} turn{'s' if c['repeat'] != 1 else ''}"
    title = (
        f"{c['saver']}, durability {c['durability']}, {turns}, "
        f"{'full' if c['full'] else 'quick'} suite: median/s ±½ range"
    )
    headers, rows = bench_rows(report["results"], opts.compare, opts.floor)
    print_table(title, headers, rows)
    for entry in report["storage"]:
        for side, points in entry["series"].items():
            if points:
                last = points[-1]
                sys.stdout.write(
                    f"{entry['workload']}: {side} stores {last[1]:,} bytes for {last[0]} "
                    "checkpoints\n"
                )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
        sys.stdout.write(f"wrote {args.json}\n")
    if args.plot:
        from warpgraph._cli.plot import write_plot

        write_plot(report, args.plot)
        sys.stdout.write(f"wrote {args.plot}\n")
    return 0
