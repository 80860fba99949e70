"""RunnableCallable / RunnableSeq / coerce_to_runnable against LangGraph 1.2.24's own.

No `from __future__ import annotations` here: the signatures below must carry real
annotation objects (string annotations are covered by `_string_annotated`).
"""

import asyncio
import threading
import warnings
from typing import Any, Optional

import pytest
from langchain_core.runnables import RunnableConfig as LCConfig
from langgraph._internal import _runnable as lg
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.types import StreamWriter
from warpgraph._internal import _runnable as wg
from warpgraph._internal._constants import CONF, CONFIG_KEY_RUNTIME
from warpgraph.config import RunnableConfig, get_config
from warpgraph.runtime import Runtime


def _f_plain(state):
    return state


def _f_config(state, config):
    return config


def _f_config_lc(state, config: LCConfig):
    return config


def _f_config_opt(state, config: Optional[LCConfig]):  # noqa: UP045
    return config


def _f_config_union(state, config: LCConfig | None):
    return config


def _f_config_dict(state, config: dict):
    return None


def _f_config_kwonly(state, *, config=None):
    return config


def _f_config_posonly(state, config, /):
    return config


def _f_writer(state, *, writer: StreamWriter):
    return writer


def _f_writer_any(state, writer):
    return writer


def _f_writer_wrong(state, writer: int = 0):
    return writer


def _f_store(state, store: BaseStore):
    return store


def _f_store_opt(state, store: Optional[BaseStore]):  # noqa: UP045
    return store


def _f_store_untyped(state, store):
    return store


def _f_runtime(state, runtime: Runtime):
    return runtime


def _f_runtime_any(state, runtime: int):
    return runtime


def _f_previous(state, previous: Any):
    return previous


def _f_kwargs(state, **kwargs):
    return kwargs


def _f_all(state, config, runtime, writer, store, previous):
    return config


def _string_annotated(ann: str):
    """A function whose `config` annotation is the string `ann` (postponed evaluation)."""
    ns: dict[str, Any] = {}
    exec(f"def f(state, config: {ann!r}): return config", ns)  # noqa: S102
    return ns["f"]


SIGNATURES = [
    _f_plain,
    _f_config,
    _f_config_lc,
    _f_config_opt,
    _f_config_union,
    _f_config_dict,
    _f_config_kwonly,
    _f_config_posonly,
    _f_writer,
    _f_writer_any,
    _f_writer_wrong,
    _f_store,
    _f_store_opt,
    _f_store_untyped,
    _f_runtime,
    _f_runtime_any,
    _f_previous,
    _f_kwargs,
    _f_all,
    _string_annotated("RunnableConfig"),
    _string_annotated("Optional[RunnableConfig]"),
    _string_annotated("RunnableConfig | None"),
]


def _accepts(module, func) -> tuple[dict, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc = module.RunnableCallable(func)
    return {k: v[0] for k, v in rc.func_accepts.items()}, [str(w.message) for w in caught]


@pytest.mark.parametrize("func", SIGNATURES, ids=lambda f: f.__name__ + str(f.__annotations__))
def test_injected_parameters_match_langgraph(func):
    ours, our_warnings = _accepts(wg, func)
    theirs, their_warnings = _accepts(lg, func)
    assert ours == theirs
    assert [w.split("not")[0] for w in our_warnings] == [w.split("not")[0] for w in their_warnings]


def test_warpgraph_config_annotation_is_injected():
    def node(state, config: RunnableConfig):
        return config

    def node_opt(state, config: Optional[RunnableConfig]):  # noqa: UP045
        return config

    for f in (node, node_opt):
        config = {CONF: {}}
        assert wg.RunnableCallable(f).invoke(1, config) is config


def _defaults_and_values(module, func, runtime) -> Any:
    config = {CONF: {CONFIG_KEY_RUNTIME: runtime}} if runtime is not None else {CONF: {}}
    try:
        return module.RunnableCallable(func, trace=False).invoke("x", config)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return (type(exc), str(exc))


@pytest.mark.parametrize(
    "func", [_f_store, _f_store_opt, _f_runtime, _f_previous, _f_writer, _f_store_untyped]
)
def test_missing_runtime_behaviour_matches_langgraph(func):
    ours = _defaults_and_values(wg, func, None)
    theirs = _defaults_and_values(lg, func, None)
    if callable(theirs):  # the default writer: a no-op function on both sides
        assert callable(ours) and ours("chunk") is None and theirs("chunk") is None
    else:
        assert ours == theirs


def test_values_come_from_runtime():
    store = InMemoryStore()
    chunks: list[Any] = []
    rt = Runtime(store=store, stream_writer=chunks.append, previous=7, context={"u": 1})

    def node(state, *, runtime, writer, store, previous, config):
        writer(state)
        return runtime, store, previous, config

    config = {CONF: {CONFIG_KEY_RUNTIME: rt}}
    got = wg.RunnableCallable(node).invoke("s", config)
    assert got == (rt, store, 7, config)
    assert chunks == ["s"]


def test_explicit_kwargs_win_over_injection():
    def node(state, writer, extra=0):
        return writer, extra

    rc = wg.RunnableCallable(node, extra=5)
    config = {CONF: {CONFIG_KEY_RUNTIME: Runtime(stream_writer=print)}}
    assert rc.invoke(1, config) == (print, 5)
    assert rc.invoke(1, config, writer="mine") == ("mine", 5)


def test_sync_invoke_of_async_only_raises_like_langgraph():
    async def anode(state):
        return state

    with pytest.raises(TypeError) as ours:
        wg.coerce_to_runnable(anode, name="anode").invoke(1, {CONF: {}})
    with pytest.raises(TypeError) as theirs:
        lg.coerce_to_runnable(anode, name="anode", trace=False).invoke(1, {CONF: {}})
    assert str(ours.value) == str(theirs.value)
    assert wg.coerce_to_runnable(anode).is_async


def test_names_follow_langgraph():
    def named(state):
        return state

    async def anamed(state):
        return state

    cases = [(named, None), (lambda s: s, None), (anamed, None), (named, "given")]
    for func, name in cases:
        ours = wg.coerce_to_runnable(func, name=name)
        theirs = lg.coerce_to_runnable(func, name=name, trace=False)
        assert ours.name == theirs.name


async def test_async_invoke_of_sync_function_runs_in_worker_thread_with_config():
    main = threading.get_ident()

    def node(state):
        return threading.get_ident(), get_config()

    config = {CONF: {"k": 1}}
    tid, seen = await wg.coerce_to_runnable(node).ainvoke(1, config)
    assert tid != main
    assert seen is config


async def test_async_function_gets_config_context():
    async def node(state, config):
        await asyncio.sleep(0)
        return get_config() is config

    assert await wg.coerce_to_runnable(node).ainvoke(1, {CONF: {}})


def test_recurse_invokes_returned_runnable():
    inner = wg.RunnableCallable(lambda s: s * 10)
    outer = wg.RunnableCallable(lambda s: inner)
    assert outer.invoke(3, {CONF: {}}) == 30
    assert wg.RunnableCallable(lambda s: inner, recurse=False).invoke(3, {CONF: {}}) is inner


async def test_recurse_async():
    inner = wg.RunnableCallable(lambda s: s + 1)

    async def outer(state):
        return inner

    assert await wg.coerce_to_runnable(outer).ainvoke(1, {CONF: {}}) == 2


def test_seq_chains_outputs_and_sets_context():
    seen = []

    def first(state):
        seen.append(get_config())
        return state + 1

    config = {CONF: {}}
    seq = wg.RunnableSeq(first, lambda s: s * 2, wg.RunnableCallable(lambda s: s - 1))
    assert seq.invoke(1, config) == 3
    assert seen == [config]
    assert len(wg.RunnableSeq(seq, lambda s: s).steps) == 4  # flattened


async def test_seq_async_mixes_sync_and_async_steps():
    async def first(state):
        return state + 1

    seq = wg.RunnableSeq(first, lambda s: s * 2)
    assert await seq.ainvoke(1, {CONF: {}}) == 4


def test_seq_needs_two_steps_like_langgraph():
    with pytest.raises(ValueError) as ours:
        wg.RunnableSeq(lambda s: s)
    with pytest.raises(ValueError) as theirs:
        lg.RunnableSeq(lambda s: s)
    assert str(ours.value) == str(theirs.value)


def test_coerce_rejects_unsupported_like_langgraph():
    with pytest.raises(TypeError) as ours:
        wg.coerce_to_runnable(42, name=None)
    with pytest.raises(TypeError) as theirs:
        lg.coerce_to_runnable(42, name=None, trace=False)
    assert str(ours.value) == str(theirs.value)


def test_coerce_keeps_objects_with_invoke():
    class Graphish:
        def invoke(self, input, config=None):
            return input

    g = Graphish()
    assert wg.coerce_to_runnable(g) is g


def test_coerce_generator_and_dict_match_langgraph():
    def gen(state):
        yield "a"
        yield "b"

    def gen_mixed(state):
        yield 1
        yield "x"

    for thing in (gen, gen_mixed, {"a": lambda s: s + 1, "b": lambda s: s * 3}):
        arg = 2
        ours = wg.coerce_to_runnable(thing, name=None).invoke(arg, {CONF: {}})
        theirs = lg.coerce_to_runnable(thing, name=None, trace=False).invoke(arg, {CONF: {}})
        assert ours == theirs


def test_get_config_outside_raises_like_langgraph():
    from langgraph import config as lg_config
    from warpgraph import config as wg_config

    for name in ("get_config", "get_store", "get_stream_writer"):
        with pytest.raises(RuntimeError) as ours:
            getattr(wg_config, name)()
        with pytest.raises(RuntimeError) as theirs:
            getattr(lg_config, name)()
        assert str(ours.value) == str(theirs.value)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="At least one of func or afunc"):
        wg.RunnableCallable(None)
    with pytest.raises(TypeError, match="must be callable"):
        wg.RunnableCallable(3)


# ------------------------------------------------------------------- config and runtime


def _plain(config):
    return {k: (dict(v) if k == "metadata" else v) for k, v in config.items()}


MERGE_CASES = [
    (),
    ({"tags": ["a"]}, {"tags": ["b"]}),
    ({"configurable": {"x": 1}}, None, {"configurable": {"y": 2}, "run_name": "r"}),
    ({"metadata": {"a": 1, "lc_versions": {"p": 1}}}, {"metadata": {"lc_versions": {"q": 2}}}),
    ({"recursion_limit": 5}, {"max_concurrency": 3, "callbacks": [1]}, {"callbacks": [2]}),
    ({"tags": [], "configurable": {}}, {"metadata": {}}),
]


@pytest.mark.parametrize("configs", MERGE_CASES)
def test_merge_configs_matches_langgraph(configs):
    from langgraph._internal._config import merge_configs as lg_merge
    from warpgraph.config import merge_configs

    assert _plain(merge_configs(*configs)) == _plain(lg_merge(*configs))


@pytest.mark.parametrize("configs", MERGE_CASES + [({"thread_id": "t", "foo": 1},)])
@pytest.mark.parametrize(
    "ambient",
    [None, {"tags": ["amb"], "configurable": {"thread_id": "p", "k": 1}, "metadata": {}}],
)
def test_ensure_config_matches_langgraph(configs, ambient):
    from langgraph._internal._config import ensure_config as lg_ensure
    from warpgraph.config import ensure_config, reset_config_var, set_config_var

    tokens = set_config_var(ambient) if ambient else None  # also sets langchain's variable
    try:
        ours, theirs = ensure_config(*configs), lg_ensure(*configs)
    finally:
        if tokens:
            reset_config_var(tokens)
    assert _plain(ours) == _plain(theirs)
    assert ours["recursion_limit"] == theirs["recursion_limit"]


def test_runtime_fields_match_langgraph():
    import dataclasses

    from langgraph import runtime as lg_rt
    from warpgraph import runtime as wg_rt

    for name in ("Runtime", "ExecutionInfo", "ServerInfo"):
        ours = [(f.name, f.default) for f in dataclasses.fields(getattr(wg_rt, name))]
        theirs = [(f.name, f.default) for f in dataclasses.fields(getattr(lg_rt, name))]
        assert [n for n, _ in ours] == [n for n, _ in theirs]
        assert [d for _, d in ours if not callable(d)] == [d for _, d in theirs if not callable(d)]


def test_runtime_merge_override_patch():
    from warpgraph.runtime import ExecutionInfo, Runtime

    writer = print
    base = Runtime(context={"a": 1}, store="S", previous=1)
    merged = base.merge(Runtime(stream_writer=writer, previous=None))
    assert (merged.context, merged.store, merged.stream_writer, merged.previous) == (
        {"a": 1},
        "S",
        writer,
        1,
    )
    assert base.override(store=None).store is None and base.store == "S"
    with pytest.raises(RuntimeError, match="Cannot patch execution_info"):
        base.patch_execution_info(node_attempt=2)
    info = ExecutionInfo(checkpoint_id="c", checkpoint_ns="", task_id="t")
    patched = base.override(execution_info=info).patch_execution_info(node_attempt=2)
    assert patched.execution_info.node_attempt == 2 and info.node_attempt == 1


def test_get_runtime_inside_a_node():
    from warpgraph.runtime import Runtime, get_runtime

    rt = Runtime(context="ctx")

    def node(state):
        return get_runtime().context

    assert wg.RunnableCallable(node).invoke(0, {CONF: {CONFIG_KEY_RUNTIME: rt}}) == "ctx"


def test_recast_checkpoint_ns_matches_langgraph():
    from langgraph._internal._config import recast_checkpoint_ns as lg_recast
    from warpgraph.config import recast_checkpoint_ns

    for ns in ("", "a", "a:1", "a:1|b:2", "a:1|3|b:2", "x|y:z:w"):
        assert recast_checkpoint_ns(ns) == lg_recast(ns)


def test_seq_hides_run_name_and_run_id_like_langgraph():
    import uuid

    def node(state, config):
        return sorted(k for k in config if k != "callbacks")

    base = {"run_name": "n", "run_id": uuid.uuid4(), "tags": ["t"], CONF: {}}
    ours = wg.RunnableSeq(wg.coerce_to_runnable(node, trace=False), lambda s: s).invoke(
        0, dict(base)
    )
    theirs = lg.RunnableSeq(
        lg.coerce_to_runnable(node, name=None, trace=False), lambda s: s
    ).invoke(0, dict(base))
    assert ours == theirs == ["configurable", "tags"]
