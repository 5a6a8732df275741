"""A model call rebuilt from what its span says it was sent — the GenAI conventions' system
instructions, input messages and tool definitions (:mod:`runtime.telemetry.payloads` writes
them) — so it can be sent again, edited (AgentDash's playground). Unknown parts are dropped;
nothing here calls a model."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from google.genai import types

from runtime.models.llm_request import LlmRequest
from runtime.telemetry.payloads import TRUNCATION_MARK

PARAMETERS = ("temperature", "top_p", "top_k", "max_output_tokens", "seed")
"""The generation parameters an edited call may set."""


@dataclass
class CallPayload:
    """A model call as its span keeps it: JSON-shaped, each part editable."""

    model: str
    system: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)


def loads_attribute(value: Any) -> Any:
    """A JSON attribute's value (``None`` when it is missing, cut short or not JSON)."""
    if not isinstance(value, str) or value.endswith(TRUNCATION_MARK):
        return value if isinstance(value, list | dict) else None
    try:
        return json.loads(value)
    except ValueError:
        return None


def system_text(value: Any) -> str:
    """The system instruction's text from ``gen_ai.system_instructions`` (its text parts)."""
    found = loads_attribute(value)
    if isinstance(found, str):
        return found
    if not isinstance(found, list):
        return ""
    return "\n\n".join(
        str(p.get("content", "")) for p in found if isinstance(p, dict) and p.get("type") == "text"
    )


def contents_of(messages: list[dict[str, Any]]) -> list[types.Content]:
    """Messages (``[{role, parts}]``) as contents; a tool response takes the name of the call
    with its id (or ``tool``)."""
    names: dict[str, str] = {}
    out: list[types.Content] = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        role = "model" if message.get("role") in ("assistant", "model") else "user"
        parts = [_part(p, names) for p in message.get("parts") or [] if isinstance(p, dict)]
        kept = [p for p in parts if p is not None]
        if kept:
            out.append(types.Content(role=role, parts=kept))
    return out


def _part(part: dict[str, Any], names: dict[str, str]) -> types.Part | None:
    kind = part.get("type")
    if kind in ("text", "reasoning"):
        return types.Part(text=str(part.get("content", "")), thought=kind == "reasoning" or None)
    if kind == "tool_call":
        name = str(part.get("name") or "")
        call_id = part.get("id")
        if call_id:
            names[str(call_id)] = name
        args = part.get("arguments")
        return types.Part(function_call=types.FunctionCall(
            id=str(call_id) if call_id else None, name=name,
            args=args if isinstance(args, dict) else {}))  # fmt: skip
    if kind == "tool_call_response":
        call_id = str(part.get("id") or "")
        response = part.get("response")
        return types.Part(function_response=types.FunctionResponse(
            id=call_id or None, name=names.get(call_id, "tool"),
            response=response if isinstance(response, dict) else {"result": response}))  # fmt: skip
    return None


def tools_of(definitions: list[dict[str, Any]]) -> list[types.Tool]:
    """Tool definitions (``{"type": "function", name, description, parameters}``) as one
    tool of function declarations (built-in tools are left out)."""
    declarations = [
        types.FunctionDeclaration(
            name=str(d.get("name") or ""), description=str(d.get("description") or "") or None,
            parameters_json_schema=d.get("parameters") if isinstance(d.get("parameters"), dict)
            else None,
        )
        for d in definitions
        if isinstance(d, dict) and d.get("type", "function") == "function" and d.get("name")
    ]  # fmt: skip
    return [types.Tool(function_declarations=declarations)] if declarations else []


def request_of(payload: CallPayload) -> LlmRequest:
    """The request ``payload`` describes."""
    config = types.GenerateContentConfig(
        system_instruction=payload.system or None,
        tools=tools_of(payload.tools) or None,
        **{k: v for k, v in payload.parameters.items() if k in PARAMETERS and v is not None},
    )
    request = LlmRequest(model=payload.model, contents=contents_of(payload.messages), config=config)
    return request
