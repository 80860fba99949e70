"""Deprecated alias module: the types now live in `warpgraph.types`."""

import warnings

from warpgraph.types import *
from warpgraph.types import __all__  # noqa: F401
from warpgraph.warnings import LangGraphDeprecatedSinceV10

warnings.warn(
    "Importing from langgraph.pregel.types is deprecated. "
    "Please use 'from langgraph.types import ...' instead.",
    LangGraphDeprecatedSinceV10,
    stacklevel=2,
)
