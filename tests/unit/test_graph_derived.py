"""The graph-level caches the runs derive from a compiled graph (`pregel/_derived.py`) follow
`Pregel.validate()`: a graph that ran, then had a channel replaced and was validated, runs
exactly like the same graph validated before it ever ran."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import TypedDict
from warpgraph._internal._flags import FAST_PATHS
from warpgraph.channels.ephemeral_value import EphemeralValue
from warpgraph.channels.last_value import LastValueAfterFinish
from warpgraph.channels.topic import Topic
from warpgraph.graph import END, START, StateGraph
from warpgraph.pregel._derived import derived


class _S(TypedDict):
    x: Any
    y: Any


def _compiled() -> Any:
    g = StateGraph(_S)
    g.add_node("a", lambda s: {"x": 1, "y": 1})
    g.add_node("b", lambda s: None)  # a step writing no output channel
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile()


CHANNELS = {
    # what `x` becomes: each changes without a values chunk (cleared by a step, or made
    # available by finishing), so its latest values may not be read lazily
    "ephemeral": (lambda: EphemeralValue(Any), {"x": 1, "y": 1}),
    "after_finish": (lambda: LastValueAfterFinish(Any), {"y": 1}),
    "topic": (lambda: Topic(Any), {"x": [1], "y": 1}),
}


@pytest.mark.parametrize("kind", list(CHANNELS))
def test_validate_after_changing_a_channel_refreshes_the_run_caches(kind: str) -> None:
    make, expected = CHANNELS[kind]
    warm = _compiled()
    assert warm.invoke({"x": 0, "y": 0}) == {"x": 1, "y": 1}  # x a LastValue: lazy values
    before = derived(warm)
    cold = _compiled()
    for graph in (warm, cold):
        graph.channels["x"] = make()
        graph.channels["x"].key = "x"
        graph.validate()
    assert warm.invoke({"x": 0, "y": 0}) == expected
    assert cold.invoke({"x": 0, "y": 0}) == expected
    assert derived(warm) is not before


def test_validate_after_changing_a_node_refreshes_the_plans() -> None:
    graph = _compiled()
    assert graph.invoke({"x": 0, "y": 0}) == {"x": 1, "y": 1}
    fresh = StateGraph(_S)
    fresh.add_node("a", lambda s: {"x": 2, "y": 3})
    fresh.add_node("b", lambda s: None)
    fresh.add_edge(START, "a")
    fresh.add_edge("a", "b")
    fresh.add_edge("b", END)
    graph.nodes["a"] = fresh.compile().nodes["a"]
    graph.validate()
    assert graph.invoke({"x": 0, "y": 0}) == {"x": 2, "y": 3}


def test_derived_is_kept_while_the_graph_is_unchanged() -> None:
    graph = _compiled()
    graph.invoke({"x": 0, "y": 0})
    first = derived(graph)
    graph.invoke({"x": 0, "y": 0})
    assert derived(graph) is first
    assert first.lazy_plans is not None
    assert (first.lone_plans is not None) is FAST_PATHS  # (made by the lone steps)


def test_the_spec_is_published_after_the_caches_that_go_with_it(monkeypatch) -> None:
    """Parallel tasks calling one subgraph read its spec from several threads: a thread that
    finds the spec must find its caches (`_managed_reads`, ...) too, so the spec is set last."""
    from typing import TypedDict

    from warpgraph.graph import START, StateGraph
    from warpgraph.pregel import _delta

    class S(TypedDict):
        a: int

    g = StateGraph(S)
    g.add_node("x", lambda s: {"a": 1})
    g.add_edge(START, "x")
    app = g.compile()
    app.validate()  # (drops the spec)
    seen: list = []
    real = _delta.delta_specs

    def spy(chans):  # runs while the spec is being built
        seen.append(app._spec_cache)
        return real(chans)

    monkeypatch.setattr(_delta, "delta_specs", spy)
    spec = app._graph_spec
    assert seen == [None]
    assert app._spec_cache is spec
    assert app._managed_reads == {}
