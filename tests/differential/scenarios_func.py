"""Scenarios: the functional API (`@entrypoint`, `@task`).

Task calls are PUSH tasks of the entrypoint's step: their ids, paths, pending writes and
stream chunks are compared like any task's; resumed runs must answer calls that finished
before an interrupt from the saved writes (the call counters in the outputs show what ran
again). Sequential calls keep the chunk order deterministic; scenarios with parallel calls
are marked `parallel`.
"""

import asyncio
import operator
from typing import Annotated, Any, TypedDict

from ._build import linear
from .harness import scenario
from .scenarios_core import CP, thread


def _func(lib):
    return lib.module("func")


@scenario()
def func_sequential_tasks(lib):
    """Tasks called one after another, no checkpointer: one step, updates per task."""
    f = _func(lib)

    @f.task
    def double(x: int) -> int:
        return 2 * x

    @f.task()
    def add(x: int, y: int = 1) -> int:
        return x + y

    @f.entrypoint()
    def main(n: int) -> dict:
        a = double(n).result()
        b = add(a, y=10).result()
        return {"a": a, "b": b}

    return main, [3, 5], None


@scenario(parallel=True)
def func_parallel_tasks(lib):
    """Several calls in flight at once, their results gathered in call order."""
    f = _func(lib)

    @f.task
    def square(x: int) -> int:
        return x * x

    @f.entrypoint()
    def main(xs: list) -> list:
        futures = [square(x) for x in xs]
        return [fut.result() for fut in futures]

    return main, [[1, 2, 3, 4]], None


@scenario(aio=(True,), parallel=True)
def func_async_tasks(lib):
    """An async entrypoint awaiting async tasks (gathered) and a sync one."""
    f = _func(lib)

    @f.task
    async def inc(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    @f.task
    def neg(x: int) -> int:
        return -x

    @f.entrypoint()
    async def main(xs: list) -> list:
        got = await asyncio.gather(*(inc(x) for x in xs))
        return [*got, await neg(got[0])]

    return main, [[1, 2, 3]], None


@scenario(durabilities=CP)
def func_previous_and_final(lib):
    """`previous` is what the last run on the thread saved; `final` splits the returned
    value from the saved one."""
    f = _func(lib)

    @f.task
    def total(a: int, b: Any) -> int:
        return a + (b or 0)

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    def main(n: int, *, previous: Any = None) -> Any:
        s = total(n, previous).result()
        return f.entrypoint.final(value={"prev": previous, "sum": s}, save=s)

    return main, [1, 2, 3], thread()


@scenario(durabilities=CP)
def func_interrupt_in_task_resumed(lib):
    """An interrupt inside a task: the task that finished before it is not run again on
    resume; the interrupted task gets the resume value."""
    f = _func(lib)
    runs = {"prep": 0, "ask": 0}

    @f.task
    def prep(x: str) -> str:
        runs["prep"] += 1
        return x.upper()

    @f.task
    def ask(q: str) -> str:
        runs["ask"] += 1
        return lib.interrupt({"question": q})

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    def main(topic: str) -> dict:
        p = prep(topic).result()
        answer = ask(p).result()
        return {"topic": p, "answer": answer, "runs": dict(runs)}

    return main, ["cats", lib.Command(resume="yes")], thread()


@scenario(durabilities=CP)
def func_interrupt_in_entrypoint(lib):
    """Two interrupts in the entrypoint itself after a task: each resume reuses the task's
    saved result and the earlier answers."""
    f = _func(lib)
    runs = {"n": 0}

    @f.task
    def work(x: int) -> int:
        runs["n"] += 1
        return x * 10

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    def main(x: int) -> dict:
        w = work(x).result()
        first = lib.interrupt("first?")
        second = lib.interrupt("second?")
        return {"w": w, "answers": [first, second], "runs": runs["n"]}

    return main, [4, lib.Command(resume="a"), lib.Command(resume="b")], thread()


@scenario()
def func_tasks_calling_tasks(lib):
    """A task calls tasks itself (nested PUSH tasks under the calling task's path)."""
    f = _func(lib)

    @f.task
    def leaf(x: int) -> int:
        return x + 100

    @f.task
    def branch(x: int) -> list:
        return [leaf(x).result(), leaf(x + 1).result()]

    @f.entrypoint()
    def main(x: int) -> list:
        return branch(x).result() + [leaf(0).result()]

    return main, [1], None


@scenario(durabilities=CP)
def func_task_error_then_retry_run(lib):
    """A task fails: the error reaches the entrypoint (and the caller); the next run on
    the thread (input None) runs the step again and the task succeeds."""
    f = _func(lib)
    runs = {"n": 0}

    @f.task
    def flaky(x: int) -> int:
        runs["n"] += 1
        if runs["n"] == 1:
            raise ValueError("first call fails")
        return x + runs["n"]

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    def main(x: int) -> int:
        return flaky(x).result()

    return main, [1, None], thread()


@scenario()
def func_task_retry_policy(lib):
    """`@task(retry_policy=...)`: the call is retried inside the step."""
    f = _func(lib)
    runs = {"n": 0}
    policy = lib.RetryPolicy(initial_interval=0.0, jitter=False, max_attempts=3)

    @f.task(retry_policy=policy)
    def flaky(x: int) -> list:
        runs["n"] += 1
        if runs["n"] % 3:
            raise ValueError("not yet")
        return [x, runs["n"]]

    @f.entrypoint()
    def main(x: int) -> list:
        return flaky(x).result()

    return main, [7], None


class _State(TypedDict, total=False):
    n: int
    items: Annotated[list, operator.add]


@scenario(durabilities=CP)
def func_task_in_state_graph_node(lib):
    """Tasks called from a StateGraph node, with an interrupt in the next node."""
    f = _func(lib)

    @f.task
    def label(x: int) -> str:
        return f"item-{x}"

    def make(s: _State) -> dict:
        return {"items": [label(i).result() for i in range(s["n"])]}

    def review(s: _State) -> dict:
        return {"items": [lib.interrupt("ok?")]}

    g = linear(lib, _State, ("make", make), ("review", review))
    graph = g.compile(checkpointer=lib.InMemorySaver())
    return graph, [{"n": 2}, lib.Command(resume="fine")], thread()


@scenario()
def func_stream_writer_and_config(lib):
    """Custom stream chunks from a task and the entrypoint; injected config."""
    f = _func(lib)

    @f.task
    def emit(x: int) -> int:
        lib.get_stream_writer()({"task": x})
        return x

    @f.entrypoint()
    def main(x: int, config) -> dict:
        lib.get_stream_writer()({"entry": x})
        return {"x": emit(x).result(), "tags": config.get("tags")}

    return main, [1], None


@scenario(durabilities=CP)
def func_named_task_and_falsy_result(lib):
    """`@task(name=...)` renames the task; a falsy result is still a result on resume."""
    f = _func(lib)
    runs = {"n": 0}

    @f.task(name="renamed")
    def zero(x: int) -> int:
        runs["n"] += 1
        return 0

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    def main(x: int) -> dict:
        z = zero(x).result()
        answer = lib.interrupt("go?")
        return {"z": z, "answer": answer, "runs": runs["n"]}

    return main, [1, lib.Command(resume="go")], thread()


@scenario(subgraphs=True)
def func_entrypoint_as_subgraph(lib):
    """An entrypoint invoked from a task of another entrypoint (a nested run)."""
    f = _func(lib)

    @f.task
    def inner_task(x: int) -> int:
        return x * 3

    @f.entrypoint()
    def inner(x: int) -> int:
        return inner_task(x).result() + 1

    @f.task
    def outer_task(x: int) -> int:
        return inner.invoke(x)

    @f.entrypoint()
    def outer(x: int) -> int:
        return outer_task(x).result()

    return outer, [2], None


@scenario(aio=(True,))
def func_async_cancelled_call(lib):
    """Cancelling a call's future cancels its task (saved as an error, so the resumed run
    calls it again and it is cancelled again); the other call's result is reused."""
    f = _func(lib)
    runs = {"calls": 0, "cancels": 0}

    @f.task
    async def mapper(x: int) -> str:
        runs["calls"] += 1
        try:
            await asyncio.sleep(0.3)
        except asyncio.CancelledError:
            runs["cancels"] += 1
            raise
        return str(x) * 2

    @f.entrypoint(checkpointer=lib.InMemorySaver())
    async def main(xs: list) -> dict:
        futures = [mapper(x) for x in xs]
        await asyncio.sleep(0.05)
        futures.pop().cancel()
        mapped = await asyncio.gather(*futures)
        answer = lib.interrupt("question")
        return {"mapped": [m + answer for m in mapped], "runs": dict(runs)}

    return main, [[0, 1], lib.Command(resume="!")], thread()


@scenario()
def func_task_from_runnable_in_entrypoint(lib):
    """A task called by a runnable the entrypoint invoked (the runnable's config is the
    current one when the call is made)."""
    f = _func(lib)
    runnable = lib.module("_internal._runnable")

    @f.task
    def inc(x: int) -> int:
        return x + 1

    helper = runnable.RunnableCallable(lambda x: inc(x).result() * 10, trace=True)

    @f.entrypoint()
    def main(x: int) -> int:
        return helper.invoke(x) + inc(x).result()

    return main, [1], None
