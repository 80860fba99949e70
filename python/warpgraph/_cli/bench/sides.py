"""The sides of a comparison: warpgraph in this process, LangGraph in a worker process, and
the raw-driver floor. Each `prepare`s one workload, `run`s it on fresh threads, `close`s."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from typing import Any

from warpgraph._cli.bench.workloads import RunResult


class LocalSide:
    """A library's side run in this process (warpgraph; LangGraph inside the worker)."""

    def __init__(self, lib: str, saver: str, durability: str, workdir: str, dsn: str | None):
        self.name, self.saver, self.durability = lib, saver, durability
        self.workdir, self.dsn = workdir, dsn
        self._stack: contextlib.ExitStack | None = None
        self.handle: Any = None
        self._prepared: Any = None

    def prepare(self, workload: str, size: int) -> None:
        from warpgraph._cli.bench.lib import load_lib
        from warpgraph._cli.bench.savers import open_saver
        from warpgraph._cli.bench.workloads import WORKLOADS

        lib = load_lib(self.name)
        workdir = os.path.join(self.workdir, f"{self.name}-{workload}")
        os.makedirs(workdir, exist_ok=True)
        self._stack = contextlib.ExitStack()
        self.handle = self._stack.enter_context(
            open_saver(self.name, self.saver, workdir, self.dsn)
        )
        self._prepared = WORKLOADS[workload].prepare(lib, self.handle, size, self.durability)

    def run(self, thread_id: str) -> RunResult:
        return self._prepared.run(thread_id)

    def close(self) -> None:
        self._prepared = None
        if self._stack is not None:
            self._stack.close()
            self._stack = None


class WorkerError(RuntimeError):
    """The worker process failed (its message says how)."""


class LangGraphMissing(RuntimeError):
    """LangGraph (or its saver package) is not installed where the worker runs."""


class WorkerSide:
    """LangGraph's side, in a worker process of its own (`python -m
    warpgraph._cli.bench.worker`): this process never imports langgraph, so neither
    library's modules, caches or GC pressure weigh on the other's timings."""

    name = "langgraph"

    def __init__(self, saver: str, durability: str) -> None:
        """Start the worker; LangGraphMissing if LangGraph does not import there."""
        self.config: dict[str, Any] = {"saver": saver, "durability": durability}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "warpgraph._cli.bench.worker", saver],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        reply = json.loads(line) if line.strip() else {"ok": False, "missing": None}
        if not reply.get("ok"):
            self.shutdown()
            raise LangGraphMissing(
                reply.get("missing") or f"the LangGraph worker did not start ({self.proc.wait()})"
            )

    def place(self, workdir: str, dsn: str | None) -> None:
        """Where the runs store: the run's temp dir, the side's own Postgres schema."""
        self.config.update(workdir=workdir, dsn=dsn)

    def _call(self, **msg: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(msg) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerError("the LangGraph worker process exited") from None
        line = self.proc.stdout.readline()
        if not line:
            raise WorkerError(f"the LangGraph worker process exited ({self.proc.wait()})")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise WorkerError(f"LangGraph worker: {reply.get('error')}")
        return reply

    def prepare(self, workload: str, size: int) -> None:
        self._call(op="prepare", workload=workload, size=size, **self.config)

    def run(self, thread_id: str) -> RunResult:
        reply = self._call(op="run", thread=thread_id)
        metrics = {k: (int(u), float(s)) for k, (u, s) in reply["metrics"].items()}
        series = reply.get("series")
        return RunResult(metrics, [tuple(p) for p in series] if series else None)

    def close(self) -> None:
        if self.proc.poll() is None:  # a dead worker has nothing to close
            self._call(op="close")

    def shutdown(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class FloorSide:
    """The raw driver rewriting the payloads of warpgraph's warm-up run (see floor.py)."""

    name = "floor"

    def __init__(self, saver: str, workdir: str, dsn: str | None):
        from warpgraph._cli.bench.floor import PgFloor, SqliteFloor

        self.floor = SqliteFloor(workdir) if saver == "sqlite" else PgFloor(dsn)  # type: ignore[arg-type]
        self.workload = ""
        self.size = 0
        self.checkpoints = 0
        self.payloads: list[bytes] = []

    def load(self, workload: str, size: int, checkpoints: int, payloads: list[bytes]) -> None:
        self.workload, self.size = workload, size
        self.checkpoints, self.payloads = checkpoints, payloads

    def run(self, thread_id: str) -> RunResult:
        from warpgraph._cli.bench.floor import floor_metrics

        return RunResult(
            floor_metrics(self.floor, self.workload, self.size, self.checkpoints, self.payloads)
        )

    def close(self) -> None:
        pass

    def shutdown(self) -> None:
        self.floor.close()
