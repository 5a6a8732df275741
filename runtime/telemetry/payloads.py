"""The one place that turns payloads into span attribute values, with size caps."""

from __future__ import annotations

import json
from collections.abc import Iterator
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
        text = _head(value, limit + 1, WALK_DEPTH)
    except (RecursionError, ValueError):  # too deep, or circular
        bounded = _bounded(value, MAX_DEPTH)
        text = json.dumps(bounded, default=repr, ensure_ascii=False, separators=(",", ":"))
    if len(text) > limit:
        return text[: limit - len(TRUNCATION_MARK)] + TRUNCATION_MARK
    return text


WALK_DEPTH = 4
"""Levels of large lists and dicts :func:`to_json` walks itself, to stop once it has the text
it keeps; below them, and for smaller values, each is encoded whole."""

WALK_OVER = 2_048
"""Items (of the lists and dicts of its top three levels) above which a value counts as
large: below, encoding it whole costs less than walking it."""

CHUNK = 64
"""Items of a long list encoded at once when it is walked."""


# One encoder for every call: ``json.dumps`` with arguments makes a new one each time.
_dumps = json.JSONEncoder(default=_default, ensure_ascii=False, separators=(",", ":")).encode


def _large(value: Any) -> bool:
    """Whether ``value`` holds over ``WALK_OVER`` items in its top three levels (counted
    level by level until there: cheap for any value, whatever lies deeper)."""
    count, level = 0, [value]
    for depth in range(3):
        below: list[Any] = []
        for found in level:
            if isinstance(found, dict):
                count += len(found)
                if depth < 2:
                    below.extend(found.values())
            elif isinstance(found, list):
                count += len(found)
                if depth < 2:
                    below.extend(found)
        if count > WALK_OVER:
            return True
        if not below:
            return False
        level = below
    return False


def _head(value: Any, enough: int, depth: int) -> str:
    """The compact JSON of ``value``, or at least its first ``enough`` characters: a model
    request of thousands of parts is not encoded whole for the 16 KB kept of it. A long list
    goes ``CHUNK`` items at a time, each chunk encoded whole; a shorter one, or a dict, an
    item at a time, each walked the same way (down to ``depth``)."""
    if depth <= 0 or not isinstance(value, list | dict) or not _large(value):
        return _dumps(value)
    if isinstance(value, list) and len(value) > CHUNK:
        texts = (_dumps(value[at : at + CHUNK])[1:-1] for at in range(0, len(value), CHUNK))
        return _joined(texts, "[", "]", enough)
    if isinstance(value, list):
        texts = (_head(item, enough, depth - 1) for item in value)
        return _joined(texts, "[", "]", enough)
    if not all(isinstance(key, str) for key in value):
        return _dumps(value)  # keys ``json`` turns into strings: as it does
    texts = (_dumps(k) + ":" + _head(item, enough, depth - 1) for k, item in value.items())
    return _joined(texts, "{", "}", enough)


def _joined(texts: Iterator[str], opening: str, closing: str, enough: int) -> str:
    """``opening`` + ``texts`` joined by commas + ``closing``, or its first ``enough``
    characters at least (the texts past them are never made)."""
    chunks, size = [opening], len(opening)
    for text in texts:
        if size > enough:
            return "".join(chunks)
        chunks.append(text if size == len(opening) else "," + text)
        size += len(chunks[-1])
    chunks.append(closing)
    return "".join(chunks)


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
