"""The type parameters of graphs and nodes (what `warpgraph.typing` exports).

`Pregel`, `StateGraph` and `CompiledStateGraph` are generic in them, so annotations such as
`Pregel[Any]` or `CompiledStateGraph[State, Context, Input, Output]` (which libraries built on
LangGraph evaluate at import) work; the defaults let one argument stand for all four.
"""

from __future__ import annotations

from typing import Any

from warpgraph._internal._compat import TypeVar  # PEP 696 defaults
from warpgraph._internal._typing import StateLike

# the graph's state, and its variances for callables taking or returning it
StateT = TypeVar("StateT", bound=StateLike)
StateT_co = TypeVar("StateT_co", bound=StateLike, covariant=True)
StateT_contra = TypeVar("StateT_contra", bound=StateLike, contravariant=True)
# the run's `context=` (Runtime.context); none unless a context_schema is given
ContextT = TypeVar("ContextT", bound=Any, default=None)
ContextT_contra = TypeVar("ContextT_contra", bound=Any, contravariant=True, default=None)
# what invoke takes and returns: the state unless input / output schemas are given
InputT = TypeVar("InputT", bound=StateLike, default=StateT)
OutputT = TypeVar("OutputT", bound=StateLike, default=StateT)
# what one node receives
NodeInputT = TypeVar("NodeInputT", bound=StateLike)
NodeInputT_contra = TypeVar("NodeInputT_contra", bound=StateLike, contravariant=True)
