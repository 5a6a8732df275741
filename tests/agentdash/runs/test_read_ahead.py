"""A run's claim reads, in its own thread hop, what the run's first steps need (its agent,
its session, its root agent's breakpoints): the runner is handed that session once, and
what could not be read ahead is read where it is needed and fails there as before — never
in the claim, which would leave the run claimed and not run. Its end, likewise, makes the
looks of the ``after_run`` hooks in the hop that stores it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from agentdash.agent_sessions.models import AgentSession
from agentdash.registry.loader import agents_cache_clear
from agentdash.runs import after_run as after_run_module
from agentdash.runs.models import Run
from agentdash.runs.run_start import RunSessionService
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from runtime import LlmAgent, ScriptedLlm
from runtime.sessions.base_session_service import GetSessionConfig
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = "ahead_agent"
MakeSession = Callable[[str], AgentSession]


async def queued(
    register: Callable[..., None], make_session: MakeSession, answer: str = "Hi."
) -> tuple[AgentSession, Run, ScriptedLlm]:
    llm = ScriptedLlm(responses=[answer])
    register(LlmAgent(name=AGENT, model=llm))
    session = await sync_to_async(make_session)(AGENT)
    enqueue = sync_to_async(run_enqueue)
    run = await enqueue(session=session, agent_name=AGENT, message=says("hi"), requested_by=None)
    return session, run, llm


async def test_a_run_whose_agent_is_gone_by_its_claim_fails_saying_so(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    settings: Any,
) -> None:
    _, run, llm = await queued(register, make_session)
    settings.AGENTDASH = {**settings.AGENTDASH, "AGENTS": ["agentdash.demo.capital:root_agent"]}
    agents_cache_clear()  # the agent is no longer configured when the worker claims the run

    await run_execute(run.pk, worker="w1")

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.FAILED
    assert f"no configured agent is named {AGENT!r}" in stored.error
    assert stored.attempt == 1  # claimed once, recorded: not left running
    assert llm.requests == []


async def test_a_session_moved_to_another_app_fails_the_run_as_before(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    session, run, llm = await queued(register, make_session)
    await AgentSession.objects.filter(pk=session.pk).aupdate(app_name="another_app")

    await run_execute(run.pk, worker="w1")

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.FAILED
    assert "SessionNotFoundError" in stored.error and "not found" in stored.error
    assert llm.requests == []


async def test_a_run_answers_from_the_session_the_claim_read(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    session, run, llm = await queued(register, make_session, answer="Hello there.")

    await run_execute(run.pk, worker="w1")

    stored = await Run.objects.aget(pk=run.pk)
    assert stored.status == Run.Status.SUCCEEDED, stored.error
    (request,) = llm.requests
    assert [c.parts[0].text for c in request.contents] == ["hi"]  # the message, stored once
    authors = [
        e.author
        async for e in (await AgentSession.objects.aget(pk=session.pk)).events.order_by("seq")
    ]
    assert authors == ["user", AGENT]


async def test_the_session_read_ahead_is_handed_out_once_and_only_when_asked_for(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    session, run, _ = await queued(register, make_session)
    plain = RunSessionService(run)
    ids = {"app_name": AGENT, "user_id": session.user_id, "session_id": session.pk}
    read = await plain.aget_session(**ids)
    assert read is not None
    read.state["mark"] = "read ahead"  # tells the object handed out from a fresh read

    service = RunSessionService(run, read=read)
    assert await service.aget_session(**ids) is read
    again = await service.aget_session(**ids)
    assert again is not None and again is not read and "mark" not in again.state

    asked_other = RunSessionService(run, read=read)
    assert await asked_other.aget_session(**{**ids, "user_id": "someone else"}) is None
    assert await asked_other.aget_session(**ids) is not read  # handed out once at most

    with_config = RunSessionService(run, read=read)
    found = await with_config.aget_session(**ids, config=GetSessionConfig(num_recent_events=1))
    assert found is not None and found is not read


FAILING_LOOK = "the look of this run fails"


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """An ``after_run`` hook with a look, alone: what each was given, in order. The look
    fails for a run whose message says ``FAILING_LOOK``."""
    found: list[tuple[str, Any]] = []

    def look(run_id: int) -> Any:
        run = Run.objects.get(pk=run_id)  # the database, from a worker thread
        found.append(("look", run.status))
        if run.message["parts"][0]["text"] == FAILING_LOOK:
            raise RuntimeError(FAILING_LOOK)
        return {"status": run.status}

    async def hook(run_id: int, looked: Any) -> None:
        found.append(("hook", looked))

    async def plain(run_id: int) -> None:  # a hook without a look: the run's id alone
        found.append(("plain", run_id))

    monkeypatch.setattr(after_run_module, "_hooks", [])
    monkeypatch.setattr(after_run_module, "_looks", {})
    after_run_module.after_run_register(hook, look=look)
    after_run_module.after_run_register(plain)
    return found


async def test_an_after_run_hook_gets_its_look_made_where_the_end_was_stored(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    seen: list[tuple[str, Any]],
) -> None:
    _, run, _ = await queued(register, make_session)
    await run_execute(run.pk, worker="w1")
    assert seen == [("look", "succeeded"), ("hook", {"status": "succeeded"}), ("plain", run.pk)]


async def test_a_hook_whose_look_was_not_made_reads_for_itself(
    register: Callable[..., None],
    make_session: MakeSession,
    recorder: RecordingExecutor,
    seen: list[tuple[str, Any]],
) -> None:
    """A run that failed is recorded elsewhere (no look made there); a look that raises
    leaves its hook ``None``; the run is as it ended either way."""
    session, run, _ = await queued(register, make_session)
    await AgentSession.objects.filter(pk=session.pk).aupdate(app_name="another_app")
    await run_execute(run.pk, worker="w1")
    assert (await Run.objects.aget(pk=run.pk)).status == Run.Status.FAILED
    assert seen == [("hook", None), ("plain", run.pk)]

    seen.clear()
    another = await sync_to_async(make_session)(AGENT)
    enqueue = sync_to_async(run_enqueue)
    failing = await enqueue(
        session=another, agent_name=AGENT, message=says(FAILING_LOOK), requested_by=None
    )
    await run_execute(failing.pk, worker="w1")
    assert (await Run.objects.aget(pk=failing.pk)).status == Run.Status.SUCCEEDED
    assert seen == [("look", "succeeded"), ("hook", None), ("plain", failing.pk)]
