"""Pydantic models made on the fly for a graph's JSON schemas (pydantic is optional: this
module is imported only when a schema is asked for).

`create_model(name, field_definitions=..., root=...)` builds the models LangGraph's schema
methods return: field models with arbitrary types allowed and frozen instances (cached per
definition when the definition is hashable), and root models whose JSON schema is titled
with the model's name.
"""

from __future__ import annotations

import sys
import typing
from dataclasses import is_dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic import create_model as _pydantic_model
from pydantic.fields import FieldInfo
from pydantic.json_schema import DEFAULT_REF_TEMPLATE, GenerateJsonSchema

__all__ = ("create_model", "get_fields", "is_supported_by_pydantic")

_FIELD_MODEL_CONFIG = ConfigDict(arbitrary_types_allowed=True, frozen=True, protected_namespaces=())
_ABSENT: Any = object()
# names BaseModel itself uses (methods and attributes): fields so named are renamed
_TAKEN = frozenset(name for name in dir(BaseModel) if not name.startswith("_"))


def get_fields(model: Any) -> dict[str, FieldInfo]:
    """The fields of a pydantic model class or instance (v2, else v1 layout)."""
    for attr in ("model_fields", "__fields__"):
        if hasattr(model, attr):
            return getattr(model, attr)
    raise TypeError(f"Expected a Pydantic model. Got {type(model)}")


def _titled_root(name: str, annotation: Any, module: str | None, default: Any) -> type:
    """A RootModel subclass called `name` whose JSON schema carries `name` as its title."""

    def model_json_schema(
        cls: type,
        by_alias: bool = True,
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: Any = "validation",
    ) -> dict[str, Any]:
        out = super(cls, cls).model_json_schema(  # type: ignore[misc]
            by_alias=by_alias,
            ref_template=ref_template,
            schema_generator=schema_generator,
            mode=mode,
        )
        out["title"] = name
        return out

    def schema(cls: type, by_alias: bool = True, ref_template: str = DEFAULT_REF_TEMPLATE):
        out = super(cls, cls).schema(by_alias=by_alias, ref_template=ref_template)  # type: ignore[misc]
        out["title"] = name
        return out

    namespace: dict[str, Any] = {
        "__annotations__": {"root": annotation},
        "__module__": module or "langchain_core.runnables.utils",
        "model_config": ConfigDict(arbitrary_types_allowed=True),
        "model_json_schema": classmethod(model_json_schema),
        "schema": classmethod(schema),
    }
    if default is not _ABSENT:
        namespace["root"] = default
    return type(name, (RootModel,), namespace)


@lru_cache(maxsize=256)
def _cached_root(name: str, annotation: Any, module: str | None, default: Any) -> type:
    return _titled_root(name, annotation, module, default)


def _renamed(fields: dict[str, Any]) -> dict[str, Any]:
    """Fields starting with `_` or named like a BaseModel attribute go under a private
    name, aliased back to theirs (their title drops the underscores)."""
    out: dict[str, Any] = {}
    for key, spec in fields.items():
        if not key.startswith("_") and key not in _TAKEN:
            out[key] = spec
            continue
        if isinstance(spec, FieldInfo):
            raise NotImplementedError(
                "Remapping for fields starting with '_' or fields with a name "
                f"matching a reserved name {set(_TAKEN)} is not supported if "
                f" the field is a pydantic Field instance. Got {key}."
            )
        annotation, default = spec
        title = key.lstrip("_").replace("_", " ").title()
        out[f"private_{key}"] = (
            annotation,
            Field(default=default, alias=key, serialization_alias=key, title=title),
        )
    return out


def _field_model(name: str, fields: dict[str, Any]) -> type[BaseModel]:
    return _pydantic_model(name, __config__=_FIELD_MODEL_CONFIG, **_renamed(fields))


@lru_cache(maxsize=256)
def _cached_field_model(name: str, /, **fields: Any) -> type[BaseModel]:
    return _field_model(name, fields)


def create_model(
    model_name: str,
    *,
    field_definitions: dict[str, Any] | None = None,
    root: Any | None = None,
    module_name: str | None = None,
) -> type[BaseModel]:
    """A model with `field_definitions` (`name -> (type, default)`), or a root model of
    `root` (a type, or `(type, default)`)."""
    fields = field_definitions or {}
    if root:
        if fields:
            raise NotImplementedError(
                f"When specifying __root__ no other fields should be provided. Got {fields}"
            )
        annotation, default = root if isinstance(root, tuple) else (root, _ABSENT)
        try:
            return _cached_root(model_name, annotation, module_name, default)
        except TypeError:  # an unhashable type or default
            return _titled_root(model_name, annotation, module_name, default)
    try:
        return _cached_field_model(model_name, **fields)
    except TypeError:  # an unhashable definition
        return _field_model(model_name, fields)


def is_supported_by_pydantic(type_: Any) -> bool:
    """Whether pydantic can validate `type_` as a container: dataclasses, BaseModels and
    TypedDicts (typing's own TypedDict only from Python 3.12 on)."""
    if is_dataclass(type_):
        return True
    if isinstance(type_, type) and issubclass(type_, BaseModel):
        return True
    from typing_extensions import TypedDict as ExtTypedDict

    for base in getattr(type_, "__orig_bases__", ()):
        if base is ExtTypedDict:
            return True
        if base is typing.TypedDict and sys.version_info >= (3, 12):
            return True
    return False
