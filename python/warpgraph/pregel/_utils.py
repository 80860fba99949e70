"""Finding the graphs a node runs (subgraph detection), and small helpers under LangGraph's
names for them.

A node's runnable is a subgraph itself, a sequence holding one, or a function that reaches
one from outside its own scope: through a closure cell, a global it names, or an
attribute path from either (`holder.graph.invoke`), in its own code or in code nested in it
(inner defs, lambdas, comprehensions). The search reads bytecode, never source, so it works
for functions without a source file too.
"""

from __future__ import annotations

import dis
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import Any

__all__ = (
    "find_subgraph_pregel",
    "get_function_nonlocals",
    "get_new_channel_versions",
    "is_xxh3_128_hexdigest",
)

# exact types that cannot lead to a graph by attribute (subclasses can: not listed)
_DEAD_ENDS = frozenset(
    (int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset)
)
_ATTR_OPS = frozenset(("LOAD_ATTR", "LOAD_METHOD"))


def get_new_channel_versions(previous: dict, current: dict) -> dict:
    """The entries of `current` newer than in `previous` (all of them if it is empty)."""
    if not previous:
        return current
    zero = type(next(iter(current.values()), None))()
    return {k: v for k, v in current.items() if v > previous.get(k, zero)}


def is_xxh3_128_hexdigest(value: str) -> bool:
    """32 lowercase hex digits (an xxh3-128 task id digest)."""
    return len(value) == 32 and all(c in "0123456789abcdef" for c in value)


def _unwrap(func: Any) -> Any:
    func = getattr(func, "__func__", func)
    inner = getattr(func, "__wrapped__", None)
    if callable(inner):
        func = getattr(inner, "__func__", inner)
    return func


def _readable_cells(func: FunctionType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, cell in zip(func.__code__.co_freevars, func.__closure__ or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a cell never filled
            pass
    return out


def _code_objects(code: CodeType) -> list[CodeType]:
    """`code` and every code object nested in it, outermost first."""
    found = [code]
    i = 0
    while i < len(found):
        found.extend(c for c in found[i].co_consts if isinstance(c, CodeType))
        i += 1
    return found


def _reached(code: CodeType, cells: dict[str, Any], names: dict[str, Any]) -> list[Any]:
    """Values of the load chains `global.a.b` / `cell.a.b` in `code` (each link)."""
    out: list[Any] = []
    current: Any = None
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op == "LOAD_GLOBAL":
            current = names.get(ins.argval)
        elif op == "LOAD_DEREF":
            current = cells.get(ins.argval)
        elif op in _ATTR_OPS:
            current = getattr(current, ins.argval, None) if current is not None else None
        else:
            current = None  # any other instruction breaks the chain
            continue
        if current is not None:
            out.append(current)
    return out


def get_function_nonlocals(func: Callable) -> list[Any]:
    """What `func` can reach from outside its scope: every readable closure cell, plus the
    globals and attribute-path values its code (and nested code) loads. May include values
    that are never used at run time; never misses a reached one."""
    func = _unwrap(func)
    if not isinstance(func, FunctionType):
        return []
    code = func.__code__
    cells = _readable_cells(func)
    found: list[Any] = list(cells.values())
    glob = func.__globals__
    names = {n: glob[n] for n in code.co_names if n in glob}
    if all(v is None or type(v) in _DEAD_ENDS for v in (*cells.values(), *names.values())):
        return found
    for nested in _code_objects(code):
        found.extend(_reached(nested, cells, names))
    return found


def _sequence_steps(candidate: Any) -> Any:
    from warpgraph._internal._runnable import RunnableSeq

    if isinstance(candidate, RunnableSeq):
        return candidate.steps
    if type(candidate).__name__ == "RunnableSequence" and hasattr(candidate, "steps"):
        return candidate.steps
    return None


def find_subgraph_pregel(candidate: Any) -> Any:
    """The first graph (a Pregel that keeps checkpoints) `candidate` runs or reaches."""
    from warpgraph._internal._runnable import RunnableCallable
    from warpgraph.pregel.main import Pregel

    queue = [candidate]
    for item in queue:  # grows while walked: a breadth-first search
        if isinstance(item, Pregel):
            if item.checkpointer is not False:
                return item
            continue
        steps = _sequence_steps(item)
        if steps is not None:
            queue.extend(steps)
        elif type(item).__name__ == "RunnableLambda" and hasattr(item, "deps"):
            queue.extend(item.deps)
        elif isinstance(item, RunnableCallable):
            func = item.func if item.func is not None else item.afunc
            if func is not None:
                queue.extend(getattr(v, "__self__", v) for v in get_function_nonlocals(func))
    return None
