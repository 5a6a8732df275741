"""Reads for the playground: what a model span was sent, and the playground's history."""

from __future__ import annotations

from typing import Any

from agentdash.playground.models import PlaygroundRun
from agentdash.spans.selectors import span_detail
from runtime.models.call_payload import PARAMETERS, CallPayload, loads_attribute, system_text
from runtime.telemetry.attributes import AgentDash, GenAI

HISTORY = 50
MODEL_OPERATIONS = ("generate_content", "chat", "text_completion")
"""What the GenAI conventions call a model call (an ingested span's ``gen_ai.operation.name``)."""


def model_span(*, session_id: str, trace_id: str, span_id: str) -> dict[str, Any] | None:
    """The span if it is a model call of the session (its data as the span endpoint sends
    it), else ``None``."""
    found = span_detail(session_id=session_id, trace_id=trace_id, span_id=span_id)
    if found is None:
        return None
    attributes = found.get("attributes") or {}
    operation = attributes.get(GenAI.OPERATION_NAME)
    is_model = attributes.get(AgentDash.SPAN_KIND) == "model" or operation in MODEL_OPERATIONS
    return found if is_model else None


def payload_of(span: dict[str, Any]) -> CallPayload:
    """What the span says its call was sent, as the playground edits it."""
    attributes = span.get("attributes") or {}
    messages = loads_attribute(attributes.get(GenAI.INPUT_MESSAGES))
    tools = loads_attribute(attributes.get(GenAI.TOOL_DEFINITIONS))
    parameters = {
        name: attributes.get(f"gen_ai.request.{name}")
        for name in PARAMETERS
        if isinstance(attributes.get(f"gen_ai.request.{name}"), int | float)
    }
    return CallPayload(
        model=str(attributes.get(GenAI.REQUEST_MODEL) or "offline"),
        system=system_text(attributes.get(GenAI.SYSTEM_INSTRUCTIONS)),
        messages=messages if isinstance(messages, list) else [],
        tools=tools if isinstance(tools, list) else [],
        parameters=parameters,
    )


def answer_of(span: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages the span says its call answered (``gen_ai.output.messages``)."""
    found = loads_attribute((span.get("attributes") or {}).get(GenAI.OUTPUT_MESSAGES))
    return found if isinstance(found, list) else []


def text_of(messages: list[dict[str, Any]]) -> str:
    """The text parts of messages, joined."""
    return "".join(
        str(part.get("content", ""))
        for message in messages if isinstance(message, dict)
        for part in message.get("parts") or []
        if isinstance(part, dict) and part.get("type") == "text"
    )  # fmt: skip


def playground_history(*, session_id: str, trace_id: str, span_id: str) -> list[PlaygroundRun]:
    rows = PlaygroundRun.objects.filter(session_id=session_id, trace_id=trace_id, span_id=span_id)
    return list(rows.order_by("-created_at", "-pk")[:HISTORY])


def playground_run_get(*, session_id: str, run_id: int) -> PlaygroundRun | None:
    return PlaygroundRun.objects.filter(session_id=session_id, pk=run_id).first()
