"""Control reaches a running agent: a callback switched off while the agent waits in a tool
is skipped at its next call point; an operator's state edit made meanwhile is seen by the
agent's next step, and the agent's own write to another key is kept."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.agent_sessions.services import session_state_update
from agentdash.controls.services import callback_setting_set
from agentdash.controls.switch_broadcast import callback_change_publish
from agentdash.controls.switchboard import CallbackSettingChange
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from runtime import CallbackContext, LlmAgent, LlmRequest, ScriptedLlm, ToolContext
from runtime.telemetry.attributes import AgentDash
from tests.agentdash.runs.conftest import run_ended, says, wait_for
from tests.agentdash.runs.gates import Gate

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]
CALL = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})


async def test_a_callback_switched_off_mid_run_is_skipped_at_the_next_model_call(
    register: Callable[..., None],
    make_session: MakeSession,
    host: Any,
    spans: InMemorySpanExporter,
) -> None:
    def guard(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        return None

    gate = Gate()
    llm = ScriptedLlm(responses=[CALL, "Done."])
    register(
        LlmAgent(name="guarded_agent", model=llm, tools=[gate.tool], before_model_callback=guard)
    )
    session = await sync_to_async(make_session)("guarded_agent")
    run = await arun_enqueue(
        session=session, agent_name="guarded_agent", message=says("tea?"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)

    # What the dashboard does: store the switch, then push it to every process.
    setting = await sync_to_async(callback_setting_set)(
        agent_name="guarded_agent",
        callback_name="guard",
        enabled=False,
        session_id=session.id,
        actor=None,
        reason="quiet, please",
    )
    await callback_change_publish(CallbackSettingChange.for_setting(setting))

    async def switched_off() -> bool:
        return not host.switchboard.is_enabled(
            agent_name="guarded_agent", callback_name="guard", session_id=session.id
        )

    await wait_for(switched_off, what="the listener to apply the switch")
    gate.release.set()
    stored = await run_ended(run.pk)

    assert stored.status == Run.Status.SUCCEEDED
    guards = sorted(
        (s for s in spans.get_finished_spans() if s.name == "callback guard"),
        key=lambda s: s.start_time or 0,
    )
    assert [s.attributes[AgentDash.CALLBACK_OUTCOME] for s in guards] == ["passed", "disabled"]
    assert {format(s.context.trace_id, "032x") for s in guards} == {stored.trace_id}
    assert len(llm.requests) == 2  # the model was still called: only the callback was off


async def test_an_operator_edit_mid_run_reaches_the_next_step_and_loses_nothing(
    register: Callable[..., None],
    make_session: MakeSession,
    host: Any,
    operator_user: Any,
) -> None:
    seen: list[dict[str, Any]] = []

    def remember(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        seen.append(callback_context.state.to_dict())

    def feel_happy(tool_context: ToolContext) -> None:
        tool_context.state["mood"] = "happy"

    gate = Gate(before=feel_happy)
    llm = ScriptedLlm(responses=[CALL, "Noted."])
    register(
        LlmAgent(
            name="stateful_agent",
            model=llm,
            instruction="Operator note: {note?}",
            tools=[gate.tool],
            before_model_callback=remember,
        )
    )
    session = await sync_to_async(make_session)("stateful_agent")
    run = await arun_enqueue(
        session=session, agent_name="stateful_agent", message=says("tea?"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)

    view = await sync_to_async(session_state_view)(session_id=session.id)
    await sync_to_async(session_state_update)(
        session_id=session.id,
        delta={"note": "from the operator"},
        expected_version=view.version,
        actor=operator_user,
        reason="steering the agent",
    )
    gate.release.set()
    stored = await run_ended(run.pk)

    assert stored.status == Run.Status.SUCCEEDED
    assert "note" not in seen[0]
    assert (seen[1]["note"], seen[1]["mood"]) == ("from the operator", "happy")
    assert "from the operator" in str(llm.requests[1].config.system_instruction)
    state = (await sync_to_async(session_state_view)(session_id=session.id)).state
    assert state == {"note": "from the operator", "mood": "happy"}
