"""A session's runs take turns: a message sent while the agent works waits in the queue and
is answered after the run under way; an approval's answer goes before the queue; cancelling
the run under way lets the next one start."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.runs.lifecycle import run_claim, run_finish
from agentdash.runs.models import Run
from agentdash.runs.services import arun_enqueue, run_cancel_request
from agentdash.runs.turns import turn_first
from runtime import LlmAgent, ScriptedLlm
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import run_ended, says
from tests.agentdash.runs.gates import Gate

MakeRun = Callable[..., Run]
ANSWER = {
    "role": "user",
    "parts": [{"function_response": {"id": "c1", "name": "adk_request_confirmation"}}],
}


async def texts(session: AgentSession) -> list[tuple[str, str]]:
    rows = SessionEvent.objects.filter(session=session).order_by("seq").values("author", "data")
    found = []
    async for row in rows:
        for part in (row["data"].get("content") or {}).get("parts") or []:
            if part.get("text"):
                found.append((row["author"], part["text"]))
    return found


def slow_agent(gate: Gate, name: str) -> LlmAgent:
    call = types.FunctionCall(name="slow_lookup", args={"topic": "tea"})
    return LlmAgent(
        name=name,
        model=ScriptedLlm(responses=[call, "First done.", "Second done."]),
        tools=[gate.tool],
    )


@pytest.mark.django_db(transaction=True)
async def test_a_message_sent_while_the_agent_works_is_answered_after_the_run_under_way(
    register: Callable[..., None], make_session: Callable[[str], AgentSession], host: Any
) -> None:
    gate = Gate()
    register(slow_agent(gate, "turns_agent"))
    session = await sync_to_async(make_session)("turns_agent")
    first = await arun_enqueue(
        session=session, agent_name="turns_agent", message=says("tea"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    second = await arun_enqueue(
        session=session, agent_name="turns_agent", message=says("again"), requested_by=None
    )
    for _ in range(30):  # the executor has room for both: give the second every chance
        await asyncio.sleep(0.02)
    assert (await Run.objects.aget(pk=second.pk)).status == Run.Status.QUEUED

    gate.release.set()
    done = await run_ended(first.pk)
    later = await run_ended(second.pk)
    assert (done.status, later.status) == (Run.Status.SUCCEEDED, Run.Status.SUCCEEDED)
    assert later.started_at is not None and done.finished_at is not None
    assert later.started_at >= done.finished_at
    assert await texts(session) == [
        ("user", "tea"),
        ("turns_agent", "First done."),
        ("user", "again"),
        ("turns_agent", "Second done."),
    ]


@pytest.mark.django_db(transaction=True)
async def test_cancelling_the_run_under_way_lets_the_queued_message_run(
    register: Callable[..., None], make_session: Callable[[str], AgentSession], host: Any
) -> None:
    gate = Gate()
    agent = LlmAgent(
        name="interrupted_agent",
        model=ScriptedLlm(
            responses=[types.FunctionCall(name="slow_lookup", args={"topic": "x"}), "Next."]
        ),
        tools=[gate.tool],
    )
    register(agent)
    session = await sync_to_async(make_session)("interrupted_agent")
    first = await arun_enqueue(
        session=session, agent_name="interrupted_agent", message=says("x"), requested_by=None
    )
    await asyncio.wait_for(gate.entered.wait(), 60)
    second = await arun_enqueue(
        session=session, agent_name="interrupted_agent", message=says("y"), requested_by=None
    )
    running = await Run.objects.aget(pk=first.pk)
    await sync_to_async(run_cancel_request)(run=running, actor=None, reason="new question")

    assert (await run_ended(first.pk)).status == Run.Status.CANCELLED
    assert (await run_ended(second.pk)).status == Run.Status.SUCCEEDED
    assert (await texts(session))[-2:] == [("user", "y"), ("interrupted_agent", "Next.")]


@pytest.mark.django_db
def test_an_approvals_answer_goes_before_the_messages_queued_behind_the_paused_run(
    make_run: MakeRun,
) -> None:
    paused = make_run(Run.Status.WAITING)
    message = make_run()
    assert run_claim(run_id=message.pk, worker="w") is None  # the paused run holds the turn
    answer = make_run(message=ANSWER)
    Run.objects.filter(pk=paused.pk).update(status=Run.Status.SUCCEEDED)  # as an answer does

    assert turn_first(paused.session_id) == answer.pk
    assert run_claim(run_id=message.pk, worker="w") is None
    claimed = run_claim(run_id=answer.pk, worker="w")
    assert claimed is not None
    assert run_claim(run_id=message.pk, worker="w") is None  # the answer is under way
    assert Run.objects.get(pk=message.pk).status == Run.Status.QUEUED

    assert run_finish(run=claimed, status=Run.Status.SUCCEEDED)
    assert run_claim(run_id=message.pk, worker="w") is not None


@pytest.mark.django_db
def test_a_run_that_ends_hands_the_turn_to_the_next_queued_one(
    make_run: MakeRun, recorder: RecordingExecutor, django_capture_on_commit_callbacks: Any
) -> None:
    first = run_claim(run_id=make_run().pk, worker="w")
    assert first is not None
    second, third = make_run(), make_run()
    stopping = make_run(cancel_requested=True)  # asked to stop while queued: ends at its claim
    assert run_claim(run_id=third.pk, worker="w") is None
    assert turn_first(first.session_id) == stopping.pk

    with django_capture_on_commit_callbacks(execute=True):
        assert run_finish(run=first, status=Run.Status.FAILED, error="boom")
    assert recorder.submitted == [stopping.pk]
    with django_capture_on_commit_callbacks(execute=True):
        assert run_claim(run_id=stopping.pk, worker="w") is None  # ended cancelled
    assert recorder.submitted == [stopping.pk, second.pk]
    assert run_claim(run_id=second.pk, worker="w") is not None
