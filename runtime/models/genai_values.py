"""google-genai values the runtime makes and changes by the thousand (a model turn of many
tool calls: each call's id, each response's part), without validating again what it built
itself. google-genai's models validate every construction with a hook that walks each field's
annotation in Python (~13 µs a ``Part``), and pydantic's ``model_copy`` takes its general path
for every shallow change (~2 µs). Only for values whose types the runtime guarantees: anything
from a caller is constructed and validated as usual.
"""

from __future__ import annotations

import secrets
from typing import Any, TypeVar

from google.genai import types
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def replaced(model: M, **changes: Any) -> M:
    """A shallow copy of ``model`` with ``changes`` to its fields, taken as given — what
    ``model.model_copy(update=changes)`` makes (the same fields, the same fields set; each
    of ``changes`` a field of the model). Nothing is copied deeper: the copy shares every
    value it was not given."""
    cls = type(model)
    made = cls.__new__(cls)
    values = model.__dict__.copy()
    values.update(changes)
    extra, private = model.__pydantic_extra__, model.__pydantic_private__
    fields_set = model.__pydantic_fields_set__ | changes.keys()
    object.__setattr__(made, "__dict__", values)
    object.__setattr__(made, "__pydantic_extra__", None if extra is None else dict(extra))
    object.__setattr__(made, "__pydantic_fields_set__", fields_set)
    object.__setattr__(made, "__pydantic_private__", None if private is None else dict(private))
    return made


_PART = types.Part()
_RESPONSE = types.FunctionResponse()


def function_response_part(*, id: str | None, name: str, response: dict[str, Any]) -> types.Part:
    """``types.Part(function_response=types.FunctionResponse(id=id, name=name,
    response=response))`` as the runtime answers a tool call — equal to it, with a copy of
    ``response`` as validation makes, without genai's validation. A key that is not a string
    is left to validation (which refuses it, as before)."""
    if not all(type(key) is str for key in response):
        answer = types.FunctionResponse(id=id, name=name, response=response)
        return types.Part(function_response=answer)
    answer = replaced(_RESPONSE, id=id, name=name, response=dict(response))
    return replaced(_PART, function_response=answer)


def call_id(prefix: str) -> str:
    """A new function call id: ``prefix`` and 16 random hexadecimal digits."""
    return prefix + secrets.token_hex(8)
