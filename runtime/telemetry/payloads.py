"""The one place that turns payloads into span attribute values, with size caps."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import BaseModel

MAX_ATTRIBUTE_CHARS = 16_384
"""Longest JSON string stored in one span attribute; longer ones are cut and marked."""

TRUNCATION_MARK = "…[truncated]"

MAX_DEPTH = 32
"""Deepest structure kept when a payload is too deep (or circular) to serialize whole."""

DEPTH_MARK = "…[nested too deep]"


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


def to_json(value: Any, *, limit: int = MAX_ATTRIBUTE_CHARS) -> str:
    """Serialize ``value`` as compact JSON, cut to ``limit`` characters (marked when cut).

    Never raises for a value's shape: one nested too deeply for ``json`` (or pydantic), or
    one that contains itself, is serialized down to ``MAX_DEPTH`` levels, deeper parts
    replaced by ``DEPTH_MARK``."""
    try:
        text = json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, ValueError):  # too deep, or circular
        bounded = _bounded(value, MAX_DEPTH)
        text = json.dumps(bounded, default=repr, ensure_ascii=False, separators=(",", ":"))
    if len(text) > limit:
        return text[: limit - len(TRUNCATION_MARK)] + TRUNCATION_MARK
    return text


def preview(value: Any, *, limit: int) -> str:
    """A short one-line text of ``value`` for summaries and logs: a string as it is, anything
    else as :func:`to_json`; whitespace runs collapsed, cut to ``limit`` characters (``…``)."""
    text = value if isinstance(value, str) else to_json(value, limit=limit * 2 + 16)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bounded(value: Any, depth: int) -> Any:
    """``value`` as plain JSON data down to ``depth`` levels (the walk stops there)."""
    if isinstance(value, BaseModel):
        try:
            value = value.model_dump(mode="json", exclude_none=True)
        except ValueError:  # pydantic's own depth limit
            return f"<{type(value).__name__}>"
    if isinstance(value, dict | list | tuple | set | frozenset):
        if depth <= 0:
            return DEPTH_MARK
        if isinstance(value, dict):
            return {str(k): _bounded(v, depth - 1) for k, v in value.items()}
        return [_bounded(v, depth - 1) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return _default(value)


def part_to_message_part(part: types.Part) -> dict[str, Any]:
    """One ``types.Part`` as an OTel GenAI message part."""
    if part.text is not None:
        return {"type": "reasoning" if part.thought else "text", "content": part.text}
    if part.function_call is not None:
        fc = part.function_call
        return {"type": "tool_call", "id": fc.id, "name": fc.name, "arguments": fc.args}
    if part.function_response is not None:
        fr = part.function_response
        return {"type": "tool_call_response", "id": fr.id, "response": fr.response}
    if part.inline_data is not None:
        blob = part.inline_data
        return {"type": "blob", "mime_type": blob.mime_type, "size": len(blob.data or b"")}
    return {"type": "other"}


def contents_to_messages(contents: list[types.Content]) -> list[dict[str, Any]]:
    """Contents in the GenAI conventions' message shape: ``[{role, parts: [...]}, ...]``."""
    return [
        {
            "role": "assistant" if c.role == "model" else (c.role or "user"),
            "parts": [part_to_message_part(p) for p in c.parts or []],
        }
        for c in contents
    ]


def tool_definitions(tools: list[Any] | None) -> list[dict[str, Any]]:
    """A request's declared tools in the GenAI conventions' tool-definition shape:
    ``{"type": "function", "name", "description", "parameters"}`` per function declaration
    (``parameters`` as JSON Schema), ``{"type": kind, "name": kind}`` for a built-in tool
    (``google_search``, ``code_execution``, …). Anything that is not a ``types.Tool`` is
    skipped."""
    found: list[dict[str, Any]] = []
    for tool in tools or []:
        if not isinstance(tool, types.Tool):
            continue
        for declaration in tool.function_declarations or []:
            found.append(_function_definition(declaration))
        for kind, value in tool:
            if kind != "function_declarations" and value is not None:
                found.append({"type": kind, "name": kind})
    return found


def _function_definition(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    definition: dict[str, Any] = {"type": "function", "name": declaration.name or ""}
    if declaration.description:
        definition["description"] = declaration.description
    if declaration.parameters_json_schema is not None:
        definition["parameters"] = declaration.parameters_json_schema
    elif declaration.parameters is not None:
        try:  # Gemini's Schema (types "OBJECT", "STRING") as standard JSON Schema
            schema = declaration.parameters.json_schema
            definition["parameters"] = schema.model_dump(mode="json", exclude_none=True)
        except (ValueError, TypeError):
            definition["parameters"] = declaration.parameters.model_dump(
                mode="json", exclude_none=True
            )
    return definition


def returned_value(value: Any) -> Any:
    """What a callback returned, for its span: a ``types.Content``, or a model response that
    carries one, in the GenAI message shape (``[{role, parts}]``); anything else as it is
    (serialized by :func:`to_json`)."""
    if isinstance(value, types.Content):
        return contents_to_messages([value])
    content = getattr(value, "content", None)
    if isinstance(value, BaseModel) and isinstance(content, types.Content):
        return contents_to_messages([content])
    if isinstance(value, BaseException):
        return f"{type(value).__name__}: {value}"
    return value
