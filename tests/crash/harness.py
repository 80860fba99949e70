"""Crash harness: a multi-step graph run in child processes that are SIGKILLed at random
points, each thread resumed in a new process (`invoke(None, config)`) until it finishes.

The graph (`build`): a chain (a -> b), a fan-out to three parallel nodes joined again, a
conditional loop, a node calling a two-node subgraph (checkpointed in its own
namespace), and a node with a retry policy whose first attempt in each process fails.
Every node body appends a unique token to the state ("log") and a line to a side-effect
file (written with O_APPEND and fsynced before the body goes on), so the parent knows
every body run, even of a process it killed.

After each kill the parent reads what the saver holds durably (`durable_tokens`: the
tokens in the newest checkpoint of each namespace of the thread and in its pending
writes); a token the killed process started that is not durable was *in flight* at the
kill (its task had not committed). The checks (`check_thread`):
* the final state equals an uninterrupted run's;
* the root history is one linear chain (each checkpoint's parent is the next older one);
* a body runs again only if it was in flight at a kill, at most once per such kill
  (re-executions counted from the side-effect file);
* durability="sync": the work in flight at a kill belongs to the super-step after a
  durable head (a token's position is the log length its step started from: the length
  of the head of the root namespace or of the subgraph's), i.e. a kill loses at most the
  one step that was running. durability="async" may lose the last steps' checkpoints and
  writes (still queued for the writer at the kill): the bound is then the tasks whose
  writes were not committed, whichever step they belong to - never a task whose writes
  were committed, never a lost or doubled token in the final state.

Children come from a multiprocessing "forkserver" that has imported warpgraph already
(a start costs a fork, not an interpreter start). Seed: WARPGRAPH_CRASH_SEED (printed);
kills per saver: WARPGRAPH_CRASH_KILLS (default 50, split between the two durabilities).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import operator
import os
import random
import sys
import time
import types
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Annotated, Any

import warpgraph.checkpoint.postgres
import warpgraph.checkpoint.postgres.aio
import warpgraph.checkpoint.sqlite
import warpgraph.checkpoint.sqlite.aio
import warpgraph.graph
import warpgraph.types
from typing_extensions import TypedDict

# (imported here: the forkserver imports this module once, so children only fork)
_PRELOADED = (warpgraph.checkpoint, warpgraph.graph, warpgraph.types)

LOOPS = 4  # iterations of the conditional loop
NODE_SLEEP = 0.003  # seconds each body takes (gives the kills places to land)


class State(TypedDict):
    log: Annotated[list, operator.add]


_EFFECTS: list[str] = [""]  # the side-effect file of this process's runs
_ATTEMPTS: Counter = Counter()  # retry node attempts per token, in this process


def _effect(token: str, attempt: int = 1) -> None:
    """One body run: a line in the side-effect file, on disk before the body goes on."""
    if not _EFFECTS[0]:
        return
    fd = os.open(_EFFECTS[0], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{token} {os.getpid()} {attempt}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def _node(name: str):
    def body(state: State) -> dict:
        token = f"{name}@{len(state['log'])}"
        _effect(token)
        time.sleep(NODE_SLEEP)
        return {"log": [token]}

    body.__name__ = name
    return body


def _flaky(state: State) -> dict:
    token = f"flaky@{len(state['log'])}"
    _ATTEMPTS[token] += 1
    attempt = _ATTEMPTS[token]
    _effect(token, attempt)
    time.sleep(NODE_SLEEP)
    if attempt == 1:
        raise ConnectionError("first attempt fails (retried)")
    return {"log": [token]}


def _loop_route(state: State) -> str:
    return "loop" if sum(t.startswith("loop@") for t in state["log"]) < LOOPS else "sub"


def build(lib: str = "warpgraph") -> Any:
    """The crash graph (uncompiled), on `lib` ("warpgraph" or "langgraph")."""
    import importlib

    graph_mod = importlib.import_module(f"{lib}.graph")
    types = importlib.import_module(f"{lib}.types")
    StateGraph, START, END = graph_mod.StateGraph, graph_mod.START, graph_mod.END

    inner = StateGraph(State)
    inner.add_node("s1", _node("s1"))
    inner.add_node("s2", _node("s2"))
    inner.add_edge(START, "s1")
    inner.add_edge("s1", "s2")
    subgraph = inner.compile()

    def sub(state: State) -> dict:  # the subgraph's tokens, appended to the parent's log
        out = subgraph.invoke({"log": []})
        return {"log": [f"sub:{t}" for t in out["log"]]}

    g = StateGraph(State)
    for name in ("a", "b", "p1", "p2", "p3", "join", "loop", "tail"):
        g.add_node(name, _node(name))
    g.add_node("sub", sub)
    g.add_node(
        "flaky",
        _flaky,
        retry_policy=types.RetryPolicy(max_attempts=3, jitter=False, initial_interval=0.001),
    )
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    for p in ("p1", "p2", "p3"):
        g.add_edge("b", p)
    g.add_edge(["p1", "p2", "p3"], "join")
    g.add_edge("join", "loop")
    g.add_conditional_edges("loop", _loop_route, ["loop", "sub"])
    g.add_edge("sub", "flaky")
    g.add_edge("flaky", "tail")
    g.add_edge("tail", END)
    return g


INPUT = {"log": ["in"]}


def reference_values() -> dict:
    """The final state of an uninterrupted run (warpgraph, in memory)."""
    from warpgraph.checkpoint.memory import InMemorySaver

    _EFFECTS[0] = ""
    graph = build().compile(checkpointer=InMemorySaver())
    return graph.invoke(INPUT, {"configurable": {"thread_id": "ref"}})


# --- savers -------------------------------------------------------------------------------
def open_saver(kind: str, target: str, is_async: bool = False) -> Any:
    """A context manager giving the saver."""
    if kind == "sqlite":
        if is_async:
            from warpgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            return AsyncSqliteSaver.from_conn_string(target)
        from warpgraph.checkpoint.sqlite import SqliteSaver

        return SqliteSaver.from_conn_string(target)
    if is_async:
        from warpgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        return AsyncPostgresSaver.from_conn_string(target)
    from warpgraph.checkpoint.postgres import PostgresSaver

    return PostgresSaver.from_conn_string(target)


def child_main(
    kind: str, target: str, effects: str, thread: str, durability: str, fresh: bool, driver: str
) -> None:
    """A child process's run: start the thread (`fresh`) or resume it."""
    _EFFECTS[0] = effects
    _ATTEMPTS.clear()
    config = {"configurable": {"thread_id": thread}}
    graph_input = INPUT if fresh else None
    if driver == "async":

        async def main() -> None:
            async with open_saver(kind, target, True) as saver:
                graph = build().compile(checkpointer=saver)
                await graph.ainvoke(graph_input, config, durability=durability)

        asyncio.run(main())
    else:
        with open_saver(kind, target) as saver:
            graph = build().compile(checkpointer=saver)
            graph.invoke(graph_input, config, durability=durability)


# --- the parent -----------------------------------------------------------------------------
def durable_tokens(saver: Any, thread: str) -> tuple[set[str], dict[str, int]]:
    """(tokens the saver holds for `thread`: in the newest checkpoint of each namespace or
    its pending writes; {namespace: log length of its newest checkpoint})."""
    heads: dict[str, Any] = {}
    for t in saver.list({"configurable": {"thread_id": thread}}):
        ns = t.config["configurable"].get("checkpoint_ns", "")
        if ns not in heads:  # newest first
            heads[ns] = t
    tokens: set[str] = set()
    lengths: dict[str, int] = {}
    for ns, t in heads.items():
        log = t.checkpoint["channel_values"].get("log") or []
        lengths[ns] = len(log)
        tokens.update(_tokens(log))
        for _, channel, value in t.pending_writes:
            if channel == "log":
                tokens.update(_tokens(value))
    return tokens, lengths


def _tokens(log: Any) -> list[str]:
    # the subgraph's tokens reach the parent's log as "sub:<token>"
    return [t.removeprefix("sub:") for t in log if isinstance(t, str) and "@" in t]


def read_effects(path: str) -> list[tuple[str, int, int]]:
    """(token, pid, attempt) of every body run, in order."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(tok, int(pid), int(att)) for tok, pid, att in (ln.split() for ln in f)]


@dataclass
class Kill:
    pid: int
    in_flight: set[str]
    head_lengths: dict[str, int]


@dataclass
class Report:
    kills: int = 0
    threads: int = 0
    processes: int = 0
    reexecuted: int = 0  # body runs beyond the first (retry attempts not counted)
    in_flight: int = 0  # tokens in flight at kills, summed
    lost_steps: int = 0  # async: in-flight tokens of a later step than the head's next one
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.kills} kills over {self.threads} threads ({self.processes} processes): "
            f"{self.reexecuted} bodies ran again, {self.in_flight} were in flight at the "
            f"kills (bound), {self.lost_steps} of them beyond the step after the head"
        )


class Harness:
    def __init__(self, kind: str, target: str, workdir: str, durability: str, seed: int) -> None:
        self.kind, self.target, self.durability = kind, target, durability
        self.workdir = workdir
        self.rng = random.Random(seed)
        self.ctx = multiprocessing.get_context("forkserver")
        self.ctx.set_forkserver_preload(["tests.crash.harness"])
        self.expected = reference_values()
        self.report = Report()
        self.run_time = 0.3  # seconds an uninterrupted child takes (measured by `calibrate`)

    def spawn(self, thread: str, fresh: bool) -> Any:
        driver = "async" if self.rng.random() < 0.3 else "sync"
        proc = self.ctx.Process(
            target=child_main,
            args=(
                self.kind,
                self.target,
                self.effects(thread),
                thread,
                self.durability,
                fresh,
                driver,
            ),
        )
        main = sys.modules["__main__"]
        # children must not import the parent's main module (pytest's, or a script): the
        # forkserver hands them a bare one
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            sys.modules["__main__"] = main
        self.report.processes += 1
        return proc

    def effects(self, thread: str) -> str:
        return os.path.join(self.workdir, f"{thread}.effects")

    def calibrate(self, saver: Any) -> None:
        """One uninterrupted thread: how long a child takes (the kills' time scale)."""
        for i in range(2):  # (the first one also starts the forkserver)
            thread = f"calibrate{i}-{self.durability}"
            start = time.monotonic()
            proc = self.spawn(thread, True)
            proc.join(120)
            assert proc.exitcode == 0, f"child failed: exit code {proc.exitcode}"
            self.run_time = time.monotonic() - start
            values = saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint
            assert values["channel_values"]["log"] == self.expected["log"]

    def run_thread(self, saver: Any, thread: str, max_kills: int) -> list[Kill]:
        """Run `thread` to its end, killing children at random points (at most
        `max_kills` times); returns the kills."""
        kills: list[Kill] = []
        for _ in range(max_kills + 50):
            config = {"configurable": {"thread_id": thread}}
            fresh = saver.get_tuple(config) is None
            proc = self.spawn(thread, fresh)
            if len(kills) < max_kills:
                proc.join(self.rng.uniform(0.0, self.run_time))
            if proc.exitcode is None and len(kills) < max_kills:
                proc.kill()  # SIGKILL
                proc.join(60)
                tokens, lengths = durable_tokens(saver, thread)
                started = {t for t, pid, _ in read_effects(self.effects(thread)) if pid == proc.pid}
                kills.append(Kill(proc.pid, started - tokens, lengths))
                continue
            proc.join(120)
            if proc.exitcode == 0:
                return kills
            if proc.exitcode is None:
                proc.kill()
            raise AssertionError(f"child of {thread} failed: exit code {proc.exitcode}")
        raise AssertionError(f"{thread} did not finish")

    def check_thread(self, saver: Any, graph: Any, thread: str, kills: list[Kill]) -> None:
        r = self.report
        config = {"configurable": {"thread_id": thread}}
        state = graph.get_state(config)
        if state.values != self.expected or state.next != ():
            r.problems.append(f"{thread}: final state {state.values} next={state.next}")
        history = list(graph.get_state_history(config))
        for newer, older in pairwise(history):
            if (
                newer.parent_config["configurable"]["checkpoint_id"]
                != (older.config["configurable"]["checkpoint_id"])
            ):
                r.problems.append(f"{thread}: history forks at {newer.config}")
        if history and history[-1].parent_config is not None:
            r.problems.append(f"{thread}: the oldest checkpoint has a parent")
        by_ns: dict[str, list] = {}  # the subgraph's namespace is one chain too
        for t in saver.list(config):
            by_ns.setdefault(t.config["configurable"].get("checkpoint_ns", ""), []).append(t)
        for ns, chain in by_ns.items():
            for newer, older in pairwise(chain):
                if (newer.parent_config or {}).get("configurable", {}).get(
                    "checkpoint_id"
                ) != older.checkpoint["id"]:
                    r.problems.append(f"{thread}: namespace {ns!r} forks at {newer.config}")
        runs = Counter(t for t, _, attempt in read_effects(self.effects(thread)) if attempt == 1)
        allowed = Counter()
        for k in kills:
            allowed.update(k.in_flight)
            r.in_flight += len(k.in_flight)
            for token in k.in_flight:
                pos = int(token.rsplit("@", 1)[1])
                if pos not in set(k.head_lengths.values()) | {0}:
                    if self.durability == "sync":
                        r.problems.append(
                            f"{thread}: {token} in flight at a kill, not in the step after "
                            f"a durable head {k.head_lengths}"
                        )
                    else:
                        r.lost_steps += 1
        for token, n in runs.items():
            if n > 1 + allowed[token]:
                r.problems.append(
                    f"{thread}: {token} ran {n} times, in flight at {allowed[token]} kills"
                )
            r.reexecuted += n - 1
        missing = {t for t in _tokens(self.expected["log"])} - set(runs)
        if missing:
            r.problems.append(f"{thread}: never ran {sorted(missing)}")
        r.kills += len(kills)
        r.threads += 1

    def run(self, kills: int) -> Report:
        from warpgraph.checkpoint.memory import InMemorySaver  # noqa: F401 (preloaded)

        with open_saver(self.kind, self.target) as saver:
            if self.kind == "postgres":
                saver.setup()
            self.calibrate(saver)
            graph = build().compile(checkpointer=saver)
            n = 0
            while self.report.kills < kills:
                thread = f"t{n}-{self.durability}"
                n += 1
                got = self.run_thread(saver, thread, min(6, kills - self.report.kills))
                self.check_thread(saver, graph, thread, got)
        return self.report
