"""The callbacks every agent gets unless it passes ``callbacks=[]``."""

from __future__ import annotations

import logging
from typing import Any

from runtime.callbacks.any_agent import Callback, Context
from runtime.telemetry.attributes import AgentDash, GenAI
from runtime.telemetry.payloads import preview

logger = logging.getLogger("runtime.steps")

SUMMARY_CHARS = 200


class StepLogger(Callback):
    """Writes a one-line summary of each model call and tool call on its span
    (``agentdash.step.summary``) and to the ``runtime.steps`` logger: what the model answered
    or asked for, what a tool was given and returned. It is what a timeline shows at a glance;
    switch it off and the spans stay, without the summaries."""

    name = "StepLogger"

    def _note(self, context: Context, summary: str) -> Context:
        if context.current_span is not None:
            context.current_span.set_attribute(AgentDash.STEP_SUMMARY, summary)
        logger.info("[%s] %s", context.agent_name, summary)
        return context

    def after_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        response = kwargs.get("llm_response")
        if response is None:
            return context
        if response.error_code:
            return self._note(
                context, f"model error {response.error_code}: {response.error_message}"
            )
        parts = (response.content.parts if response.content else None) or []
        calls = [p.function_call for p in parts if p.function_call]
        if calls:
            names = ", ".join(f"{c.name}({preview(c.args or {}, limit=60)})" for c in calls)
            return self._note(context, f"model calls {names}")
        return self._note(context, f"model says: {preview(response.text, limit=SUMMARY_CHARS)}")

    def after_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        tool = kwargs.get("tool")
        name = getattr(tool, "name", None)
        if name is None and context.current_span is not None:
            name = context.current_span.attributes.get(GenAI.TOOL_NAME)
        call = f"{name}({preview(kwargs.get('args') or {}, limit=80)})"
        result = preview(kwargs.get("tool_response"), limit=SUMMARY_CHARS)
        return self._note(context, f"{call} → {result}")


def get_default_callbacks() -> list[Callback]:
    """New instances of the default callbacks (a fresh list each call)."""
    return [StepLogger()]
