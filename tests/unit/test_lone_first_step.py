"""A run's first step (the input's `__start__` task, whose config still carries the
resuming flag) runs as a lone step too, and its nodes see what the general path shows them:
the flag in the first step's config only, in root and nested runs, with or without a saver."""

from __future__ import annotations

import pytest
import warpgraph.pregel._loop as loop_mod
from typing_extensions import TypedDict
from warpgraph._internal._constants import CONF, CONFIG_KEY_RESUMING
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.checkpoint.memory import InMemorySaver
from warpgraph.config import get_config
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel import _lone, _runner

pytestmark = [
    pytest.mark.fast_paths,
    pytest.mark.skipif(not FAST_PATHS, reason="fast paths off"),
]

_ABSENT = "absent"


class S(TypedDict):
    n: int
    seen: list


def _node(tag: str):
    def run(s: S) -> dict:
        flag = get_config()[CONF].get(CONFIG_KEY_RESUMING, _ABSENT)
        return {"n": s["n"] + 1, "seen": [*s["seen"], (tag, flag)]}

    return run


def _chain(saver, names: str, inner=None):
    g = StateGraph(S)
    prev = START
    for name in names:
        g.add_node(name, _node(name))
        g.add_edge(prev, name)
        prev = name
    if inner is not None:
        g.add_node("sub", inner)
        g.add_edge(prev, "sub")
        prev = "sub"
    g.add_edge(prev, END)
    return g.compile(checkpointer=saver)


def _run(monkeypatch, lone: bool, with_saver: bool, nested: bool) -> tuple:
    real_ok = _lone.lone_steps_ok
    monkeypatch.setattr(loop_mod, "lone_steps_ok", real_ok if lone else lambda loop: False)
    ticks = []
    real_tick = _runner.PregelRunner.tick

    def tick(self, tasks, **kw):
        ticks.append([t.name for t in tasks])
        return real_tick(self, tasks, **kw)

    monkeypatch.setattr(_runner.PregelRunner, "tick", tick)
    saver = InMemorySaver() if with_saver else None
    inner = _chain(None, "pq") if nested else None
    graph = _chain(saver, "xyz", inner)
    cfg = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"n": 0, "seen": []}, cfg)
    hist = None
    if saver is not None:
        hist = [
            (t.metadata["step"], t.metadata["source"], t.checkpoint["channel_values"])
            for t in saver.list(cfg)
        ]
    return (out, hist), ticks


@pytest.mark.parametrize("nested", [False, True], ids=["root", "nested"])
@pytest.mark.parametrize("with_saver", [False, True], ids=["no-saver", "memory"])
def test_first_step_runs_lone_and_matches_the_general_path(monkeypatch, with_saver, nested) -> None:
    general, general_ticks = _run(monkeypatch, False, with_saver, nested)
    lone, lone_ticks = _run(monkeypatch, True, with_saver, nested)
    assert general_ticks  # (the general path ran every step through the runner)
    # every step was lone but the root run's subgraph step (not a plain function): the
    # first one (the input's __start__ task) too, and the nested run's (a parent's task)
    assert lone_ticks == ([["sub"]] if nested else [])
    assert lone == general
    out, _ = lone
    # the first step's task (__start__) saw the flag, the nodes after it do not
    assert [flag for _, flag in out["seen"]] == [_ABSENT] * len(out["seen"])
    assert out["n"] == (5 if nested else 3)


def test_first_step_flag_seen_by_the_first_node(monkeypatch) -> None:
    """A graph whose first task is a node (no __start__ writer step before it): that node
    sees `resuming` False, the next one no flag, on both paths."""
    from warpgraph.channels import LastValue
    from warpgraph.pregel import Pregel
    from warpgraph.pregel._read import PregelNode
    from warpgraph.pregel._write import ChannelWrite, ChannelWriteEntry

    def first(x):
        return [x, get_config()[CONF].get(CONFIG_KEY_RESUMING, _ABSENT)]

    def second(x):
        return [*x, get_config()[CONF].get(CONFIG_KEY_RESUMING, _ABSENT)]

    def build():
        from warpgraph._internal._runnable import RunnableCallable

        return Pregel(
            nodes={
                "one": PregelNode(
                    triggers=["inp"],
                    channels="inp",
                    bound=RunnableCallable(first),
                    writers=[ChannelWrite([ChannelWriteEntry("mid")])],
                ),
                "two": PregelNode(
                    triggers=["mid"],
                    channels="mid",
                    bound=RunnableCallable(second),
                    writers=[ChannelWrite([ChannelWriteEntry("out")])],
                ),
            },
            channels={"inp": LastValue(int), "mid": LastValue(list), "out": LastValue(list)},
            input_channels="inp",
            output_channels="out",
        )

    outs = []
    for lone in (False, True):
        real_ok = _lone.lone_steps_ok
        monkeypatch.setattr(loop_mod, "lone_steps_ok", real_ok if lone else lambda loop: False)
        outs.append(build().invoke(1))
    assert outs[0] == outs[1] == [1, False, _ABSENT]
