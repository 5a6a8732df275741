"""``AGENTDASH["SERVICE_IDENTITY"]``: the identity the worker's runner gives the agent, so
tools acting as the agent act as it (and tools acting as the user as the session's owner);
an empty one is a system-check error (``agentdash.E025``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.runs.checks import check_service_identity
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from runtime import LlmAgent, ScriptedLlm, ToolContext, acts_as
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

pytestmark = pytest.mark.django_db(transaction=True)


def as_agent(tool_context: ToolContext) -> dict[str, Any]:
    """Whom it acts as."""
    return {"kind": tool_context.principal.kind, "id": tool_context.principal.id}


@acts_as("user")
def as_user(tool_context: ToolContext) -> dict[str, Any]:
    """Whom it acts as."""
    return {"kind": tool_context.principal.kind, "id": tool_context.principal.id}


async def responses_after_run(
    register: Callable[..., None], make_session: Callable[[str], AgentSession]
) -> list[dict[str, Any]]:
    calls = types.Content(
        role="model",
        parts=[
            types.Part(function_call=types.FunctionCall(id="c1", name="as_agent", args={})),
            types.Part(function_call=types.FunctionCall(id="c2", name="as_user", args={})),
        ],
    )
    model = ScriptedLlm(responses=[calls, "done"])
    register(LlmAgent(name="who_agent", model=model, tools=[as_agent, as_user]))
    session = await sync_to_async(make_session)("who_agent")
    enqueue = sync_to_async(run_enqueue)
    run: Run = await enqueue(
        session=session, agent_name="who_agent", message=says("who?"), requested_by=None
    )
    await run_execute(run.pk, worker="w1")
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.SUCCEEDED
    rows = SessionEvent.objects.filter(session=session).order_by("seq")
    found = []
    async for data in rows.values_list("data", flat=True):
        for part in (data.get("content") or {}).get("parts") or []:
            if part.get("function_response"):
                found.append(part["function_response"]["response"])
    return found


async def test_the_worker_runs_tools_with_the_configured_service_identity(
    settings: Any,
    register: Callable[..., None],
    make_session: Callable[[str], AgentSession],
    recorder: RecordingExecutor,
) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "SERVICE_IDENTITY": "svc-dash-7"}
    found = await responses_after_run(register, make_session)
    # make_session's sessions belong to user id "u".
    assert found == [{"kind": "agent", "id": "svc-dash-7"}, {"kind": "user", "id": "u"}]


async def test_the_default_service_identity_is_agentdash_agent(
    register: Callable[..., None],
    make_session: Callable[[str], AgentSession],
    recorder: RecordingExecutor,
) -> None:
    found = await responses_after_run(register, make_session)
    assert found[0] == {"kind": "agent", "id": "agentdash-agent"}


@pytest.mark.parametrize("value", ["", "   ", None, 7])
def test_an_empty_service_identity_is_a_check_error(settings: Any, value: Any) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "SERVICE_IDENTITY": value}
    (error,) = check_service_identity(None)
    assert error.id == "agentdash.E025" and repr(value) in error.msg


def test_the_default_passes_the_check() -> None:
    assert check_service_identity(None) == []
