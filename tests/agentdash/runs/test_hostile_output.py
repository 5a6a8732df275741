"""A run whose agent, tools and model produce hostile strings (NUL, lone surrogates) ends
normally — its artifacts, memory, events and its failure text stored with U+FFFD — instead
of failing with UnicodeEncodeError and going to the reaper."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from asgiref.sync import sync_to_async
from django.core.exceptions import ValidationError
from google.genai import types

from agentdash.agent_sessions.memory_service import DjangoMemoryService
from agentdash.agent_sessions.models import AgentSession, MemoryRecord, StoredArtifact
from agentdash.agent_sessions.selectors import session_snapshot
from agentdash.core.hygiene import REPLACEMENT
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from agentdash.runs.worker import run_execute
from runtime import LlmAgent, ScriptedLlm, ToolContext
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

pytestmark = pytest.mark.django_db(transaction=True)

MakeSession = Callable[[str], AgentSession]
HOSTILE = "x\x00y\ud800z"
FIXED = f"x{REPLACEMENT}y{REPLACEMENT}z"


async def execute(session: AgentSession, agent: str) -> Run:
    queue = sync_to_async(run_enqueue)
    run: Run = await queue(
        session=session, agent_name=agent, message=says("Go."), requested_by=None
    )
    await run_execute(run.pk, worker="w1")
    return await Run.objects.aget(pk=run.pk)


async def test_a_run_stores_hostile_artifacts_and_memory_and_succeeds(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    async def keep(note: str, tool_context: ToolContext) -> str:
        """Keep a note as a file."""
        await tool_context.save_artifact("note.txt", types.Part(text=note))
        return f"kept {note}"

    agent = LlmAgent(
        name="keeper",
        model=ScriptedLlm(
            responses=[types.FunctionCall(name="keep", args={"note": HOSTILE}), f"Done {HOSTILE}"]
        ),
        tools=[keep],
    )
    register(agent)
    session = await sync_to_async(make_session)("keeper")
    run = await execute(session, "keeper")
    assert (run.status, run.error) == (Run.Status.SUCCEEDED, "")
    artifact = await StoredArtifact.objects.aget(session_id=session.id, filename="note.txt")
    assert artifact.part["text"] == FIXED

    stored = await sync_to_async(session_snapshot)(
        session_id=session.id, app_name=session.app_name, user_id=session.user_id
    )
    assert stored is not None and stored.events
    await DjangoMemoryService().add_session_to_memory(stored)
    texts = [r.text async for r in MemoryRecord.objects.filter(session_id=session.id)]
    assert texts and all("\x00" not in t and "\ud800" not in t for t in texts)
    assert any(FIXED in t for t in texts)


async def test_a_failure_whose_message_is_hostile_is_recorded(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    def explode(what: str) -> str:
        """Fail loudly."""
        raise RuntimeError(f"tool broke on {what}")

    agent = LlmAgent(
        name="exploder",
        model=ScriptedLlm(responses=[types.FunctionCall(name="explode", args={"what": HOSTILE})]),
        tools=[explode],
    )
    register(agent)
    session = await sync_to_async(make_session)("exploder")
    run = await execute(session, "exploder")
    assert run.status == Run.Status.FAILED and run.attempt == 1
    assert f"tool broke on {FIXED}" in run.error
    json.dumps(run.error).encode("utf-8")


async def test_a_person_s_message_that_cannot_be_stored_is_refused(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    register(LlmAgent(name="listener", model=ScriptedLlm(responses=["Yes."])))
    session = await sync_to_async(make_session)("listener")
    queue = sync_to_async(run_enqueue)
    for text, problem in (("a\x00", "NUL character"), ("\ud800", "unpaired surrogate")):
        with pytest.raises(ValidationError) as refused:
            await queue(
                session=session, agent_name="listener", message=says(text), requested_by=None
            )
        assert problem in str(refused.value.message_dict["message"])
    assert not await Run.objects.filter(session=session).aexists() and not recorder.submitted


async def test_a_tool_returning_bytes_that_are_not_utf8_is_stored(
    register: Callable[..., None], make_session: MakeSession, recorder: RecordingExecutor
) -> None:
    def blob(size: int) -> dict:
        """Return random bytes, as a SQL tool may (randomblob)."""
        return {"rows": [{"b": b"\xff\x00\x80" * size}], "text": b"plain"}

    agent = LlmAgent(
        name="blobber",
        model=ScriptedLlm(responses=[types.FunctionCall(name="blob", args={"size": 2}), "Done."]),
        tools=[blob],
    )
    register(agent)
    session = await sync_to_async(make_session)("blobber")
    run = await execute(session, "blobber")
    assert (run.status, run.error) == (Run.Status.SUCCEEDED, "")
    stored = await sync_to_async(session_snapshot)(
        session_id=session.id, app_name=session.app_name, user_id=session.user_id
    )
    assert stored is not None
    (response,) = [r for e in stored.events for r in e.get_function_responses()]
    assert response.response == {"rows": [{"b": "base64:/wCA/wCA"}], "text": "plain"}
