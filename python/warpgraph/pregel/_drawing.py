"""A drawable graph: nodes and edges of a compiled graph, as JSON, Mermaid or ASCII.

`get_graph()` returns langchain-core's `Graph` when langchain-core is installed (what
LangGraph returns, so tools built on it work unchanged) and this module's `Graph` otherwise;
both give the same `to_json()` and `draw_mermaid()` text. Node data of warpgraph's own
classes are reported under the LangGraph import paths they stand in for (a drop-in
replacement shows the same type ids).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple
from uuid import UUID, uuid4

__all__ = ("CurveStyle", "Edge", "Graph", "Node", "NodeStyles", "to_public", "type_id")


class Edge(NamedTuple):
    source: str
    target: str
    data: Any = None
    conditional: bool = False

    def copy(self, *, source: str | None = None, target: str | None = None) -> Edge:
        return Edge(source or self.source, target or self.target, self.data, self.conditional)


class Node(NamedTuple):
    id: str
    name: str
    data: Any
    metadata: dict[str, Any] | None

    def copy(self, *, id: str | None = None, name: str | None = None) -> Node:
        return Node(id or self.id, name or self.name, self.data, self.metadata)


_CURVES = [
    "basis",
    "bumpX",
    "bumpY",
    "cardinal",
    "catmullRom",
    "linear",
    "monotoneX",
    "monotoneY",
    "natural",
    "step",
    "stepAfter",
    "stepBefore",
]
CurveStyle = Enum(  # type: ignore[misc]
    "CurveStyle", {re.sub(r"(?<!^)(?=[A-Z])", "_", c).upper(): c for c in _CURVES}
)
"""Mermaid edge curves (`CurveStyle.LINEAR`, `CurveStyle.STEP_AFTER`, ...)."""


@dataclass
class NodeStyles:
    """Mermaid class styles of ordinary, first and last nodes."""

    default: str = "fill:#f2f0ff,line-height:1.2"
    first: str = "fill-opacity:0"
    last: str = "fill:#bfb6fc"


# ---------------------------------------------------------------- node data descriptions

# warpgraph modules whose classes LangGraph keeps elsewhere
_LANGGRAPH_HOME = {"warpgraph.graph._compiled": "langgraph.graph.state"}
_PARALLEL_ID = ("langchain", "schema", "runnable", "RunnableParallel")


def _is_uuid(value: str) -> bool:
    try:
        UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def _lc_class(name: str) -> Any:
    module = sys.modules.get("langchain_core.runnables.base")
    return getattr(module, name, None) if module is not None else None


def type_id(data: Any) -> list[str]:
    """The `id` a serialized node shows for `data`: langchain's own id for its serializable
    runnables, LangGraph's import path for warpgraph's classes, else module + name."""
    serializable = _lc_class("RunnableSerializable")
    if serializable is not None and isinstance(data, serializable):
        return list(data.lc_id())
    holder = data if hasattr(data, "__name__") else type(data)
    module = getattr(holder, "__module__", "") or ""
    name = getattr(holder, "__name__", type(data).__name__)
    if module == "warpgraph._internal._runnable" and name == "_RunnableParallel":
        return list(_PARALLEL_ID)
    if module == "warpgraph" or module.startswith("warpgraph."):
        module = _LANGGRAPH_HOME.get(module, "langgraph" + module[len("warpgraph") :])
    return [*module.split("."), name] if module else [name]


def _is_model_class(data: Any) -> bool:
    base = sys.modules.get("pydantic")
    model = getattr(base, "BaseModel", None) if base is not None else None
    return model is not None and isinstance(data, type) and issubclass(data, model)


def _is_runnable(data: Any) -> bool:
    runnable = _lc_class("Runnable")
    if runnable is not None and isinstance(data, runnable):
        return True
    return not isinstance(data, type) and callable(getattr(data, "invoke", None))


def _data_name(id: str, data: Any) -> str:
    """A node's display name: its id, unless the id is a generated uuid."""
    if data is None or not _is_uuid(id):
        return id
    get_name = getattr(data, "get_name", None)
    text = get_name() if callable(get_name) else getattr(data, "__name__", str(data))
    return text.removeprefix("Runnable")


def _node_json(node: Node, with_schemas: bool) -> dict[str, Any]:
    data = node.data
    out: dict[str, Any]
    if data is None:
        out = {}
    elif _is_runnable(data):
        out = {"type": "runnable", "data": {"id": type_id(data), "name": _data_name(node.id, data)}}
    elif _is_model_class(data):
        out = {
            "type": "schema",
            "data": data.model_json_schema() if with_schemas else _data_name(node.id, data),
        }
    else:
        out = {"type": "unknown", "data": _data_name(node.id, data)}
    if node.metadata is not None:
        out["metadata"] = node.metadata
    return out


# ---------------------------------------------------------------- the graph


@dataclass
class Graph:
    """Nodes (by id) and edges of a drawn graph."""

    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def next_id(self) -> str:
        return uuid4().hex

    def add_node(self, data: Any, id: str | None = None, *, metadata: dict | None = None) -> Node:
        if id is not None and id in self.nodes:
            raise ValueError(f"Node with id {id} already exists")
        key = id or self.next_id()
        node = Node(key, _data_name(key, data), data, metadata)
        self.nodes[key] = node
        return node

    def remove_node(self, node: Node) -> None:
        self.nodes.pop(node.id)
        self.edges = [e for e in self.edges if node.id not in (e.source, e.target)]

    def add_edge(
        self, source: Node, target: Node, data: Any = None, conditional: bool = False
    ) -> Edge:
        for end, what in ((source, "Source"), (target, "Target")):
            if end.id not in self.nodes:
                raise ValueError(f"{what} node {end.id} not in graph")
        edge = Edge(source.id, target.id, data, conditional)
        self.edges.append(edge)
        return edge

    def extend(self, graph: Any, *, prefix: str = "") -> tuple[Node | None, Node | None]:
        """Add `graph`'s nodes and edges, their ids under `prefix:` (not connected)."""
        if all(_is_uuid(n.id) for n in graph.nodes.values()):
            prefix = ""

        def under(key: str) -> str:
            return f"{prefix}:{key}" if prefix else key

        for key, node in graph.nodes.items():
            self.nodes[under(key)] = _own_node(node).copy(id=under(key))
        self.edges.extend(
            Edge(under(e.source), under(e.target), e.data, e.conditional) for e in graph.edges
        )
        first, last = _single_end(graph, "target"), _single_end(graph, "source")
        return (
            _own_node(first).copy(id=under(first.id)) if first else None,
            _own_node(last).copy(id=under(last.id)) if last else None,
        )

    def reid(self) -> Graph:
        """A copy whose generated (uuid) ids are replaced by unique readable names."""
        by_name: dict[str, list[str]] = {}
        for node in self.nodes.values():
            by_name.setdefault(node.name, []).append(node.id)
        label = {
            key: name if len(keys) == 1 else f"{name}_{i + 1}"
            for name, keys in by_name.items()
            for i, key in enumerate(keys)
        }

        def new(key: str) -> str:
            return label[key] if _is_uuid(key) else key

        return Graph(
            {new(k): n.copy(id=new(k)) for k, n in self.nodes.items()},
            [e.copy(source=new(e.source), target=new(e.target)) for e in self.edges],
        )

    def first_node(self) -> Node | None:
        """The one node no edge points to (None if there are none or several)."""
        return _single_end(self, "target")

    def last_node(self) -> Node | None:
        """The one node no edge leaves (None if there are none or several)."""
        return _single_end(self, "source")

    def trim_first_node(self) -> None:
        """Drop the first node when it has one outgoing edge and another first node remains."""
        first = self.first_node()
        if (
            first
            and _single_end(self, "target", exclude=(first.id,))
            and len({e for e in self.edges if e.source == first.id}) == 1
        ):
            self.remove_node(first)

    def trim_last_node(self) -> None:
        """Drop the last node when it has one incoming edge and another last node remains."""
        last = self.last_node()
        if (
            last
            and _single_end(self, "source", exclude=(last.id,))
            and len({e for e in self.edges if e.target == last.id}) == 1
        ):
            self.remove_node(last)

    # ------------------------------------------------------------ output
    def to_json(self, *, with_schemas: bool = False) -> dict[str, list[dict[str, Any]]]:
        """`{"nodes": [...], "edges": [...]}` (uuid ids replaced by positions)."""
        ids = {n.id: (i if _is_uuid(n.id) else n.id) for i, n in enumerate(self.nodes.values())}
        edges = []
        for e in self.edges:
            item: dict[str, Any] = {"source": ids[e.source], "target": ids[e.target]}
            if e.data is not None:
                item["data"] = e.data
            if e.conditional:
                item["conditional"] = True
            edges.append(item)
        nodes = [{"id": ids[n.id], **_node_json(n, with_schemas)} for n in self.nodes.values()]
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(
        self,
        *,
        with_styles: bool = True,
        curve_style: CurveStyle = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None,
        wrap_label_n_words: int = 9,
        frontmatter_config: dict[str, Any] | None = None,
    ) -> str:
        """Mermaid flowchart text (subgraphs for `prefix:` ids)."""
        graph = self.reid()
        first, last = graph.first_node(), graph.last_node()
        return _Mermaid(
            graph,
            first.id if first else None,
            last.id if last else None,
            with_styles,
            wrap_label_n_words,
        ).render(curve_style, node_colors or NodeStyles(), frontmatter_config or {})

    def draw_ascii(self) -> str:
        """The graph as boxes and arrows, one layer of nodes per row."""
        return _draw_ascii(self)

    def print_ascii(self) -> None:
        print(self.draw_ascii())

    def draw_png(self, *args: Any, **kwargs: Any) -> Any:
        raise ImportError("Drawing PNG images needs langchain-core (and pygraphviz) installed")

    def draw_mermaid_png(self, *args: Any, **kwargs: Any) -> Any:
        raise ImportError("Rendering Mermaid images needs langchain-core installed")


def _own_node(node: Any) -> Node:
    return node if isinstance(node, Node) else Node(node.id, node.name, node.data, node.metadata)


def _single_end(graph: Any, side: str, exclude: Sequence[str] = ()) -> Any:
    """The one node not at `side` ("target": never pointed to; "source": never left) of any
    edge whose other end is not excluded; None if there are none or several."""
    other = "source" if side == "target" else "target"
    taken = {getattr(e, side) for e in graph.edges if getattr(e, other) not in exclude}
    found = [n for n in graph.nodes.values() if n.id not in exclude and n.id not in taken]
    return found[0] if len(found) == 1 else None


# ---------------------------------------------------------------- mermaid

_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_WRAPPED = tuple("*_`")
_LABEL_ENTITIES = (
    ("#", "#35;"),
    ("[", "#91;"),
    ("]", "#93;"),
    ("(", "#40;"),
    (")", "#41;"),
    ("{", "#123;"),
    ("}", "#125;"),
    ('"', "#quot;"),
    ("<", "#60;"),
    (">", "#62;"),
    ("|", "#124;"),
)


def mermaid_id(label: str) -> str:
    """`label` as a Mermaid id: characters outside [A-Za-z0-9_-] as `\\` + hex code."""
    return "".join(c if c in _SAFE else f"\\{ord(c):x}" for c in label)


def _metadata_text(value: Any) -> str | None:
    scalars = (str, int, float, bool)
    if isinstance(value, scalars):
        return str(value)
    if isinstance(value, (list, tuple, set)) and all(isinstance(v, scalars) for v in value):
        texts = [str(v) for v in value]
        return ", ".join(sorted(texts) if isinstance(value, set) else texts)
    return None


def _metadata_lines(metadata: dict[str, Any]) -> list[str]:
    lines = []
    for key, value in metadata.items():
        text = _metadata_text(value)
        if text is None:
            continue
        line = f"{key} = {text}"
        for char, entity in _LABEL_ENTITIES:
            line = line.replace(char, entity)
        lines.append(line)
    return lines


_YAML_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .,/-]*$")
_YAML_WORDS = frozenset(
    ["y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"]
    + ["Y", "Yes", "N", "No", "True", "False"]
)


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _YAML_PLAIN.match(text) and text.lower() not in _YAML_WORDS and text == text.strip():
        return text
    return "'" + text.replace("'", "''") + "'"


def _yaml(value: dict[str, Any], indent: int = 0) -> str:
    """Block-style YAML of nested dicts / lists of scalars, keys sorted."""
    pad = "  " * indent
    out = ""
    for key in sorted(value):
        item = value[key]
        if isinstance(item, dict) and item:
            out += f"{pad}{key}:\n" + _yaml(item, indent + 1)
        elif isinstance(item, (list, tuple)) and item:
            out += f"{pad}{key}:\n" + "".join(f"{pad}- {_yaml_scalar(v)}\n" for v in item)
        elif isinstance(item, dict):
            out += f"{pad}{key}: {{}}\n"
        elif isinstance(item, (list, tuple)):
            out += f"{pad}{key}: []\n"
        else:
            out += f"{pad}{key}: {_yaml_scalar(item)}\n"
    return out


class _Mermaid:
    def __init__(
        self, graph: Graph, first: str | None, last: str | None, styled: bool, wrap: int
    ) -> None:
        self.styled = styled
        self.wrap = wrap
        self.formats = {"default": "{0}({1})"}
        if first is not None:
            self.formats[first] = "{0}([{1}]):::first"
        if last is not None:
            self.formats[last] = "{0}([{1}]):::last"
        self.top: dict[str, Node] = {}
        self.inner: dict[str, dict[str, Node]] = {}
        for key, node in graph.nodes.items():
            if ":" in key:
                self.inner.setdefault(key.rsplit(":", 1)[0], {})[key] = node
            else:
                self.top[key] = node
        self.groups: dict[str, list[Edge]] = {}
        for e in graph.edges:
            pairs = zip(e.source.split(":"), e.target.split(":"))
            self.groups.setdefault(":".join(s for s, t in pairs if s == t), []).append(e)
        self.seen: set[str] = set()
        self.out: list[str] = []

    def node_line(self, key: str, node: Node) -> str:
        name = node.name.split(":")[-1]
        label = f"<p>{name}</p>" if name.startswith(_WRAPPED) and name.endswith(_WRAPPED) else name
        lines = _metadata_lines(node.metadata or {})
        if lines:
            label += "<hr/><small><em>" + "\n".join(lines) + "</em></small>"
        text = self.formats.get(key, self.formats["default"]).format(mermaid_id(key), label)
        return f"\t{text}\n"

    def edge_line(self, e: Edge) -> str:
        if e.data is None:
            arrow = " -.-> " if e.conditional else " --> "
        else:
            text = str(e.data)
            words = text.split()
            if len(words) > self.wrap:
                text = "&nbsp<br>&nbsp".join(
                    " ".join(words[i : i + self.wrap]) for i in range(0, len(words), self.wrap)
                )
            arrow = (
                f" -. &nbsp;{text}&nbsp; .-> " if e.conditional else f" -- &nbsp;{text}&nbsp; --> "
            )
        return f"\t{mermaid_id(e.source)}{arrow}{mermaid_id(e.target)};\n"

    def group(self, edges: list[Edge], prefix: str) -> None:
        boxed = bool(prefix) and not (len(edges) == 1 and edges[0].source == edges[0].target)
        if boxed:
            name = prefix.rsplit(":", 1)[-1]
            if name in self.seen:
                raise ValueError(
                    f"Found duplicate subgraph '{name}' -- this likely means that "
                    "you're reusing a subgraph node with the same name. "
                    "Please adjust your graph to have subgraph nodes with unique names."
                )
            self.seen.add(name)
            self.out.append(f"\tsubgraph {name}\n")
            if self.styled:
                for key, node in self.inner.get(prefix, {}).items():
                    self.out.append(self.node_line(key, node))
        self.out.extend(self.edge_line(e) for e in edges)
        for nested, nested_edges in self.groups.items():
            if nested == prefix or not nested.startswith(prefix + ":"):
                continue
            if ":" in nested[len(prefix) + 1 :]:
                continue
            self.group(nested_edges, nested)
        if boxed:
            self.out.append("\tend\n")

    def render(self, curve: CurveStyle, styles: NodeStyles, front: dict[str, Any]) -> str:
        if self.styled:
            config = dict(front.get("config", {}))
            config["flowchart"] = {**config.get("flowchart", {}), "curve": curve.value}
            self.out.append("---\n" + _yaml({**front, "config": config}) + "---\n")
        self.out.append("graph TD;\n")
        if self.styled:
            self.out.extend(self.node_line(k, n) for k, n in self.top.items())
        self.group(self.groups.get("", []), "")
        for prefix, edges in self.groups.items():
            if prefix and ":" not in prefix:
                self.group(edges, prefix)
                self.seen.add(prefix)
        if self.styled:
            for prefix, members in self.inner.items():
                if ":" in prefix or prefix in self.seen:
                    continue
                self.out.append(f"\tsubgraph {prefix}\n")
                self.out.extend(self.node_line(k, n) for k, n in members.items())
                self.out.append("\tend\n")
                self.seen.add(prefix)
            for cls, style in vars(styles).items():
                self.out.append(f"\tclassDef {cls} {style}\n")
        return "".join(self.out)


# ---------------------------------------------------------------- ascii


def _layers(graph: Graph) -> list[list[str]]:
    """Nodes by longest path from a source (edges closing a cycle ignored)."""
    order = list(graph.nodes)
    succ: dict[str, list[str]] = {k: [] for k in order}
    for e in graph.edges:
        if e.source in succ and e.target in succ:
            succ[e.source].append(e.target)
    depth: dict[str, int] = {}
    state: dict[str, int] = {}

    def visit(key: str, d: int) -> None:
        if state.get(key) == 1:  # on the current path: a back edge
            return
        if depth.get(key, -1) >= d:
            return
        depth[key] = d
        state[key] = 1
        for nxt in succ[key]:
            visit(nxt, d + 1)
        state[key] = 2

    targets = {e.target for e in graph.edges if e.source != e.target}
    for key in [k for k in order if k not in targets] or order[:1]:
        visit(key, 0)
    for key in order:
        if key not in depth:
            visit(key, 0)
    rows: list[list[str]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for key in order:
        rows[depth[key]].append(key)
    return rows


def _draw_ascii(graph: Graph) -> str:
    """Each layer's nodes as boxes (their names), then the edges leaving them, by node id
    (`-->` plain, `..>` conditional, labels in parentheses)."""
    if not graph.nodes:
        return ""
    lines: list[str] = []
    for row in _layers(graph):
        boxes = [f"| {graph.nodes[k].name} |" for k in row]
        rule = "  ".join("+" + "-" * (len(b) - 2) + "+" for b in boxes)
        lines += [rule, "  ".join(boxes), rule]
        members = set(row)
        for e in graph.edges:
            if e.source in members:
                arrow = "..>" if e.conditional else "-->"
                label = f" ({e.data})" if e.data is not None else ""
                lines.append(f"  {e.source} {arrow} {e.target}{label}")
    return "\n".join(lines)


# ---------------------------------------------------------------- langchain-core's Graph


_STAND_INS: dict[tuple[str, ...], type] = {}


def _stand_in(data: Any) -> Any:
    """A langchain-core Runnable reporting `type_id(data)` for a warpgraph object (it runs
    the object when invoked)."""
    key = tuple(type_id(data))
    cls = _STAND_INS.get(key)
    if cls is None:
        from langchain_core.runnables.base import Runnable

        def __init__(self: Any, wrapped: Any) -> None:
            self.wrapped = wrapped
            self.name = getattr(wrapped, "name", None)

        def invoke(self: Any, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return self.wrapped.invoke(input, config, **kwargs)

        cls = type(
            key[-1],
            (Runnable,),
            {"__module__": ".".join(key[:-1]), "__init__": __init__, "invoke": invoke},
        )
        _STAND_INS[key] = cls
    return cls(data)


def _public_data(data: Any) -> Any:
    """Node data for langchain-core's Graph: warpgraph's objects and other runnables that
    are not langchain-core Runnables (a ToolNode on warpgraph's RunnableCallable) go in
    as stand-ins, so that its `to_json` describes them as runnables of their LangGraph ids."""
    if data is None:
        return None
    module = type(data).__module__ or ""
    if module == "warpgraph" or module.startswith("warpgraph."):
        return _stand_in(data)
    runnable = _lc_class("Runnable")
    if runnable is not None and not isinstance(data, (runnable, type)) and _is_runnable(data):
        return _stand_in(data)
    return data


def _langchain_graph_class() -> Callable[..., Any] | None:
    try:
        from langchain_core.runnables.graph import Graph as LcGraph
    except ImportError:
        return None
    return LcGraph


def to_public(graph: Graph) -> Any:
    """`graph` as what `get_graph()` returns: langchain-core's Graph if installed."""
    lc_graph_cls = _langchain_graph_class()
    if lc_graph_cls is None:
        return graph
    from langchain_core.runnables.graph import Edge as LcEdge
    from langchain_core.runnables.graph import Node as LcNode

    out = lc_graph_cls()
    for key, node in graph.nodes.items():
        out.nodes[key] = LcNode(
            id=key, name=node.name, data=_public_data(node.data), metadata=node.metadata
        )
    out.edges = [LcEdge(e.source, e.target, e.data, e.conditional) for e in graph.edges]
    return out


def from_foreign(graph: Any) -> Graph:
    """Any graph with `nodes` (id -> node) and `edges` as this module's Graph."""
    if isinstance(graph, Graph):
        return graph
    return Graph(
        {k: _own_node(n) for k, n in graph.nodes.items()},
        [Edge(e.source, e.target, e.data, e.conditional) for e in graph.edges],
    )
