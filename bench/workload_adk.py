"""The benchmark workload on google-adk; run by bench/.venv-adk/bin/python.

Usage: ``workload_adk.py [--otel]`` then speak the protocol of ``_harness.py``.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator
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
from google.adk.agents import LlmAgent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools import FunctionTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types


class FakeLlm(BaseLlm):
    """Replays ``responses`` in order, one per model call (like our ScriptedLlm)."""

    responses: list[LlmResponse]
    cursor: int = 0

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        response = self.responses[self.cursor]
        self.cursor += 1
        yield response


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


def before_tool(tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> None:
    return None


def after_tool(
    tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
) -> None:
    return None


async def make_round(n: int) -> Any:
    call = types.FunctionCall(name="get_capital_city", args={"country": "France"})
    script = [_model_turn(types.Part(function_call=call)), _model_turn(types.Part(text=ANSWER))]
    agent = LlmAgent(
        name="capitals",
        model=FakeLlm(model="fake", responses=[r.model_copy(deep=True) for r in script * n]),
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
        session = await sessions.create_session(app_name=APP_NAME, user_id=USER_ID)
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
        await sessions.delete_session(app_name=APP_NAME, user_id=USER_ID, session_id=session.id)
        return Invocation(ns=elapsed, events=events, final_text=text)

    return invoke


if __name__ == "__main__":
    versions = package_versions("google-adk", "google-genai", "opentelemetry-sdk")
    serve("adk", versions, make_round, otel="--otel" in sys.argv)
