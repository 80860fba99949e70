"""What a compiled graph says about its input, output, context and config (pydantic models
and JSON schemas, made on request; pydantic is only imported here, when asked).

`SchemaMixin` is a base of `Pregel`: one channel named as the input (or output) gives a root
model of that channel's update (value) type, a list of channels a model with one optional
field per channel. `CompiledStateGraph` overrides the JSON schemas with its state schemas.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import is_dataclass
from inspect import isclass
from types import GenericAlias
from typing import Any, get_type_hints

from warpgraph.channels.base import BaseChannel
from warpgraph.warnings import LangGraphDeprecatedSinceV10

__all__ = ("SchemaMixin",)

_CONFIG_SCHEMA_DEPRECATED = (
    "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant schema instead."
)
_CONFIG_JSONSCHEMA_DEPRECATED = (
    "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead."
)


def _is_model_class(typ: Any) -> bool:
    if not isclass(typ) or isinstance(typ, GenericAlias):
        return False
    from pydantic import BaseModel

    return issubclass(typ, BaseModel)


def _config_type() -> Any:
    """langchain-core's RunnableConfig when it is installed (LangGraph's field types), else
    warpgraph's twin."""
    try:
        from langchain_core.runnables import RunnableConfig
    except ImportError:
        from warpgraph.config import RunnableConfig
    return RunnableConfig


class SchemaMixin:
    """Schema accessors of a compiled graph (`Pregel` provides channels / names)."""

    channels: dict[str, Any]
    input_channels: Any
    output_channels: Any
    context_schema: Any

    get_name: Callable[..., str]

    # ------------------------------------------------------------ input / output types
    def _channel_type(self, key: Any, attr: str) -> Any:
        if isinstance(key, str):
            channel = self.channels[key]
            if isinstance(channel, BaseChannel):
                return getattr(channel, attr)
        return None

    @property
    def InputType(self) -> Any:
        return self._channel_type(self.input_channels, "UpdateType")

    @property
    def OutputType(self) -> Any:
        return self._channel_type(self.output_channels, "ValueType")

    def _io_schema(self, suffix: str, keys: Any, attr: str) -> Any:
        from warpgraph._internal._pydantic import create_model

        name = self.get_name(suffix)
        if isinstance(keys, str):
            root = self._channel_type(keys, attr)
            if _is_model_class(root):
                return root
            return create_model(name, root=root, module_name=type(self).__module__)
        fields = {
            k: (channel.UpdateType if attr == "UpdateType" else channel.ValueType, None)
            for k in keys
            if isinstance(channel := self.channels[k], BaseChannel)
        }
        return create_model(name, field_definitions=fields)

    def get_input_schema(self, config: Any = None) -> Any:
        """A pydantic model of the graph input."""
        return self._io_schema("Input", self.input_channels or list(self.channels), "UpdateType")

    def get_output_schema(self, config: Any = None) -> Any:
        """A pydantic model of the graph output."""
        return self._io_schema("Output", self.output_channels, "ValueType")

    @property
    def input_schema(self) -> Any:
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        return self.get_output_schema()

    def get_input_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """JSON schema of the graph input."""
        return self.get_input_schema(config).model_json_schema()

    def get_output_jsonschema(self, config: Any = None) -> dict[str, Any]:
        """JSON schema of the graph output."""
        return self.get_output_schema(config).model_json_schema()

    # ------------------------------------------------------------ context / config
    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """JSON schema of `context_schema` (None without one)."""
        schema = self.context_schema
        if schema is None:
            return None
        from pydantic import TypeAdapter
        from typing_extensions import is_typeddict

        if _is_model_class(schema):
            return schema.model_json_schema()
        if is_typeddict(schema) or is_dataclass(schema):
            return TypeAdapter(schema).json_schema()
        raise ValueError(
            f"Invalid context schema type: {schema}. Must be a BaseModel, TypedDict or dataclass."
        )

    @property
    def config_specs(self) -> list[Any]:
        """Configurable fields (none: a graph's run options come from its context)."""
        return []

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """Deprecated: a model of the config (`configurable` typed by `context_schema`)."""
        warnings.warn(_CONFIG_SCHEMA_DEPRECATED, LangGraphDeprecatedSinceV10, stacklevel=2)
        return self._config_model(include)

    def _config_model(self, include: Sequence[str] | None) -> Any:
        from warpgraph._internal._pydantic import create_model

        wanted = [name for name in include or () if name != "configurable"]
        fields: dict[str, Any] = {}
        if self.context_schema:
            fields["configurable"] = (self.context_schema, None)
        for name, typ in get_type_hints(_config_type()).items():
            if name in wanted:
                fields[name] = (typ, None)
        return create_model(self.get_name("Config"), field_definitions=fields)

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        """Deprecated: JSON schema of `config_schema`."""
        warnings.warn(_CONFIG_JSONSCHEMA_DEPRECATED, LangGraphDeprecatedSinceV10, stacklevel=2)
        return self._config_model(include).model_json_schema()
