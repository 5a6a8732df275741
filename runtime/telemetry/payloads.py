"""The one place that turns payloads into span attribute values, with size caps."""

from __future__ import annotations

import json
from typing import Any

from google.genai import types
from pydantic import BaseModel

MAX_ATTRIBUTE_CHARS = 16_384
"""Longest JSON string stored in one span attribute; longer ones are cut and marked."""

TRUNCATION_MARK = "…[truncated]"


def _default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return repr(value)


def to_json(value: Any, *, limit: int = MAX_ATTRIBUTE_CHARS) -> str:
    """Serialize ``value`` as compact JSON, cut to ``limit`` characters (marked when cut)."""
    text = json.dumps(value, default=_default, ensure_ascii=False, separators=(",", ":"))
    if len(text) > limit:
        return text[: limit - len(TRUNCATION_MARK)] + TRUNCATION_MARK
    return text


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
