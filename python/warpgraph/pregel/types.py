"""Deprecated alias module: the types now live in `warpgraph.types`."""

from warpgraph.types import *
from warpgraph.types import __all__  # noqa: F401
