"""Function declarations from Python signatures, type hints and docstrings."""

from __future__ import annotations

import enum
import inspect
import types as pytypes
import typing
from collections.abc import Callable
from typing import Any

from google.genai import types
from pydantic import BaseModel

HIDDEN_PARAMETERS = frozenset({"tool_context", "input_stream"})

_SCALARS: dict[Any, types.Type] = {
    str: types.Type.STRING,
    int: types.Type.INTEGER,
    float: types.Type.NUMBER,
    bool: types.Type.BOOLEAN,
}


def schema_for(annotation: Any) -> types.Schema:
    """A Gemini ``Schema`` for a Python annotation; unknown types become a free-form object."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return types.Schema()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, pytypes.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = (
            schema_for(rest[0])
            if len(rest) == 1
            else types.Schema(any_of=[schema_for(a) for a in rest])
        )
        if len(rest) < len(args):
            inner.nullable = True
        return inner
    if origin is typing.Literal:
        return types.Schema(type=types.Type.STRING, enum=[str(a) for a in args])
    if annotation in _SCALARS:
        return types.Schema(type=_SCALARS[annotation])
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set):
        item = schema_for(args[0]) if args else types.Schema()
        return types.Schema(type=types.Type.ARRAY, items=item)
    if origin is dict or annotation is dict:
        return types.Schema(type=types.Type.OBJECT)
    if inspect.isclass(annotation) and issubclass(annotation, enum.Enum):
        return types.Schema(type=types.Type.STRING, enum=[str(m.value) for m in annotation])
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        props = {
            name: schema_for(field.annotation) for name, field in annotation.model_fields.items()
        }
        required = [n for n, f in annotation.model_fields.items() if f.is_required()]
        return types.Schema(type=types.Type.OBJECT, properties=props, required=required or None)
    return types.Schema(type=types.Type.OBJECT)


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable forward references: fall back to raw annotations
        return dict(getattr(func, "__annotations__", {}))


def declaration_for(
    func: Callable[..., Any], *, name: str, description: str
) -> types.FunctionDeclaration:
    """Declare ``func`` to the model: parameters from its signature and hints (``tool_context``
    hidden), required = parameters without defaults, description = its docstring."""
    hints = _hints(func)
    properties: dict[str, types.Schema] = {}
    required: list[str] = []
    for pname, param in inspect.signature(func).parameters.items():
        if pname in HIDDEN_PARAMETERS or param.kind in (
            param.VAR_POSITIONAL,
            param.VAR_KEYWORD,
        ):
            continue
        schema = schema_for(hints.get(pname, param.annotation))
        if param.default is not inspect.Parameter.empty and param.default is not None:
            schema.default = (
                param.default if isinstance(param.default, str | int | float | bool) else None
            )
        properties[pname] = schema
        if param.default is inspect.Parameter.empty:
            required.append(pname)
    parameters = (
        types.Schema(type=types.Type.OBJECT, properties=properties, required=required or None)
        if properties
        else None
    )
    return types.FunctionDeclaration(name=name, description=description, parameters=parameters)


def required_parameters(func: Callable[..., Any]) -> list[str]:
    return [
        pname
        for pname, p in inspect.signature(func).parameters.items()
        if pname not in HIDDEN_PARAMETERS
        and p.default is inspect.Parameter.empty
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
