"""Real callback and tool contexts for calling guardrails directly."""

from __future__ import annotations

from typing import Any

from runtime import (
    Agent,
    CallbackContext,
    InMemorySessionService,
    InvocationContext,
    ScriptedLlm,
    ToolContext,
)


def invocation(state: dict[str, Any] | None = None) -> InvocationContext:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u1", state=state)
    agent = Agent(name="agent", model=ScriptedLlm())
    return InvocationContext(
        invocation_id="e-test", agent=agent, session=session, session_service=service
    )


def tool_context(state: dict[str, Any] | None = None) -> ToolContext:
    return ToolContext(invocation(state), function_call_id="call-1")


def callback_context(state: dict[str, Any] | None = None) -> CallbackContext:
    return CallbackContext(invocation(state))
