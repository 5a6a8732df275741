"""The benchmark workload on our runtime; run by the project venv's python.

Usage: ``workload_ours.py [--otel]`` then speak the protocol of ``_harness.py``.
The same agent, script, callbacks and session handling as ``workload_adk.py``.
"""

from __future__ import annotations

import inspect
import sys
import tomllib
from pathlib import Path
from typing import Any

from _harness import (
    ANSWER,
    APP_NAME,
    QUESTION,
    USER_ID,
    Invocation,
    get_capital_city,
    now_ns,
    package_versions,
    serve,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # import runtime/ from this checkout, installed or not

from google.genai import types  # noqa: E402

from runtime import (  # noqa: E402
    Agent,
    CallbackContext,
    FunctionTool,
    InMemorySessionService,
    LlmRequest,
    LlmResponse,
    Runner,
    ScriptedLlm,
    ToolContext,
)


def _model_turn(part: types.Part) -> LlmResponse:
    """One model reply, with the token usage a real model reports."""
    return LlmResponse(
        content=types.Content(role="model", parts=[part]),
        finish_reason=types.FinishReason.STOP,
        usage_metadata=types.GenerateContentResponseUsageMetadata(
            prompt_token_count=40, candidates_token_count=10, total_token_count=50
        ),
    )


def before_model(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
    return None


def after_model(callback_context: CallbackContext, llm_response: LlmResponse) -> None:
    return None


def before_tool(tool: Any, args: dict[str, Any], tool_context: ToolContext) -> None:
    return None


def after_tool(
    tool: Any, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> None:
    return None


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def make_round(n: int) -> Any:
    call = types.FunctionCall(name="get_capital_city", args={"country": "France"})
    script = [_model_turn(types.Part(function_call=call)), _model_turn(types.Part(text=ANSWER))]
    agent = Agent(
        name="capitals",
        model=ScriptedLlm(responses=script * n),
        instruction="Answer with the capital city of the country asked about.",
        tools=[FunctionTool(get_capital_city)],
        before_model_callback=before_model,
        after_model_callback=after_model,
        before_tool_callback=before_tool,
        after_tool_callback=after_tool,
    )
    sessions = InMemorySessionService()
    runner = Runner(app_name=APP_NAME, agent=agent, session_service=sessions)

    async def invoke(i: int) -> Invocation:
        session = await _maybe_await(sessions.create_session(app_name=APP_NAME, user_id=USER_ID))
        message = types.Content(role="user", parts=[types.Part(text=QUESTION)])
        events, text = 0, ""
        start = now_ns()
        async for event in runner.run_async(
            user_id=USER_ID, session_id=session.id, new_message=message
        ):
            events += 1
            if event.content and event.content.parts and event.content.parts[0].text:
                text = event.content.parts[0].text
        elapsed = now_ns() - start
        await _maybe_await(
            sessions.delete_session(app_name=APP_NAME, user_id=USER_ID, session_id=session.id)
        )
        return Invocation(ns=elapsed, events=events, final_text=text)

    return invoke


if __name__ == "__main__":
    versions = package_versions("agentdash", "google-genai", "opentelemetry-sdk")
    if versions["agentdash"] == "not installed":
        with (ROOT / "pyproject.toml").open("rb") as f:
            versions["agentdash"] = tomllib.load(f)["project"]["version"] + " (checkout)"
    serve("ours", versions, make_round, otel="--otel" in sys.argv)
