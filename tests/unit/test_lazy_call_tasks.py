"""Task calls whose config is built on first use (pregel/_call_tasks.LazyCallTask).

A plain `@task` function runs without its config being built; what it observes through
get_config() / get_runtime(), the calls it makes itself, and the checkpoint it leaves must
match LangGraph running the same entrypoint (sync and async, with and without a saver).
A finished run leaves no reference cycle through its loop: its tasks and futures are
freed by reference counting.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
from typing import Any

import pytest

from tests._task_view import mask_ids as _norm
from tests._task_view import task_view


def _mods(lib: str) -> tuple[Any, Any, Any, Any]:
    return (
        importlib.import_module(f"{lib}.func"),
        importlib.import_module(f"{lib}.config"),
        importlib.import_module(f"{lib}.runtime"),
        importlib.import_module(f"{lib}.checkpoint.memory"),
    )


def _look(config_mod: Any, runtime_mod: Any, seen: list, where: str) -> None:
    config, runtime = config_mod.get_config(), runtime_mod.get_runtime()
    seen.append(task_view(where, config, runtime, lambda k: not k.startswith("__pregel_")))


def _run(lib: str, is_async: bool, saver: bool) -> tuple:
    func, config_mod, runtime_mod, memory = _mods(lib)
    seen: list = []

    @func.task
    def leaf(x: int) -> int:
        return x * 10

    @func.task
    def looks(x: int) -> int:
        _look(config_mod, runtime_mod, seen, f"looks{x}")
        return leaf(x).result() + 1

    @func.task
    def plain(x: int) -> int:
        return x + 1

    @func.task
    async def alooks(x: int) -> int:
        _look(config_mod, runtime_mod, seen, f"alooks{x}")
        return await leaf_async(x) + 1

    @func.task
    async def leaf_async(x: int) -> int:
        return x * 10

    @func.task
    async def aplain(x: int) -> int:
        return x + 1

    checkpointer = memory.InMemorySaver() if saver else None
    config = {"configurable": {"thread_id": "t"}} if saver else None
    if is_async:

        @func.entrypoint(checkpointer=checkpointer)
        async def main(n: int) -> list:
            return list(await asyncio.gather(aplain(n), alooks(n), aplain(n + 1)))

        out = asyncio.run(main.ainvoke(2, config))
    else:

        @func.entrypoint(checkpointer=checkpointer)
        def main(n: int) -> list:
            futures = [plain(n), looks(n), plain(n + 1)]
            return [f.result() for f in futures]

        out = main.invoke(2, config)
    writes = None
    if saver:
        tup = checkpointer.get_tuple(config)
        writes = sorted((w[0], w[1], w[2]) for w in tup.pending_writes or ())
        history = [c.metadata.get("step") for c in checkpointer.list(config)]
        writes = (history, writes)
    return out, _norm(sorted(seen, key=str)), writes


@pytest.mark.parametrize("saver", [False, True])
@pytest.mark.parametrize("is_async", [False, True])
def test_plain_calls_observe_what_langgraph_calls_observe(is_async: bool, saver: bool) -> None:
    assert _run("warpgraph", is_async, saver) == _run("langgraph", is_async, saver)


def _loops_in_garbage(run: Any) -> int:
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return sum(type(o).__name__ == "PregelLoop" for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def test_a_run_of_task_calls_leaves_no_cycle_through_its_loop() -> None:
    func = importlib.import_module("warpgraph.func")

    @func.task
    def inc(x: int) -> int:
        return x + 1

    @func.task
    async def ainc(x: int) -> int:
        return x + 1

    @func.entrypoint()
    def main(n: int) -> int:
        return sum(f.result() for f in [inc(i) for i in range(n)])

    @func.entrypoint()
    async def amain(n: int) -> int:
        return sum(await asyncio.gather(*(ainc(i) for i in range(n))))

    assert main.invoke(10) == 55  # (warm: first runs build caches)
    assert asyncio.run(amain.ainvoke(10)) == 55
    assert _loops_in_garbage(lambda: main.invoke(10)) == 0
    assert _loops_in_garbage(lambda: asyncio.run(amain.ainvoke(10))) == 0
