"""Tool confirmation on the database-backed session service (where ADK's own does not work):
the pause is stored, and an answer sent later — through a new Runner and a new service, as
another worker after a restart would — runs the tool once, with the person's payload."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.session_service import DjangoSessionService
from runtime import LlmAgent, Runner, ScriptedLlm, ToolContext
from runtime.tools import REQUEST_CONFIRMATION_FUNCTION

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_confirmation_survives_a_new_runner_and_runs_once() -> None:
    booked: list[Any] = []

    def book(days: int, tool_context: ToolContext) -> dict[str, Any]:
        """Books days off."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint="Approve?", payload={"days": days})
            return {"status": "waiting"}
        booked.append(tool_context.tool_confirmation.payload)
        return {"status": "booked"}

    def agent() -> LlmAgent:
        llm = ScriptedLlm(
            responses=[types.FunctionCall(name="book", args={"days": 5}), "Booked.", "Again?"]
        )
        return LlmAgent(name="hr", model=llm, tools=[book])

    first = Runner(agent=agent(), app_name="hr", session_service=DjangoSessionService())
    session = await first.session_service.acreate_session(app_name="hr", user_id="u1")
    ask = types.Content(role="user", parts=[types.Part(text="5 days off")])
    events = [
        e async for e in first.run_async(user_id="u1", session_id=session.id, new_message=ask)
    ]
    (request,) = [
        c for e in events for c in e.get_function_calls() if c.name == REQUEST_CONFIRMATION_FUNCTION
    ]
    assert booked == []
    stored = await sync_to_async(lambda: AgentSession.objects.get(pk=session.id).events.count())()
    assert stored == len(events) + 1  # the user's message and every event of the pause

    async def answer(runner: Runner) -> None:
        reply = types.FunctionResponse(
            id=request.id,
            name=REQUEST_CONFIRMATION_FUNCTION,
            response={"confirmed": True, "payload": {"days": 3}},
        )
        message = types.Content(role="user", parts=[types.Part(function_response=reply)])
        async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
            pass

    # Another process: a new service and runner, nothing kept in memory.
    await answer(Runner(agent=agent(), app_name="hr", session_service=DjangoSessionService()))
    assert booked == [{"days": 3}]
    await answer(Runner(agent=agent(), app_name="hr", session_service=DjangoSessionService()))
    assert booked == [{"days": 3}]  # a second answer runs nothing
