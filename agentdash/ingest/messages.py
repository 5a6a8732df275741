"""A model call's conversation and a tool call's arguments and result, read out of each
sender's layout into the OpenTelemetry GenAI conventions' (the runtime's own), so the span
details, the chat and search read one vocabulary whoever sent the span:

- ``gen_ai.input.messages`` / ``gen_ai.output.messages``: ``[{role, parts: [...]}]`` with
  parts ``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name",
  "arguments"}``, ``{"type": "tool_call_response", "id", "response"}``, ``{"type": "uri",
  "uri", "modality"}``; output messages with ``finish_reason``;
- ``gen_ai.system_instructions``: ``[{"type": "text", "content"}]``;
- ``gen_ai.tool.definitions``: ``[{"type": "function", "name", "description", "parameters"}]``;
- ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``.

Layouts read (fixtures/README.md has their facts): OpenInference (flattened
``llm.input_messages.<i>.message.*``, ``llm.output_messages.*``, ``llm.tools.*``, and
``input.value`` / ``output.value`` holding an OpenAI request or response), OpenAI's chat
shape where the conventions' messages go (any-agent, and the conventions' releases before
parts), any-agent's ``gen_ai.output`` and ``gen_ai.tool.args``, OpenLLMetry's flattened
``gen_ai.prompt.<i>.*`` / ``gen_ai.completion.<i>.*`` / ``llm.request.functions.*`` and its
``traceloop.entity.input`` / ``output``, ADK's legacy ``gcp.vertex.agent.llm_request`` /
``llm_response`` (Gemini contents), and the conventions' per-message span events
(``gen_ai.user.message``, ``gen_ai.choice``, …).

Values are JSON text, as the runtime records them. Nothing here raises on what a sender
sent: a value of an unexpected shape is left alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agentdash.ingest.message_layouts import (
    ARGS,
    INPUT,
    OUTPUT,
    RESULT,
    TOOLS,
    adk_legacy,
    any_agent_output,
    flattened,
    from_events,
    from_values,
    json_value,
    openai_message,
    openai_messages,
    system_split,
    tool_definitions,
)


def conversation_read(
    attributes: Mapping[str, Any], events: list[Any], kind: str | None
) -> dict[str, Any]:
    """The conventions' keys ``attributes`` (and ``events``) say in another layout, for a span
    of ``kind``: each value as JSON text. Keys whose value is already in the conventions'
    shape are not in the result; a key whose value is in another shape is (the caller keeps
    what was sent)."""
    if kind == "model":
        return _model(attributes, events)
    if kind == "tool":
        return _tool(attributes)
    return {}


def in_conventions(key: str, value: Any) -> bool:
    """Whether ``value`` of ``key`` is already in the conventions' shape (messages with parts)."""
    if key not in (INPUT, OUTPUT):
        return True
    found = json_value(value)
    return isinstance(found, list) and all(
        isinstance(m, dict) and isinstance(m.get("parts"), list) for m in found
    )


# ── model calls ─────────────────────────────────────────────────────────────────────────────
def _model(attributes: Mapping[str, Any], events: list[Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    flat = flattened(attributes)
    for key, prefixes in ((INPUT, ("llm.input_messages", "gen_ai.prompt")),
                          (OUTPUT, ("llm.output_messages", "gen_ai.completion"))):  # fmt: skip
        sent = attributes.get(key)
        if sent is not None:
            if not in_conventions(key, sent):
                messages = openai_messages(json_value(sent))
                if messages is not None:
                    found[key] = messages
            continue
        for prefix in prefixes:
            if flat.get(prefix):
                found[key] = [openai_message(m) for m in flat[prefix]]
                break
    if INPUT not in found and INPUT not in attributes:
        found.update(from_values(attributes))
    if OUTPUT not in found and OUTPUT not in attributes and "gen_ai.output" in attributes:
        output = any_agent_output(attributes)
        if output is not None:
            found[OUTPUT] = output
    if INPUT not in found and INPUT not in attributes:
        found.update(adk_legacy(attributes))
    if INPUT not in found and INPUT not in attributes:
        found.update(from_events(events))
    if OUTPUT in found:
        finish = attributes.get("llm.finish_reason")
        for message in found[OUTPUT]:
            if isinstance(finish, str) and isinstance(message, dict):
                message.setdefault("finish_reason", finish)
    system_split(found, attributes)
    if TOOLS not in attributes and TOOLS not in found:
        tools = tool_definitions(attributes)
        if tools:
            found[TOOLS] = tools
    return {key: _dumps(value) for key, value in found.items()}


# ── tool calls ──────────────────────────────────────────────────────────────────────────────
def _tool(attributes: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if ARGS not in attributes:
        for key in ("gen_ai.tool.args", "traceloop.entity.input"):
            if key in attributes:
                value = attributes[key]
                if key == "traceloop.entity.input":
                    value = _traceloop_call(value)
                found[ARGS] = value if isinstance(value, str) else _dumps(value)
                break
    if RESULT not in attributes:
        for key in ("gen_ai.output", "traceloop.entity.output"):
            if key in attributes:
                value = attributes[key]
                found[RESULT] = value if isinstance(value, str) else _dumps(value)
                break
    return found


def _traceloop_call(value: Any) -> Any:
    """OpenLLMetry's ``{"args": [...], "kwargs": {...}}``: the keyword arguments alone when
    the call had no positional ones."""
    found = json_value(value)
    if isinstance(found, dict) and set(found) <= {"args", "kwargs"} and not found.get("args"):
        return found.get("kwargs") or {}
    return found


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
