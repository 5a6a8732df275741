"""A real Runner run against the database stores: events and state persist, and an
operator's edit made while a tool runs reaches the agent's next model call."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import SynchronousOnlyOperation
from google.genai import types

from agentdash.agent_sessions.artifact_service import DjangoArtifactService
from agentdash.agent_sessions.memory_service import DjangoMemoryService
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.agent_sessions.services import session_state_update
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.models import AuditEntry
from runtime import CallbackContext, LlmAgent, LlmRequest, Runner, ScriptedLlm, ToolContext

pytestmark = pytest.mark.django_db(transaction=True)


def user_says(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def test_run_persists_and_sees_an_operator_edit_made_during_a_tool_call(
    operator: Any,
) -> None:
    service = DjangoSessionService()
    session = await service.acreate_session(app_name="app", user_id="u", owner=operator)
    state_seen_by_model: list[dict[str, Any]] = []

    def before_model(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        state_seen_by_model.append(dict(callback_context.state.to_dict()))

    def set_mood(mood: str, tool_context: ToolContext) -> dict:
        """Remember the user's mood."""
        tool_context.state["mood"] = mood
        tool_context.state["temp:scratch"] = "for this invocation only"
        # Meanwhile an operator edits the session from the dashboard (this sync tool runs in
        # a worker thread, like any other process writing to the database).
        seen = session_state_view(session_id=session.id)
        session_state_update(
            session_id=session.id,
            delta={"note": "from operator"},
            expected_version=seen.version,
            actor=operator,
            reason="testing live edits",
        )
        return {"ok": True}

    llm = ScriptedLlm(
        responses=[types.FunctionCall(name="set_mood", args={"mood": "happy"}), "All set."]
    )
    agent = LlmAgent(
        name="helper",
        model=llm,
        instruction="Operator note: {note?}",
        tools=[set_mood],
        before_model_callback=before_model,
    )
    runner = Runner(
        agent=agent,
        app_name="app",
        session_service=service,
        artifact_service=DjangoArtifactService(),
        memory_service=DjangoMemoryService(),
    )
    yielded = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message=user_says("I am happy")
        )
    ]

    # the agent's next model call saw the operator's edit, in state and in its instruction
    assert "note" not in state_seen_by_model[0]
    assert state_seen_by_model[1]["note"] == "from operator"
    assert state_seen_by_model[1]["mood"] == "happy"
    assert state_seen_by_model[1]["temp:scratch"] == "for this invocation only"
    assert "from operator" in str(llm.requests[1].config.system_instruction)

    stored = await service.aget_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    assert [e.author for e in stored.events] == ["user", "helper", "operator", "helper", "helper"]
    runner_ids = [e.id for e in yielded]
    assert [e.id for e in stored.events if e.author == "helper"] == runner_ids
    assert stored.events[-1].text == "All set."
    assert stored.state == {"mood": "happy", "note": "from operator"}

    row = await AgentSession.objects.aget(pk=session.id)
    assert (row.version, row.event_count, row.owner_id) == (5, 5, operator.pk)
    keys = [
        k
        async for k in SessionEvent.objects.order_by("seq").values_list(
            "state_delta_keys", flat=True
        )
    ]
    assert keys == [[], [], ["note"], ["mood"], []]
    assert await AuditEntry.objects.acount() == 1

    memory = DjangoMemoryService()
    await memory.add_session_to_memory(stored)
    found = await memory.search_memory(app_name="app", user_id="u", query="happy")
    assert [m.content.parts[0].text for m in found.memories] == ["I am happy"]


def test_the_sync_runner_persists_through_the_async_twins() -> None:
    service = DjangoSessionService()
    session = service.create_session(app_name="app", user_id="u", state={"user:name": "Ann"})
    agent = LlmAgent(name="helper", model=ScriptedLlm(responses=["Hello {user:name}"]))
    runner = Runner(agent=agent, app_name="app", session_service=service)
    events = list(
        runner.run(
            user_id="u",
            session_id=session.id,
            new_message=user_says("hi"),
            state_delta={"greeted": True},
        )
    )
    assert [e.author for e in events] == ["helper"]
    stored = service.get_session(app_name="app", user_id="u", session_id=session.id)
    assert stored is not None
    assert [e.author for e in stored.events] == ["user", "helper"]
    assert stored.state == {"user:name": "Ann", "greeted": True}


async def test_sync_methods_refuse_the_event_loop_and_the_twins_work_there() -> None:
    service = DjangoSessionService()
    s = await service.acreate_session(app_name="app", user_id="u")
    listed = await service.alist_sessions(app_name="app")
    assert [x.id for x in listed.sessions] == [s.id]
    with pytest.raises(SynchronousOnlyOperation):
        service.get_session(app_name="app", user_id="u", session_id=s.id)
