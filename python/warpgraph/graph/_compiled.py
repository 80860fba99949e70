"""CompiledStateGraph: the Pregel a StateGraph compiles into."""

from __future__ import annotations

from typing import Any, Generic

from warpgraph._internal._field_defaults import get_field_default
from warpgraph._internal._generics import ContextT, InputT, OutputT, StateT
from warpgraph.pregel.main import Pregel

__all__ = ("CompiledStateGraph",)


class CompiledStateGraph(
    Pregel[StateT, ContextT, InputT, OutputT], Generic[StateT, ContextT, InputT, OutputT]
):
    """An executable StateGraph; `.builder` is the StateGraph it was compiled from."""

    def __init__(
        self,
        *,
        builder: Any,
        schema_to_mapper: dict[Any, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.builder = builder
        self.schema_to_mapper = schema_to_mapper if schema_to_mapper is not None else {}
        self._output_mapper: Any = None
        self._state_mapper: Any = None

    def _migrate_checkpoint(self, checkpoint: dict) -> None:
        """Pregel's migrations, then the StateGraph channel renames of pre-v3 layouts."""
        if checkpoint.get("v", 4) < 4:
            super()._migrate_checkpoint(checkpoint)
            if checkpoint["v"] < 3:
                from warpgraph.graph._migrate import migrate_state_graph_channels

                migrate_state_graph_channels(checkpoint, self.nodes, self.builder.edges)

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """JSON schema of the graph input (needs pydantic)."""
        return _json_schema(self.builder, self.builder.input_schema, self._schema_name("Input"))

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """JSON schema of the graph output (needs pydantic)."""
        return _json_schema(self.builder, self.builder.output_schema, self._schema_name("Output"))

    def _schema_name(self, suffix: str) -> str:
        get_name = getattr(self, "get_name", None)
        if callable(get_name):
            return get_name(suffix)
        return f"{getattr(self, 'name', 'LangGraph')}{suffix}"


def _json_schema(builder: Any, typ: Any, name: str) -> dict[str, Any]:
    from inspect import isclass

    from pydantic import BaseModel, TypeAdapter
    from typing_extensions import is_typeddict

    from warpgraph._internal._pydantic import create_model
    from warpgraph.channels.base import BaseChannel

    if isclass(typ) and issubclass(typ, BaseModel):
        return typ.model_json_schema()
    if is_typeddict(typ):
        return TypeAdapter(typ).json_schema()
    keys = list(builder.schemas[typ])
    channels = builder.channels
    if keys == ["__root__"]:
        root = (channels["__root__"].UpdateType, None)
        return create_model(name, root=root).model_json_schema()
    fields = {
        k: (channels[k].UpdateType, get_field_default(k, channels[k].UpdateType, typ))
        for k in keys
        if k in channels and isinstance(channels[k], BaseChannel)
    }
    return create_model(name, field_definitions=fields).model_json_schema()
