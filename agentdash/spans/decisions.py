"""Guardrail decisions as the span store keeps them: read out of a span's
``agentdash.guardrail.*`` attributes when it is written, into two indexed columns, so the
guardrails view counts and lists decisions without parsing every span's JSON."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runtime.telemetry.attributes import AgentDash, Decision

GUARDRAIL_CHARS = 128
DECISION_COLUMNS = ("guardrail", "decision")
"""The span's columns the store fills from its guardrail attributes."""


def decision_columns(attributes: Mapping[str, Any]) -> dict[str, str]:
    """``{"guardrail", "decision"}`` of a span with these attributes: both empty unless it
    carries a known decision (anything else is no decision)."""
    if not isinstance(attributes, Mapping):
        return {"guardrail": "", "decision": ""}
    decision = attributes.get(AgentDash.GUARDRAIL_DECISION)
    if decision not in Decision.ALL:
        return {"guardrail": "", "decision": ""}
    name = attributes.get(AgentDash.GUARDRAIL_NAME) or attributes.get(AgentDash.CALLBACK_NAME)
    return {"guardrail": str(name or "")[:GUARDRAIL_CHARS], "decision": str(decision)}
