"""Breakpoints through the run host: an operator's breakpoint (before a tool, before every
model call) pauses a run — ``waiting``, no worker held — and the answer resumes it (with
edited arguments), steps it, or cancels it; step and cancel answer breakpoints only."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.test import Client
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.controls.breakpoints import breakpoint_add
from agentdash.controls.models import Breakpoint
from agentdash.core.models import AuditEntry
from agentdash.runs.confirmation_requests import pending_confirmations
from agentdash.runs.confirmations import confirmation_answer
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.runs.conftest import run_ended, says
from tests.agentdash.runs.test_confirmations import run_ended_or_waiting

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "bp_bank"


@pytest.fixture
def sent() -> list[Any]:
    return []


@pytest.fixture
def llm(register: Callable[..., None], sent: list[Any]) -> ScriptedLlm:
    def transfer(amount: int, to: str) -> dict[str, Any]:
        """Sends money."""
        sent.append({"amount": amount, "to": to})
        return {"status": "sent"}

    model = ScriptedLlm(
        responses=[
            types.FunctionCall(name="transfer", args={"amount": 500, "to": "bob"}),
            "Sent.",
            "Again.",
        ]
    )
    register(LlmAgent(name=AGENT, model=model, tools=[transfer]))
    return model


def owned(owner: User) -> AgentSession:
    return AgentSession.objects.create(
        id=uuid.uuid4().hex, app_name=AGENT, user_id=str(owner.pk), owner=owner,
        last_update_time=time.time(),
    )  # fmt: skip


async def start(owner: User) -> tuple[AgentSession, Run]:
    session = await sync_to_async(owned)(owner)
    run = await arun_enqueue(session=session, agent_name=AGENT, message=says("pay bob"),
                             requested_by=owner)  # fmt: skip
    return session, await run_ended_or_waiting(run.pk)


async def test_a_breakpoint_before_a_tool_pauses_and_resumes_with_edited_arguments(
    llm: ScriptedLlm, sent: list[Any], host: Any, alice: User, operator_user: User
) -> None:
    add = sync_to_async(breakpoint_add)
    await add(agent_name=AGENT, kind="before_tool", tool_name="transfer", actor=operator_user)
    session, run = await start(alice)
    assert run.status == Run.Status.WAITING and sent == []
    (request,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    assert request.hint == "Breakpoint: before tool transfer"
    assert request.payload == {"breakpoint": "tool", "args": {"amount": 500, "to": "bob"}}
    answer = sync_to_async(confirmation_answer)
    resumed = await answer(
        session=session, request_id=request.request_id, decision="approve",
        payload={"args": {"amount": 5, "to": "bob"}}, reason="a small test first",
        actor=operator_user,
    )  # fmt: skip
    assert (await run_ended(resumed.pk)).status == Run.Status.SUCCEEDED
    assert sent == [{"amount": 5, "to": "bob"}]
    entry = await AuditEntry.objects.aget(action="breakpoint.add")
    assert entry.after["tool"] == "transfer" and entry.after["session"] is None


async def test_a_model_breakpoint_steps_then_cancels(
    llm: ScriptedLlm, sent: list[Any], host: Any, alice: User, operator_user: User
) -> None:
    session = await sync_to_async(owned)(alice)
    await sync_to_async(breakpoint_add)(
        agent_name=AGENT, kind="before_model", session_id=session.pk, actor=operator_user
    )
    run = await arun_enqueue(session=session, agent_name=AGENT, message=says("pay bob"),
                             requested_by=alice)  # fmt: skip
    assert (await run_ended_or_waiting(run.pk)).status == Run.Status.WAITING
    assert llm.requests == []
    answer = sync_to_async(confirmation_answer)
    (first,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    step = await answer(session=session, request_id=first.request_id, decision="step",
                        actor=alice)  # fmt: skip
    assert (await run_ended_or_waiting(step.pk)).status == Run.Status.WAITING
    (second,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    assert second.hint == "Step: paused before tool transfer"
    assert len(llm.requests) == 1 and sent == []
    cancel = await answer(session=session, request_id=second.request_id, decision="cancel",
                          reason="wrong account", actor=alice)  # fmt: skip
    # The run that answered ends cancelled too: what the page shows last is the truth.
    ended = await run_ended(cancel.pk)
    assert (ended.status, ended.error) == (Run.Status.CANCELLED, "Cancelled at a breakpoint.")
    assert (await Run.objects.aget(pk=step.pk)).status == Run.Status.CANCELLED
    kinds = SessionChange.objects.filter(session_id=session.pk, kind="run", ref=str(step.pk))
    assert await kinds.acount() >= 2  # its end was recorded: a page learns it ended
    assert sent == [] and len(llm.requests) == 1  # nothing ran after the cancel
    assert await sync_to_async(pending_confirmations)(session_id=session.pk) == []


async def test_step_and_cancel_answer_breakpoints_only(
    register: Callable[..., None], host: Any, alice: User
) -> None:
    def transfer(amount: int, tool_context: Any) -> dict[str, Any]:
        """Sends money."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(hint="Send?", payload={"amount": amount})
        return {"status": "asked"}

    calls = [types.FunctionCall(name="transfer", args={"amount": 1}), "ok"]
    register(LlmAgent(name=AGENT, model=ScriptedLlm(responses=calls), tools=[transfer]))
    session, _ = await start(alice)
    (request,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    for decision in ("step", "cancel"):
        with pytest.raises(ValidationError, match="answers breakpoints only"):
            await sync_to_async(confirmation_answer)(
                session=session, request_id=request.request_id, decision=decision, actor=alice
            )


def test_the_breakpoints_page_adds_and_removes(operator_user: User, alice: User) -> None:
    session = owned(alice)
    client = Client()
    client.force_login(operator_user)
    url = f"/sessions/{session.pk}/breakpoints/"
    added = client.post(url, {"kind": "before_tool", "tool_name": "transfer", "scope": "session"})
    assert added.status_code == 302
    (point,) = Breakpoint.objects.all()
    assert (point.session_id, point.tool_name) == (session.pk, "transfer")
    page = client.get(url).content.decode()
    assert "before tool transfer" in page and "this session" in page
    for bad in (
        {"kind": "before_tool", "tool_name": ""},
        {"kind": "callback_outcome", "outcome": "exploded"},
        {"kind": "before_tool", "tool_name": "a\x00b"},
        {"kind": "nope"},
    ):
        refused = client.post(url, bad)
        assert refused.status_code == 400, bad
    assert Breakpoint.objects.count() == 1
    assert client.post(url, {"action": "remove", "id": str(point.pk)}).status_code == 302
    assert not Breakpoint.objects.exists()
    assert client.post(url, {"action": "remove", "id": "999"}).status_code == 400


async def test_a_tools_own_approval_after_a_breakpoint_is_stored_and_answerable(
    register: Callable[..., None], host: Any, alice: User, operator_user: User
) -> None:
    """An operator's breakpoint before a tool that asks for a confirmation itself: once the
    breakpoint is approved the tool's own request waits like any other (stored, pending, the
    run waiting) and the owner's answer runs the tool."""
    wired: list[int] = []

    def wire(amount: int, tool_context: Any) -> dict[str, Any]:
        """Wires money, once the person says yes."""
        confirmation = tool_context.tool_confirmation
        if confirmation is None:
            tool_context.request_confirmation(hint=f"Wire {amount}?", payload={})
            return {"status": "waiting for approval"}
        if confirmation.confirmed:
            wired.append(amount)
        return {"status": "sent" if confirmation.confirmed else "refused"}

    calls = [types.FunctionCall(name="wire", args={"amount": 70}), "Wired."]
    register(LlmAgent(name=AGENT, model=ScriptedLlm(responses=calls), tools=[wire]))
    await sync_to_async(breakpoint_add)(
        agent_name=AGENT, kind="before_tool", tool_name="wire", actor=operator_user
    )
    session, _ = await start(alice)
    answer = sync_to_async(confirmation_answer)
    (stop,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    assert stop.hint == "Breakpoint: before tool wire"
    passed = await answer(session=session, request_id=stop.request_id, decision="approve",
                          actor=operator_user)  # fmt: skip
    assert (await run_ended_or_waiting(passed.pk)).status == Run.Status.WAITING
    (own,) = await sync_to_async(pending_confirmations)(session_id=session.pk)
    assert own.hint == "Wire 70?" and wired == []
    done = await answer(session=session, request_id=own.request_id, decision="approve",
                        actor=alice)  # fmt: skip
    assert (await run_ended(done.pk)).status == Run.Status.SUCCEEDED
    assert wired == [70]
    assert await sync_to_async(pending_confirmations)(session_id=session.pk) == []
