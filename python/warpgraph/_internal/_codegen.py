"""The one place warpgraph runs generated code: `define` / `define_like` compile a function
from lines of source built only of identifiers the caller chose (parameter and namespace
names, never a value: every value reaches the function through its namespace `ns`).

Why generate at all: two per-step constructs are half as costly as plain functions
that loop over their inputs, and nothing else in the engine is generated:

* `slot_builder` (task dataclasses, `pregel/_algo.py`): a positional constructor that
  stores each field through its slot (no keyword parsing, no frozen-dataclass
  `object.__setattr__` per field): ~2x cheaper than the dataclass's own __init__;
* `writes_function` (graph-made writers, `pregel/_write.py`): a writer's entries unrolled
  into straight-line code (no per-entry dispatch): ~230 ns against ~450 ns per call for a
  node's writer when interpreted.

`define_like` makes methods with another function's exact signature that forward to it
(no *args/**kwargs: the store's and the SQL savers' sync/async method twins,
`store.base._define` and `checkpoint._sql.api.twin`).
"""

from __future__ import annotations

import dataclasses
import inspect
import types
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ("define", "define_like", "slot_builder", "writes_function")


def define(name: str, params: Sequence[str], body: Sequence[str], ns: dict[str, Any]) -> Any:
    """Compile `def name(*params): body` (lines without indentation) in namespace `ns`."""
    for ident in (name, *params):
        if not ident.isidentifier():
            raise ValueError(f"not an identifier: {ident!r}")
    return _compile("def", name, ", ".join(params), body, ns)


def define_like(
    keyword: str,
    name: str,
    like: Callable,
    body: Callable[[list[str], list[str]], Sequence[str]],
    ns: dict[str, Any],
) -> Any:
    """Compile `<keyword> name(<like's parameters>): body` (keyword "def" or "async def"):
    the same parameters, kinds and defaults (each default bound in `ns` as `_d<i>`).
    `body(positional, forwarded)` gives the lines, from the parameters after the first
    (self) as a call passes them on: all positionally, or as `like` takes them
    (keyword-only ones by keyword)."""
    if keyword not in ("def", "async def"):
        raise ValueError(f"not a function keyword: {keyword!r}")
    params: list[str] = []
    positional: list[str] = []
    forwarded: list[str] = []
    slash_pending = False
    for i, p in enumerate(inspect.signature(like).parameters.values()):
        if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
            raise ValueError(f"{like.__qualname__}: *args / **kwargs are not forwarded")
        if p.kind is p.POSITIONAL_ONLY:
            slash_pending = True
        elif slash_pending:
            params.append("/")
            slash_pending = False
        if p.kind is p.KEYWORD_ONLY and "*" not in params:
            params.append("*")
        text = p.name
        if p.default is not p.empty:
            ns[f"_d{i}"] = p.default
            text += f"=_d{i}"
        params.append(text)
        if i:  # not self
            positional.append(p.name)
            forwarded.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    if slash_pending:
        params.append("/")
    return _compile(keyword, name, ", ".join(params), body(positional, forwarded), ns)


def _compile(keyword: str, name: str, params: str, body: Sequence[str], ns: dict[str, Any]) -> Any:
    text = f"{keyword} {name}({params}):\n" + "".join(f"    {line}\n" for line in body)
    exec(text, ns)  # noqa: S102 - identifiers only (see the module doc)
    return ns[name]


def slot_builder(final: type, fields: tuple[str, ...] | None = None) -> type:
    """A cheap positional constructor of the frozen slotted dataclass `final` (or of a
    subclass of one that adds no slots): calling it with the fields in order (`fields`,
    default: the dataclass fields) gives a `final` equal to what its own constructor
    builds.

    It is a subclass of the class that declares the slots, with the same layout, whose
    __init__ stores the fields through the slot descriptors and then makes the object a
    `final` (CPython allows switching between classes of identical layout)."""
    if fields is None:
        fields = tuple(f.name for f in dataclasses.fields(final))
    base = next(
        (c for c in final.__mro__ if set(fields) <= set(c.__dict__.get("__slots__", ()))), None
    )
    if base is None:  # (not slotted as expected: the real constructor, keyword-free)
        return lambda *args: final(*args)  # type: ignore[return-value]
    body = [f"self.{f} = {f}" for f in fields] + ["self.__class__ = _final"]
    init = define("__init__", ("self", *fields), body, {"_final": final})
    attrs = {
        "__slots__": (),
        "__init__": init,
        "__setattr__": object.__setattr__,  # (the dataclass is frozen)
        "__delattr__": object.__delattr__,
        "__module__": final.__module__,
        "__qualname__": final.__qualname__,
    }
    return type(final.__name__, (base,), attrs)


def writes_function(
    steps: Sequence[tuple[str, dict[str, Any]]], ns: dict[str, Any]
) -> Callable[[Any], list[tuple[str, Any]]]:
    """`run(input) -> out` from a writer's steps: each a template of lines (over `input`
    and `out`, with `{i}` standing for the step's index) and the names it binds (`{i}`
    formatted the same way). `ns` is the namespace the lines' other names resolve in.

    The names a step binds become parameters of `run` with the bound values as defaults,
    so writers of the same shape (every node of a chain) share one code object: a step
    runs code that the previous node's step has just run, rather than a copy of its own
    (in a run interleaved with other work, each copy's bytecode is a cache miss)."""
    body = ["out = []"]
    bound: dict[str, Any] = {}
    for i, (lines, names) in enumerate(steps):
        body += [line.format(i=i) for line in lines.splitlines()]
        bound.update({k.format(i=i): v for k, v in names.items()})
    body.append("return out")
    key = ("\n".join(body), tuple(bound), id(ns))
    shared = _WRITERS.get(key)
    if shared is None:
        shared = define("run", ("input", *bound), body, ns)
        _WRITERS[key] = (shared, ns)  # (keeps `ns` alive while its id is a key)
    else:
        shared = shared[0]
    return types.FunctionType(shared.__code__, ns, "run", tuple(bound.values()))


# (body, bound names, namespace id) -> (template function, namespace)
_WRITERS: dict[tuple, tuple[Callable, dict[str, Any]]] = {}
