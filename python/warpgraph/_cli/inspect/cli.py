"""`warpgraph threads | history | show | diff`: argument handling and printing."""

from __future__ import annotations

import json
import sys
from typing import Any

from warpgraph._cli.args import Parser
from warpgraph._cli.inspect import values as v
from warpgraph._cli.inspect import views
from warpgraph._cli.inspect.source import open_target
from warpgraph._cli.report import print_table

DB_HELP = "a SQLite file or a Postgres DSN (postgresql://...), opened read-only"


def parser(command: str) -> Parser:
    p = Parser(prog=f"warpgraph {command}")
    p.add_argument("db", metavar="DB", help=DB_HELP)
    if command != "threads":
        p.add_argument("thread", metavar="THREAD", help="thread id")
        p.add_argument("--ns", default="", help="checkpoint namespace (default: the root, '')")
        p.add_argument(
            "--layout", choices=["warpgraph", "langgraph"], help="which saver's tables to read"
        )
    if command == "history":
        p.add_argument("--limit", type=int, help="only the newest N checkpoints")
    if command == "show":
        p.add_argument("checkpoint", metavar="CHECKPOINT", nargs="?", help="id or prefix")
    if command == "diff":
        p.add_argument("a", metavar="A", help="checkpoint id or prefix")
        p.add_argument("b", metavar="B", help="checkpoint id or prefix")
    if command in ("show", "diff"):
        p.add_argument("--all", action="store_true", help="include internal channels")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _dump(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _print_threads(rows: list[dict]) -> None:
    table = [
        [
            r["thread_id"],
            r["layout"],
            str(r["checkpoints"]),
            "—" if r["last_step"] is None else str(r["last_step"]),
            r["last_update"] or ("unreadable" if "error" in r else "—"),
            f"{r['bytes']:,}",
            str(len(r["namespaces"])),
        ]
        for r in rows
    ]
    print_table(
        f"{len(rows)} thread(s)",
        ["thread", "layout", "checkpoints", "last step", "last update", "bytes", "subgraph ns"],
        table,
    )
    for r in rows:
        if "error" in r:
            sys.stdout.write(f"thread {r['thread_id']}: {r['error']}\n")


def _print_history(rows: list[dict]) -> None:
    table = [
        [
            r["checkpoint_id"],
            "—" if r["step"] is None else str(r["step"]),
            r["source"] or ("UNREADABLE" if "error" in r else "—"),
            ", ".join(r["next"] or []) if r["next"] is not None else "—",
            str(r["writes"]),
            f"{r['bytes']:,}",
        ]
        for r in rows
    ]
    print_table(
        f"{len(rows)} checkpoint(s), newest first",
        ["checkpoint", "step", "source", "next", "writes", "bytes"],
        table,
    )
    for r in rows:
        if "error" in r:
            sys.stdout.write(f"checkpoint {r['checkpoint_id']}: {r['error']}\n")


def _print_show(data: dict) -> None:
    out = sys.stdout
    out.write(f"checkpoint {data['checkpoint_id']} ({data['layout']} layout)\n")
    meta = data["metadata"]
    out.write(
        f"step {meta.get('step')}, source {meta.get('source')}, ts {data['ts']}, "
        f"parent {data['parent_checkpoint_id']}\n"
    )
    out.write(f"next: {', '.join(data['next']) or '(nothing)'}\n")
    out.write("values:\n")
    for k, val in data["values"].items():
        out.write(f"  {k} = {v.short(val, 100)}\n")
    out.write(f"pending writes: {len(data['pending_writes'])}\n")
    for w in data["pending_writes"]:
        out.write(f"  {w['task_id']} {w['channel']} = {v.short(w['value'], 80)}\n")
    out.write(f"interrupts: {len(data['interrupts'])}\n")
    for i in data["interrupts"]:
        out.write(f"  {v.short(i, 100)}\n")


def _print_diff(data: dict) -> None:
    out = sys.stdout
    out.write(f"{data['a']} (step {data['steps'][0]}) -> {data['b']} (step {data['steps'][1]})\n")
    if not data["changes"]:
        out.write("no channel changed\n")
    for c in data["changes"]:
        ch, kind = c["channel"], c["change"]
        if kind == "added":
            out.write(f"+ {ch} = {v.short(c['new'])}\n")
        elif kind == "removed":
            out.write(f"- {ch} (was {v.short(c['old'])})\n")
        elif kind == "appended":
            out.write(f"~ {ch}: appended {len(c['appended'])} item(s): {v.short(c['appended'])}\n")
        elif "keys" in c:
            keys = ", ".join(c["keys"])
            out.write(f"~ {ch}: keys changed: {keys}\n")
        else:
            out.write(f"~ {ch}: {v.short(c['old'], 40)} -> {v.short(c['new'], 40)}\n")


def main(command: str, argv: list[str]) -> int:
    args = parser(command).parse_args(argv)
    if command == "history" and args.limit is not None and args.limit < 1:
        from warpgraph._cli.args import CliError

        raise CliError(f"--limit must be at least 1, not {args.limit}")
    conn, readers = open_target(args.db)
    try:
        if command == "threads":
            data: Any = views.threads(readers)
            printer: Any = _print_threads
        else:
            reader = views.reader_for(readers, args.thread, args.layout)
            if command == "history":
                data, printer = (
                    views.history(reader, args.thread, args.ns, args.limit),
                    _print_history,
                )
            elif command == "show":
                data = views.show(reader, args.thread, args.ns, args.checkpoint, args.all)
                printer = _print_show
            else:
                data = views.diff(reader, args.thread, args.ns, args.a, args.b, args.all)
                printer = _print_diff
    finally:
        conn.close()
    if args.json:
        _dump(data)
    else:
        printer(data)
    return 0
