"""Tool confirmation (ADK's human in the loop): a tool call that waits for a person's yes or
no, and optionally their data, before it runs.

The run pauses with an ``adk_request_confirmation`` function call whose args carry the
``originalFunctionCall`` and the ``toolConfirmation`` (hint, payload); the client answers it
with a function response of the same id whose response is a ``ToolConfirmation``
(``{"confirmed": true, "payload": …}``, or ADK's client form ``{"response": "<that as
JSON>"}``). The runtime then runs the original call again with
``tool_context.tool_confirmation`` set.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, alias_generators

REQUEST_CONFIRMATION_FUNCTION = "adk_request_confirmation"
"""Name of the function call the runtime emits to ask for a confirmation."""

CONFIRMATION_REQUIRED = "This tool call requires confirmation, please approve or reject."
CONFIRMATION_REJECTED = "This tool call is rejected."

PAUSED_AGENT_TOOLS = "agentdash.paused_agent_tools"
"""Key, in the ``custom_metadata`` of the event that asks for confirmations, of what an
:class:`~runtime.tools.agent_tool.AgentTool` needs to resume its agent (the agent's private
session), by the id of the call that asked."""


class ToolConfirmation(BaseModel):
    """What a person answered: ``confirmed``, and the ``payload`` they gave (or edited)."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=alias_generators.to_camel, populate_by_name=True
    )

    hint: str = ""
    confirmed: bool = False
    payload: Any = None

    _paused_agent: dict[str, Any] | None = PrivateAttr(default=None)
    """The paused inner session of an ``AgentTool`` call, carried from the tool to the event
    that asks and back to the tool with the answer; never part of what a client sees."""


def confirmation_from_response(response: dict[str, Any] | None) -> ToolConfirmation:
    """The answer a function response carries. Checked strictly: anything malformed (not an
    object, ``"confirmed": "yes"``, unknown keys, bad JSON) is a refusal, never a yes."""
    try:
        if response and len(response) == 1 and "response" in response:
            raw = response["response"]
            value = json.loads(raw) if isinstance(raw, str) else raw
        else:
            value = response
        return ToolConfirmation.model_validate(value, strict=True)
    except (ValueError, TypeError, ValidationError):
        return ToolConfirmation(confirmed=False)


def with_paused_agent(
    answer: ToolConfirmation, request_metadata: dict[str, Any] | None, call_id: str
) -> ToolConfirmation:
    """``answer``, carrying the paused agent the request kept for call ``call_id`` (from the
    asking event's ``custom_metadata``), if it kept one."""
    kept = (request_metadata or {}).get(PAUSED_AGENT_TOOLS)
    paused = kept.get(call_id) if isinstance(kept, dict) else None
    if not isinstance(paused, dict):
        return answer
    carried = answer.model_copy()
    carried._paused_agent = paused
    return carried
