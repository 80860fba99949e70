"""Scenarios: `@task(cache_policy=...)` calls answered from the entrypoint's cache.

A hit is not run (the counter in the output shows which calls ran), its writes are saved
and streamed marked as cached, as node cache hits are. Hits come from earlier runs: whether
a call sees what an earlier call of the same run stored is timing on LangGraph (its cache
writes are made in the background), so no run repeats a key."""

from .harness import scenario
from .scenarios_core import CP, thread


def _cached_entrypoint(lib, *, key_func=None, calls=(0, 1)):
    f = lib.module("func")
    cache = lib.module("cache.memory").InMemoryCache()
    ran: list = []
    policy = lib.module("types").CachePolicy(**({"key_func": key_func} if key_func else {}))

    @f.task(cache_policy=policy)
    def slow_double(x: int) -> int:
        ran.append(x)
        return 2 * x

    @f.entrypoint(checkpointer=lib.InMemorySaver(), cache=cache)
    def main(n: int) -> dict:
        values = [slow_double(n + k).result() for k in calls]
        return {"values": values, "ran": list(ran)}

    return main


@scenario(durabilities=CP)
def func_cached_task_calls(lib):
    """Three runs on one thread calling (n, n + 1): what earlier runs computed is a hit."""
    return _cached_entrypoint(lib), [1, 1, 2], thread()


@scenario(durabilities=CP)
def func_cached_task_calls_custom_key(lib):
    """A key function that ignores the input: the second run's call is a hit (the first
    run's value)."""
    same = _cached_entrypoint(lib, key_func=lambda *a, **k: "same", calls=(0,))
    return same, [1, 5], thread()
