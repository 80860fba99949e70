"""The lazy bridge to langchain-core (an optional dependency, never imported here eagerly).

Two services:

* **Runnable faces.** Classes decorated with `runnable_face` (warpgraph's runnables and
  compiled graphs) become virtual subclasses of langchain-core's `Runnable` the moment
  `langchain_core.runnables.base` is imported (now, or later through a one-shot import
  watcher), and get the `Runnable` methods they do not define themselves (`batch`,
  `with_config`, `__or__`, `astream_events`, ...). Without langchain-core nothing happens.
* **Traced calls.** When a config carries callbacks (only possible with langchain-core),
  `traced_call` / `atraced_call` / `traced_seq` / `atraced_seq` run a step under its own
  chain run, as LangGraph's runnables do. Runs without callbacks never come here.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from collections.abc import Callable
from typing import Any

from warpgraph._internal._after_import import after_import
from warpgraph.config import patch_config, set_config_var

__all__ = (
    "async_manager_for_config",
    "atraced_call",
    "atraced_seq",
    "manager_for_config",
    "runnable_face",
    "traced_call",
    "traced_seq",
)

logger = logging.getLogger("warpgraph")

_BASE_MODULE = "langchain_core.runnables.base"
_SKIP = frozenset(("_abc_impl", "_is_protocol"))


# ---------------------------------------------------------------- Runnable faces


def runnable_face(cls: type) -> type:
    """Class decorator: `cls` acts as a langchain-core Runnable once langchain-core is loaded."""
    after_import(_BASE_MODULE, lambda module: _adopt_module(module, cls))
    return cls


def _adopt_module(module: Any, cls: type) -> None:
    runnable = getattr(module, "Runnable", None)
    if runnable is not None:  # (a langchain-core without Runnable: nothing to adopt)
        _adopt(runnable, cls)


def _adopt(runnable: type, cls: type) -> None:
    """Register `cls` under `Runnable` and lend it the Runnable methods it lacks."""
    runnable.register(cls)
    own = set()
    for klass in cls.__mro__[:-1]:
        own.update(vars(klass))
    for name, value in vars(runnable).items():
        if name in own or name in _SKIP:
            continue
        if name.startswith("__") and name not in ("__or__", "__ror__"):
            continue
        setattr(cls, name, value)


# ---------------------------------------------------------------- callback managers

_OMIT = ("key", "token", "secret", "password", "auth")


def _tracer_metadata(config: dict) -> dict | None:
    """Configurable values shown to tracers (plain scalars, nothing secret-looking)."""
    conf = config.get("configurable")
    if not conf:
        return None
    out = {
        k: v
        for k, v in conf.items()
        if not k.startswith("__")
        and isinstance(v, (str, int, float, bool))
        and not any(s in k.casefold() for s in _OMIT)
    }
    return out or None


def _manager(cls: Any, config: dict, tags: Any) -> Any:
    all_tags = config.get("tags")
    if tags is not None:
        all_tags = [*all_tags, *tags] if all_tags is not None else list(tags)
    callbacks = config.get("callbacks")
    if callbacks and isinstance(callbacks, cls):
        if all_tags:
            callbacks.add_tags(all_tags)
        if metadata := config.get("metadata"):
            callbacks.add_metadata(metadata)
        return callbacks
    return cls.configure(
        inheritable_callbacks=callbacks,
        inheritable_tags=all_tags,
        inheritable_metadata=config.get("metadata"),
        langsmith_inheritable_metadata=_tracer_metadata(config),
    )


def manager_for_config(config: dict, tags: Any = None) -> Any:
    """langchain-core's CallbackManager for `config` (LangGraph's helper of this name)."""
    from langchain_core.callbacks.manager import CallbackManager

    return _manager(CallbackManager, config, tags)


def async_manager_for_config(config: dict, tags: Any = None) -> Any:
    """The AsyncCallbackManager twin of `manager_for_config`."""
    from langchain_core.callbacks.manager import AsyncCallbackManager

    return _manager(AsyncCallbackManager, config, tags)


_AVAILABLE: list[bool] = []


def available() -> bool:
    """Whether langchain-core can be imported (imports its callbacks once, when asked)."""
    if not _AVAILABLE:
        try:
            import langchain_core.callbacks  # noqa: F401
        except ImportError:
            _AVAILABLE.append(False)
        else:
            _AVAILABLE.append(True)
    return _AVAILABLE[0]


def ambient_tracing() -> bool:
    """Whether langchain-core would attach handlers to a run without any in its config
    (LangSmith tracing, debug/verbose globals, a `collect_runs`-style hook). False when
    langchain-core was never imported (then none of these can be on)."""
    ctx = sys.modules.get("langchain_core.tracers.context")
    if ctx is None:
        return False
    try:
        if ctx._tracing_v2_is_enabled():
            return True
        for var, _inheritable, _cls, env in ctx._configure_hooks:
            if var.get() is not None:
                return True
            if env is not None:
                from langchain_core.utils.env import env_var_is_set

                if env_var_is_set(env):
                    return True
        glob = sys.modules.get("langchain_core.globals")
        if glob is not None and (glob.get_debug() or glob.get_verbose()):
            return True
    except Exception:  # noqa: BLE001 - a changed private API: fall back to no tracing
        return False
    return False


# ---------------------------------------------------------------- running in a run's context


def _tracer_run(run_manager: Any) -> Any:
    """The LangSmith run object of `run_manager`'s run, when a LangChainTracer records it."""
    for h in run_manager.handlers:
        if type(h).__name__ == "LangChainTracer":
            return h.run_map.get(str(run_manager.run_id))
    return None


def _enter(config: dict, run: Any) -> None:
    set_config_var(config)
    if run is not None:
        from langsmith.run_helpers import _set_tracing_context

        _set_tracing_context({"parent": run})


def _context_for(config: dict, run_manager: Any) -> contextvars.Context:
    ctx = contextvars.copy_context()
    ctx.run(_enter, config, _tracer_run(run_manager))
    return ctx


def _task_in(coro: Any, ctx: contextvars.Context) -> Any:
    """`coro` as a task running in `ctx`. Python 3.10's `create_task` takes no `context`:
    created inside `ctx`, the task runs in a copy of it (the same variables)."""
    import asyncio

    if sys.version_info >= (3, 11):
        return asyncio.create_task(coro, context=ctx)
    return ctx.run(asyncio.create_task, coro)


def _payload(value: Any, transform: Callable[[Any], Any] | None) -> Any:
    """What a run records of `value` under a TracePolicy processor (never affects the run:
    a processor that fails records the value itself)."""
    if transform is None:
        return value
    try:
        return transform(value)
    except Exception:
        logger.exception("trace input/output processor raised; recording untransformed payload")
        return value


def _streams(handler: Any) -> bool:
    return any(c.__name__ == "_StreamingCallbackHandler" for c in type(handler).__mro__)


def _split(manager: Any) -> tuple[Any, Any]:
    """(the manager without tracers, the manager with only them): tracers record a trace
    policy's payloads; the other handlers (stream handlers among them) the real ones."""
    import copy

    from langchain_core.tracers.base import AsyncBaseTracer, BaseTracer

    real, tracers = copy.copy(manager), copy.copy(manager)
    tracers.handlers = [
        h
        for h in manager.handlers
        if isinstance(h, (BaseTracer, AsyncBaseTracer)) and not _streams(h)
    ]
    real.handlers = [h for h in manager.handlers if h not in tracers.handlers]
    return real, tracers


# ---------------------------------------------------------------- RunnableCallable


def traced_call(rc: Any, input: Any, config: dict, kwargs: dict) -> Any:
    """`RunnableCallable.invoke` under its own chain run."""
    args, kw = rc._call_args(input, config, kwargs)
    manager = manager_for_config(config, rc.tags)
    run = manager.on_chain_start(
        None, input, name=config.get("run_name") or rc.get_name(), run_id=config.pop("run_id", None)
    )
    try:
        child = patch_config(config, callbacks=run.get_child())
        ret = _context_for(child, run).run(rc.func, *args, **kw)
    except BaseException as e:
        run.on_chain_error(e)
        raise
    run.on_chain_end(ret)
    return ret


async def atraced_call(rc: Any, input: Any, config: dict, kwargs: dict) -> Any:
    """`RunnableCallable.ainvoke` under its own chain run."""

    args, kw = rc._call_args(input, config, kwargs)
    manager = async_manager_for_config(config, rc.tags)
    run = await manager.on_chain_start(
        None, input, name=config.get("run_name") or rc.get_name(), run_id=config.pop("run_id", None)
    )
    try:
        child = patch_config(config, callbacks=run.get_child())
        ctx = _context_for(child, run)
        ret = await _task_in(rc.afunc(*args, **kw), ctx)
    except BaseException as e:
        await run.on_chain_error(e)
        raise
    await run.on_chain_end(ret)
    return ret


# ---------------------------------------------------------------- RunnableSeq


def _seq_start_args(seq: Any, input: Any, config: dict) -> tuple:
    payload = _payload(input, seq.trace_inputs)
    policy = seq.trace_policy
    recorded = _payload(payload, policy.process_inputs if policy is not None else None)
    return payload, recorded, config.get("run_name") or seq.get_name(), config.pop("run_id", None)


def _seq_start(seq: Any, input: Any, config: dict) -> Any:
    manager = manager_for_config(config)
    payload, recorded, name, run_id = _seq_start_args(seq, input, config)
    if recorded is payload:
        return manager.on_chain_start(None, payload, name=name, run_id=run_id)
    real, tracers = _split(manager)
    run = real.on_chain_start(None, payload, name=name, run_id=run_id)
    tracers.on_chain_start(None, recorded, name=name, run_id=run.run_id)
    run.handlers = manager.handlers
    return run


async def _aseq_start(seq: Any, input: Any, config: dict) -> Any:
    manager = async_manager_for_config(config)
    payload, recorded, name, run_id = _seq_start_args(seq, input, config)
    if recorded is payload:
        return await manager.on_chain_start(None, payload, name=name, run_id=run_id)
    real, tracers = _split(manager)
    run = await real.on_chain_start(None, payload, name=name, run_id=run_id)
    await tracers.on_chain_start(None, recorded, name=name, run_id=run.run_id)
    run.handlers = manager.handlers
    return run


def _recorded_output(seq: Any, output: Any) -> Any:
    policy = seq.trace_policy
    return _payload(output, policy.process_outputs if policy is not None else None)


def traced_seq(seq: Any, input: Any, config: dict, kwargs: dict) -> Any:
    """`RunnableSeq.invoke` under its own chain run; each step a child (`seq:step:N`), the
    first one run with its config as the current one."""
    run = _seq_start(seq, input, config)
    value = input
    try:
        for i, step in enumerate(seq.steps):
            config = patch_config(config, callbacks=run.get_child(f"seq:step:{i + 1}"))
            # (each step sees its own config as the current one: a langchain-core step
            # merges the current config into its own, and the task's names the node)
            if i == 0:
                value = _context_for(config, run).run(step.invoke, value, config, **kwargs)
            else:
                value = _context_for(config, run).run(step.invoke, value, config)
    except BaseException as e:
        run.on_chain_error(e)
        raise
    recorded = _recorded_output(seq, value)
    if recorded is value:
        run.on_chain_end(value)
    else:
        real, tracers = _split(run)
        tracers.on_chain_end(recorded)
        real.on_chain_end(value)
    return value


async def atraced_seq(seq: Any, input: Any, config: dict, kwargs: dict) -> Any:
    """Async twin of `traced_seq`. Under a stream handler (astream_events / astream_log)
    the steps stream into each other, as LangGraph's async runner streams its tasks: the
    first step's `astream` feeds each next step's `atransform`, and the sequence's output
    passes the handlers' taps."""

    from warpgraph._internal._runnable import _ainvoke

    run = await _aseq_start(seq, input, config)
    value = input
    try:
        taps = [h for h in run.handlers if _streams(h)]
        if taps:
            config = patch_config(config, callbacks=run.get_child("seq:step:1"))
            ctx = _context_for(config, run)
            chunks = _astream(seq.steps[0], input, config, kwargs)
            for i, step in enumerate(seq.steps[1:], 2):
                step_config = patch_config(config, callbacks=run.get_child(f"seq:step:{i}"))
                chunks = _atransform(step, chunks, step_config)
            for h in taps:
                chunks = h.tap_output_aiter(run.run_id, chunks)
            value = await _task_in(_collect(chunks), ctx)
        else:
            for i, step in enumerate(seq.steps):
                config = patch_config(config, callbacks=run.get_child(f"seq:step:{i + 1}"))
                ctx = _context_for(config, run)  # (see traced_seq)
                if i == 0:
                    call = _ainvoke(step, value, config, **kwargs)
                else:
                    call = _ainvoke(step, value, config)
                value = await _task_in(call, ctx)
    except BaseException as e:
        await run.on_chain_error(e)
        raise
    recorded = _recorded_output(seq, value)
    if recorded is value:
        await run.on_chain_end(value)
    else:
        real, tracers = _split(run)
        await tracers.on_chain_end(recorded)
        await real.on_chain_end(value)
    return value


def _add(output: Any, chunk: Any, first: bool) -> Any:
    """The streamed output so far with `chunk` added (`+`; the chunk alone where `+` fails)."""
    if first:
        return chunk
    try:
        return output + chunk
    except TypeError:
        return chunk


async def _collect(chunks: Any) -> Any:
    output, first = None, True
    async for chunk in chunks:
        output, first = _add(output, chunk, first), False
    return output


async def _astream(step: Any, input: Any, config: dict, kwargs: dict) -> Any:
    astream = getattr(step, "astream", None)
    if astream is not None:
        async for chunk in astream(input, config, **kwargs):
            yield chunk
    else:
        from warpgraph._internal._runnable import _ainvoke

        yield await _ainvoke(step, input, config, **kwargs)


async def _atransform(step: Any, chunks: Any, config: dict) -> Any:
    atransform = getattr(step, "atransform", None)
    if atransform is not None:
        async for chunk in atransform(chunks, config):
            yield chunk
    else:  # (warpgraph's writers): the whole input, then one output
        from warpgraph._internal._runnable import _ainvoke

        yield await _ainvoke(step, await _collect(chunks), config)
