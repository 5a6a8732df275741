"""The demo agents' guardrails: one instance of each, governed per agent by the database's
policies (``manage.py seed_demo`` attaches the defaults; operators edit them on the
guardrails page or in the admin). An agent with no policy of a kind is not limited by it.

Each is a named callback, switchable per agent and session from the Controls panel:
``step-limits``, ``input-screen``, ``rate-limit``, ``tool-guard``, ``output-redaction``.
"""

from __future__ import annotations

from typing import Any

from google.genai import types

from agentdash.controls.agent_policies import DatabaseRateCounter, stored_policy
from runtime.guardrails import InputScreen, OutputRedaction, RateLimit, StepLimits, ToolPolicy

step_limits = StepLimits(stored_policy("step_limits"))
input_screen = InputScreen(stored_policy("input_screen"))
rate_limit = RateLimit(stored_policy("rate_limit"), counter=DatabaseRateCounter())
tool_guard = ToolPolicy(stored_policy("tool_guard"))
output_redaction = OutputRedaction(stored_policy("output_redaction"))


SAFETY_SETTINGS = [
    types.SafetySetting(category=category, threshold=types.HarmBlockThreshold.BLOCK_LOW_AND_ABOVE)
    for category in (
        types.HarmCategory.HARM_CATEGORY_HARASSMENT,
        types.HarmCategory.HARM_CATEGORY_HATE_SPEECH,
        types.HarmCategory.HARM_CATEGORY_SEXUALLY_EXPLICIT,
        types.HarmCategory.HARM_CATEGORY_DANGEROUS_CONTENT,
    )
]
"""Gemini's own filters, stricter than its defaults (the offline model has none; they are
passed on and shown on each model span all the same)."""


def guarded(*, tools: bool = True) -> dict[str, Any]:
    """The guardrail arguments of a demo agent: its callbacks (step limits first: a run past
    its limit stops before anything else runs) and Gemini's safety settings."""
    callbacks: dict[str, Any] = {
        "before_model_callback": [step_limits.before_model, input_screen.before_model],
        "after_model_callback": [output_redaction.after_model],
        "generate_content_config": types.GenerateContentConfig(safety_settings=SAFETY_SETTINGS),
    }
    if tools:
        # The tool guard before the rate limit: a call it refuses uses none of the quota.
        callbacks["before_tool_callback"] = [
            step_limits.before_tool,
            tool_guard.before_tool,
            rate_limit.before_tool,
        ]
    return callbacks
