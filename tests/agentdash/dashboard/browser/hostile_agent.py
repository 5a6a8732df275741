"""An agent whose tool and callbacks put hostile values on its spans, for the span details
pane's browser tests (``AGENTDASH_AGENTS`` names it): markup, NUL and a lone surrogate, JSON
nested far deeper than anyone writes by hand, and an attribute of megabytes — all through the
real runtime, span store and pages, on the offline model (no key, no network)."""

from __future__ import annotations

import json
from typing import Any

from runtime import Agent, Callback, Context, LlmRequest

AGENT_NAME = "hostile_agent"
MARKUP = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script><b>bold</b>'
HUGE_CHARS = 3_000_000
"""A span attribute this long (≈ 3 MB) is set by :class:`Flood` on every tool span."""
NESTING = 50_000
"""Depth of the JSON array text :class:`Flood` puts on the span (far past any parser's
recursion, as text: a span attribute cannot hold structure)."""
DEEP_RESULT = 200
"""Depth of the dict the tool returns (the runtime serializes it whole: under its cap)."""


def hostile_lookup(topic: str) -> dict[str, Any]:
    """Looks up a hostile topic and answers with hostile values.

    Args:
      topic: what to look up.
    """
    nested: dict[str, Any] = {}
    node = nested
    for _ in range(DEEP_RESULT):
        node["deeper"] = {}
        node = node["deeper"]
    node["bottom"] = MARKUP
    return {
        "result": f"{MARKUP} about {topic}",
        "nul": "before\x00after",
        "lone_surrogate": "x\ud800y",
        "nested": nested,
    }


HUGE_MESSAGES = 5_000
"""Messages :class:`Flood` records as the second model call's request (≈ 1 MB of JSON)."""


class Flood(Callback):
    """Before every tool call: a huge attribute (markup repeated, with newlines) and a deeply
    nested JSON text on the tool's span. Before the model call that reads the tool's result:
    a request of megabytes recorded in place of the real one (as a callback may)."""

    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        request = kwargs.get("llm_request")
        span = context.current_span
        answered = isinstance(request, LlmRequest) and any(
            p.function_response for c in request.contents for p in c.parts or []
        )
        if span is not None and answered:
            turn = {"role": "user", "parts": [{"type": "text", "content": f"{MARKUP} " * 2}]}
            span.set_attribute("gen_ai.input.messages", json.dumps([turn] * HUGE_MESSAGES))
        return context

    def before_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        span = context.current_span
        if span is not None:
            line = f"{MARKUP} line\n"
            span.set_attribute("hostile.huge", (line * (HUGE_CHARS // len(line) + 1))[:HUGE_CHARS])
            span.set_attribute("hostile.nested", "[" * NESTING + "]" * NESTING)
        return context


root_agent = Agent(
    name=AGENT_NAME,
    model="offline",
    description="Looks hostile topics up.",
    instruction=f"Look the topic up with hostile_lookup, then answer. {MARKUP}",
    tools=[hostile_lookup],
    callbacks=[Flood()],
)
