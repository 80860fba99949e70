"""The crash harness's checks catch what they are meant to catch (run in-process on an
InMemorySaver: no kills, then fabricated ones)."""

from __future__ import annotations

import os

from warpgraph.checkpoint.memory import InMemorySaver

from tests.crash import harness
from tests.crash.harness import Harness, Kill, build, durable_tokens, read_effects


def _thread(tmp_path) -> tuple[Harness, InMemorySaver, object]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    h = Harness("sqlite", str(tmp_path / "unused.db"), str(tmp_path), "sync", seed=1)
    saver = InMemorySaver()
    harness._EFFECTS[0] = h.effects("t")
    harness._ATTEMPTS.clear()  # (as in a new process: the reference run used it)
    graph = build().compile(checkpointer=saver)
    graph.invoke(harness.INPUT, {"configurable": {"thread_id": "t"}})
    return h, saver, graph


def test_a_clean_thread_passes_and_every_body_ran_once(tmp_path) -> None:
    h, saver, graph = _thread(tmp_path)
    h.check_thread(saver, graph, "t", [])
    assert h.report.problems == []
    runs = read_effects(h.effects("t"))
    tokens = [t for t, _, attempt in runs if attempt == 1]
    assert len(tokens) == len(set(tokens)) == len(harness._tokens(h.expected["log"]))
    assert [a for t, _, a in runs if t.startswith("flaky@")] == [1, 2]  # the retry ran
    durable, lengths = durable_tokens(saver, "t")
    assert durable == set(tokens) and lengths[""] == len(h.expected["log"])
    assert any(ns.startswith("sub:") for ns in lengths)  # the subgraph's own namespace


def test_a_body_run_again_without_a_kill_is_reported(tmp_path) -> None:
    h, saver, graph = _thread(tmp_path)
    with open(h.effects("t"), "a") as f:
        f.write(f"p2@3 {os.getpid()} 1\n")
    h.check_thread(saver, graph, "t", [])
    assert h.report.problems == ["t: p2@3 ran 2 times, in flight at 0 kills"]
    # in flight at a kill (at the step after a durable head of length 3): allowed
    h2, saver2, graph2 = _thread(tmp_path / "again")
    with open(h2.effects("t"), "a") as f:
        f.write(f"p2@3 {os.getpid()} 1\n")
    h2.check_thread(saver2, graph2, "t", [Kill(1, {"p2@3"}, {"": 3})])
    assert h2.report.problems == [] and h2.report.reexecuted == 1


def test_sync_work_in_flight_beyond_the_next_step_is_reported(tmp_path) -> None:
    h, saver, graph = _thread(tmp_path)
    h.check_thread(saver, graph, "t", [Kill(1, {"join@6"}, {"": 3})])
    assert len(h.report.problems) == 1 and "not in the step after" in h.report.problems[0]


def test_a_wrong_final_state_is_reported(tmp_path) -> None:
    h, saver, graph = _thread(tmp_path)
    h.expected = {"log": ["in", "other"]}
    h.check_thread(saver, graph, "t", [])
    assert any("final state" in p for p in h.report.problems)


def test_the_uninterrupted_run_is_langgraphs() -> None:
    """The reference the crash tests compare with is what LangGraph's engine computes."""
    from langgraph.checkpoint.memory import InMemorySaver as RefMemory

    harness._EFFECTS[0] = ""
    harness._ATTEMPTS.clear()
    graph = build("langgraph").compile(checkpointer=RefMemory())
    want = graph.invoke(harness.INPUT, {"configurable": {"thread_id": "ref"}})
    assert harness.reference_values() == want
    assert len(want["log"]) == 15 and want["log"][-2:] == ["flaky@13", "tail@14"]
