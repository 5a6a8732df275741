"""A chat's lifecycle as people drive it: the first message starts the session and its run
together (``session_start``); a session no run is using is deleted with every row of it
(``session_delete_idle``), audited."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError

from agentdash.agent_sessions.models import (
    AgentSession,
    MemoryRecord,
    SessionEvent,
    StoredArtifact,
)
from agentdash.changes.models import SessionChange, SessionSeq
from agentdash.controls.models import CallbackSetting
from agentdash.controls.services import callback_setting_set
from agentdash.core.models import AuditEntry
from agentdash.runs.models import Run
from agentdash.runs.services import (
    SessionBusy,
    run_enqueue,
    session_delete_idle,
    session_start,
)
from agentdash.spans.models import Span
from agentdash.spans.services import span_upsert
from runtime.sessions.base_session_service import SessionExistsError
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says
from tests.agentdash.stored import store_event

pytestmark = pytest.mark.django_db

CAPITAL = "capital_agent"
QUESTION = "What is the capital of\nFrance?"


@pytest.fixture(autouse=True)
def _capital(register: Callable[..., None]) -> None:
    """Only the capital demo is configured."""


def test_the_first_message_starts_the_session_and_its_run(
    alice: User, recorder: RecordingExecutor, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = session_start(agent_name=CAPITAL, text=QUESTION, requested_by=alice)
    session = AgentSession.objects.get()
    assert run.session_id == session.id and recorder.submitted == [run.pk]
    assert (session.app_name, session.owner, session.user_id) == (CAPITAL, alice, str(alice.pk))
    assert session.title == "What is the capital of France?"  # on one line
    assert session.first_message == "What is the capital of France?"
    assert run.message == {"role": "user", "parts": [{"text": QUESTION}]}  # as typed
    assert run.requested_by == alice and run.status == Run.Status.QUEUED
    audit = AuditEntry.objects.get(action="session.create")
    assert (audit.actor, audit.target_id) == (alice, session.id)


@pytest.mark.parametrize(
    ("agent", "text", "said"),
    [
        (CAPITAL, "   \n ", "empty"),
        (CAPITAL, "nul \x00 inside", "NUL"),
        ("no_such_agent", "hello", "no configured agent"),
    ],
)
def test_a_refused_first_message_leaves_nothing(
    alice: User, recorder: RecordingExecutor, agent: str, text: str, said: str
) -> None:
    with pytest.raises(ValidationError, match=said):
        session_start(agent_name=agent, text=text, requested_by=alice)
    assert not AgentSession.objects.exists() and not Run.objects.exists()
    assert not AuditEntry.objects.exists() and recorder.submitted == []


def test_only_a_signed_in_user_starts_a_chat(recorder: RecordingExecutor) -> None:
    with pytest.raises(ValidationError, match="signed-in"):
        session_start(agent_name=CAPITAL, text="hi", requested_by=AnonymousUser())
    assert not AgentSession.objects.exists()


def test_a_named_session_is_started_once(alice: User, recorder: RecordingExecutor) -> None:
    session_start(agent_name=CAPITAL, text="hi", requested_by=alice, session_id="chat-1")
    with pytest.raises(SessionExistsError):
        session_start(agent_name=CAPITAL, text="hi again", requested_by=alice, session_id="chat-1")
    assert Run.objects.count() == 1


def test_a_session_without_a_title_takes_it_from_its_first_chat_message(
    alice: User, recorder: RecordingExecutor
) -> None:
    """Sessions made elsewhere (the runtime's session service, older versions) get their
    title from the first message sent in them; a later message or a given title stays."""
    untitled = AgentSession.objects.create(
        id="made-elsewhere", app_name=CAPITAL, user_id="u", owner=alice, last_update_time=0
    )
    titled = AgentSession.objects.create(
        id="named", app_name=CAPITAL, user_id="u", title="Mine", last_update_time=0
    )
    for session in (untitled, titled):
        run_enqueue(session=session, agent_name=CAPITAL, message=says("First"), requested_by=alice)
        run_enqueue(session=session, agent_name=CAPITAL, message=says("Second"), requested_by=alice)
    untitled.refresh_from_db()
    titled.refresh_from_db()
    assert (untitled.title, untitled.first_message) == ("First", "First")
    assert (titled.title, titled.first_message) == ("Mine", "First")


def _a_full_session(owner: User) -> AgentSession:
    """A session with a row of every kind that belongs to it."""
    run = session_start(agent_name=CAPITAL, text="Paris?", requested_by=owner, session_id="full")
    session = run.session
    Run.objects.filter(pk=run.pk).update(status=Run.Status.SUCCEEDED)
    store_event(session.id, "Paris?", invocation_id=run.invocation_id)
    for n, status in enumerate((Span.Status.OK, Span.Status.ERROR)):
        span_upsert(
            trace_id="a" * 32, span_id=f"{n:016x}", name=f"step {n}", start_time=n,
            end_time=n + 1, status=status, session_id=session.id, run_id=run.pk,
        )  # fmt: skip
    callback_setting_set(
        agent_name=CAPITAL, callback_name="add_disclaimer", enabled=False,
        session_id=session.id, actor=owner,
    )  # fmt: skip
    own = {"app_name": CAPITAL, "user_id": session.user_id, "session_id": session.id}
    StoredArtifact.objects.create(**own, filename="a.txt", version=0, part={"text": "x"})
    MemoryRecord.objects.create(**own, timestamp=0, text="Paris", words=" paris ", content={})
    return session


def test_deleting_removes_every_row_of_the_session_and_is_audited(
    alice: User, bob: User, recorder: RecordingExecutor
) -> None:
    session = _a_full_session(alice)
    kept = session_start(agent_name=CAPITAL, text="Tokyo?", requested_by=bob).session
    AuditEntry.objects.all().delete()
    assert session_delete_idle(session_id=session.id, actor=alice, reason="tidying up")

    for model in (AgentSession, SessionEvent, Run, Span, SessionChange, SessionSeq,
                  CallbackSetting, StoredArtifact, MemoryRecord):  # fmt: skip
        mine = model.objects.filter(
            **({"pk": session.id} if model is AgentSession else {"session_id": session.id})
        )
        assert not mine.exists(), model.__name__
    assert AgentSession.objects.filter(pk=kept.id).exists()
    assert Run.objects.filter(session_id=kept.id).exists()

    audit = AuditEntry.objects.get()
    assert (audit.action, audit.actor, audit.target_id, audit.reason) == (
        "session.delete", alice, session.id, "tidying up",
    )  # fmt: skip
    assert audit.before["title"] == "Paris?" and audit.before["owner"] == "alice"
    rows = audit.before["rows"]
    assert rows["agent_sessions.AgentSession"] == 1 and rows["spans.Span"] == 2
    assert rows["runs.Run"] == 1 and rows["agent_sessions.SessionEvent"] == 1
    assert rows["agent_sessions.StoredArtifact"] == 1
    assert rows["agent_sessions.MemoryRecord"] == 1
    assert rows["controls.CallbackSetting"] == 1

    assert not session_delete_idle(session_id=session.id, actor=alice)  # gone: nothing to do
    assert AuditEntry.objects.count() == 1


@pytest.mark.parametrize("status", [Run.Status.QUEUED, Run.Status.RUNNING])
def test_a_session_with_a_run_in_progress_is_not_deleted(
    alice: User, recorder: RecordingExecutor, status: str
) -> None:
    run = session_start(agent_name=CAPITAL, text="Paris?", requested_by=alice)
    Run.objects.filter(pk=run.pk).update(status=status)
    with pytest.raises(SessionBusy, match="in progress"):
        session_delete_idle(session_id=run.session_id, actor=alice)
    assert AgentSession.objects.filter(pk=run.session_id).exists()
    assert not AuditEntry.objects.filter(action="session.delete").exists()
    Run.objects.filter(pk=run.pk).update(status=Run.Status.CANCELLED)
    assert session_delete_idle(session_id=run.session_id, actor=alice)
