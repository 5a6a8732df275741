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

from pydantic import BaseModel, ConfigDict, ValidationError, alias_generators

REQUEST_CONFIRMATION_FUNCTION = "adk_request_confirmation"
"""Name of the function call the runtime emits to ask for a confirmation."""

CONFIRMATION_REQUIRED = "This tool call requires confirmation, please approve or reject."
CONFIRMATION_REJECTED = "This tool call is rejected."


class ToolConfirmation(BaseModel):
    """What a person answered: ``confirmed``, and the ``payload`` they gave (or edited)."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=alias_generators.to_camel, populate_by_name=True
    )

    hint: str = ""
    confirmed: bool = False
    payload: Any = None


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
