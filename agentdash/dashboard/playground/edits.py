"""The playground form: the call's parts as the page edits them, read back into a payload.

Each text part of each message is a text box (``text-<message>-<part>``), each other part
(a tool call, a tool's response) a JSON box (``json-<message>-<part>``); the messages' roles
and part kinds travel as a skeleton (``skeleton``). The tools are one JSON box, the
parameters one box each, the model and the system instruction theirs. ``user_text`` adds a
user message at the end."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError
from django.http import QueryDict

from agentdash.core.hygiene import json_loads_strict
from runtime.models.call_payload import CallPayload

NUMBERS = ("temperature", "top_p", "max_output_tokens")
BOX_MAX_CHARS = 200_000


def form_rows(payload: CallPayload) -> list[dict[str, Any]]:
    """The messages as the template draws them: role, and each part's box."""
    rows = []
    for i, message in enumerate(payload.messages):
        parts = []
        for j, part in enumerate(message.get("parts") or []):
            if not isinstance(part, dict):
                continue
            if part.get("type") in ("text", "reasoning"):
                parts.append({"name": f"text-{i}-{j}", "kind": part["type"],
                              "value": str(part.get("content", ""))})  # fmt: skip
            else:
                shown = json.dumps({k: v for k, v in part.items() if k != "type"},
                                   ensure_ascii=False, indent=1)  # fmt: skip
                kind = str(part.get("type", "other"))
                parts.append({"name": f"json-{i}-{j}", "kind": kind, "value": shown})
        rows.append({"role": str(message.get("role", "user")), "parts": parts})
    return rows


def skeleton_of(payload: CallPayload) -> str:
    return json.dumps([
        {"role": m.get("role", "user"),
         "parts": [p.get("type", "other") for p in m.get("parts") or [] if isinstance(p, dict)]}
        for m in payload.messages if isinstance(m, dict)
    ])  # fmt: skip


def payload_from(data: QueryDict) -> CallPayload:
    """The payload the form says; ``ValidationError`` naming the box that cannot be read."""
    skeleton = _json(data.get("skeleton", "[]"), "messages")
    if not isinstance(skeleton, list):
        raise ValidationError({"messages": ["the form lost its messages: open the span again"]})
    messages = []
    for i, message in enumerate(skeleton):
        parts = []
        for j, kind in enumerate(message.get("parts") or [] if isinstance(message, dict) else []):
            if kind in ("text", "reasoning"):
                parts.append({"type": kind, "content": _box(data, f"text-{i}-{j}")})
                continue
            found = _json(_box(data, f"json-{i}-{j}") or "{}", f"message {i + 1}")
            if not isinstance(found, dict):
                raise ValidationError({"messages": [f"message {i + 1}: a part is a JSON object"]})
            parts.append({**found, "type": str(kind)})
        messages.append({"role": str(message.get("role", "user")), "parts": parts})
    said = _box(data, "user_text").strip()
    if said:
        messages.append({"role": "user", "parts": [{"type": "text", "content": said}]})
    tools = _json(_box(data, "tools") or "[]", "tools")
    if not isinstance(tools, list):
        raise ValidationError({"tools": ["a JSON list of tool definitions"]})
    return CallPayload(model=_box(data, "model").strip(), system=_box(data, "system"),
                       messages=messages, tools=tools, parameters=_numbers(data))  # fmt: skip


def _box(data: QueryDict, name: str) -> str:
    value = data.get(name, "")
    if len(value) > BOX_MAX_CHARS:
        raise ValidationError({name: [f"at most {BOX_MAX_CHARS:,} characters"]})
    return value.replace("\r\n", "\n")


def _json(text: str, field: str) -> Any:
    try:
        return json_loads_strict(text)
    except (ValueError, RecursionError) as exc:
        raise ValidationError({field: [f"not JSON: {str(exc)[:200]}"]}) from None


def _numbers(data: QueryDict) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in NUMBERS:
        text = data.get(name, "").strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError:
            raise ValidationError({name: ["a number"]}) from None
        found[name] = int(value) if name == "max_output_tokens" else value
    return found
