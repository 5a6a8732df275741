"""A capital-city agent with ADK's four model and tool callback examples.

It runs on the offline model unless ``GOOGLE_API_KEY``/``GEMINI_API_KEY`` is set, in which
case it uses Gemini (``AGENTDASH_MODEL`` picks which one).
"""

from __future__ import annotations

import copy
import os
from typing import Any

from google.genai import types

from runtime import (
    Agent,
    BaseTool,
    CallbackContext,
    LlmRequest,
    LlmResponse,
    ReadonlyContext,
    ToolContext,
)

CAPITALS = {
    "united states": "Washington, D.C.",
    "canada": "Ottawa",
    "france": "Paris",
    "germany": "Berlin",
    "japan": "Tokyo",
    "italy": "Rome",
    "spain": "Madrid",
}


def default_model() -> str:
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return os.environ.get("AGENTDASH_MODEL", "gemini-2.5-flash")
    return "offline"


def get_capital_city(country: str) -> dict[str, str]:
    """Retrieves the capital city of a given country.

    Args:
      country: the country's name in English, e.g. "France".
    """
    capital = CAPITALS.get(country.strip().lower())
    if capital is None:
        return {"result": f"Capital not found for {country}"}
    return {"result": capital}


def block_keyword_guardrail(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """Before the model: refuse any message containing BLOCK, without calling the model."""
    last = llm_request.contents[-1] if llm_request.contents else None
    text = "".join(p.text or "" for p in (last.parts or [])) if last and last.role == "user" else ""
    if "BLOCK" in text.upper():
        callback_context.state["guardrail_block_keyword_triggered"] = True
        return LlmResponse(
            content=types.Content(
                role="model",
                parts=[types.Part(text="I cannot process this request: it contains 'BLOCK'.")],
            )
        )
    return None


def add_disclaimer(
    callback_context: CallbackContext, llm_response: LlmResponse
) -> LlmResponse | None:
    """After the model: mark final text answers as checked."""
    if not llm_response.content or not llm_response.text:
        return None
    if any(p.function_call for p in llm_response.content.parts or []):
        return None
    changed = llm_response.model_copy(deep=True)
    assert changed.content is not None
    changed.content.parts = [types.Part(text=f"{llm_response.text} (checked by after_model)")]
    return changed


def redirect_canada(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    """Before the tool: Canada is looked up as France; "BLOCK" never reaches the tool."""
    country = str(args.get("country", ""))
    if tool.name == "get_capital_city" and country.lower() == "canada":
        args["country"] = "France"
    if tool.name == "get_capital_city" and country.upper() == "BLOCK":
        return {"result": "Tool execution was blocked by before_tool_callback."}
    return None


def annotate_usa(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: dict
) -> dict | None:
    """After the tool: add a note to Washington, D.C. and remember the last lookup in state."""
    tool_context.state["last_capital_lookup"] = args.get("country")
    if tool_response.get("result") == "Washington, D.C.":
        changed = copy.deepcopy(tool_response)
        changed["result"] = "Washington, D.C. (the capital of the USA)"
        changed["note_added_by_callback"] = True
        return changed
    return None


INSTRUCTION = (
    "You answer questions about capital cities. Use the get_capital_city tool, then answer in "
    "one sentence."
)


def capital_instruction(context: ReadonlyContext) -> str:
    """The instruction with the session's last lookup (``last_capital_lookup``, written by
    :func:`annotate_usa` after each tool call). Before the first lookup of a session there is
    none, and the instruction says so: a ``{last_capital_lookup?}`` template would leave an
    empty gap in the sentence on every session's first model call."""
    last = context.state.get("last_capital_lookup")
    if last:
        return f"{INSTRUCTION} The last country looked up was {last}."
    return f"{INSTRUCTION} No country has been looked up yet in this session."


root_agent = Agent(
    name="capital_agent",
    model=default_model(),
    description="Answers questions about the capital cities of countries.",
    instruction=capital_instruction,
    tools=[get_capital_city],
    before_model_callback=block_keyword_guardrail,
    after_model_callback=add_disclaimer,
    before_tool_callback=redirect_canada,
    after_tool_callback=annotate_usa,
    output_key="last_answer",
)
