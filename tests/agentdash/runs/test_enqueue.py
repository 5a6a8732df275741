"""Queueing a run: validation, one transaction with its change seq, the executor after
commit; and choosing an executor."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.checks import Error
from django.core.exceptions import ImproperlyConfigured, ValidationError
from google.genai import types

from agentdash.agent_sessions.models import AgentSession
from agentdash.changes.models import SessionChange
from agentdash.runs.checks import check_executor, check_run_timing
from agentdash.runs.executors import CeleryExecutor, InlineExecutor, executor_build
from agentdash.runs.models import Run
from agentdash.runs.services import run_enqueue
from tests.agentdash.recording_executor import RecordingExecutor
from tests.agentdash.runs.conftest import says

pytestmark = pytest.mark.django_db

CAPITAL = "capital_agent"


@pytest.fixture
def session(register: Callable[..., None]) -> AgentSession:
    return AgentSession.objects.create(
        id="s-cap", app_name=CAPITAL, user_id="u", last_update_time=0
    )


def test_a_run_is_queued_with_its_change_and_submitted_after_commit(
    session: AgentSession,
    recorder: RecordingExecutor,
    alice: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        run = run_enqueue(
            session=session,
            agent_name=CAPITAL,
            message=says("Capital of France?"),
            requested_by=alice,
        )
        assert recorder.submitted == []  # not before the transaction commits
    assert recorder.submitted == [run.pk]
    stored = Run.objects.get(pk=run.pk)
    assert stored.status == Run.Status.QUEUED and stored.attempt == 0
    assert re.fullmatch(r"e-[0-9a-f]{32}", stored.invocation_id)
    assert stored.message == {"role": "user", "parts": [{"text": "Capital of France?"}]}
    assert stored.requested_by == alice and stored.queued_at is not None
    change = SessionChange.objects.get(session=session)
    assert (change.seq, change.kind, change.ref) == (1, "run", str(run.pk))


def test_anonymous_requesters_are_not_stored(
    session: AgentSession, recorder: RecordingExecutor
) -> None:
    from django.contrib.auth.models import AnonymousUser

    run = run_enqueue(
        session=session, agent_name=CAPITAL, message=says("hi"), requested_by=AnonymousUser()
    )
    assert run.requested_by is None


@pytest.mark.parametrize(
    ("agent_name", "app_name", "message", "field", "text"),
    [
        ("nobody", CAPITAL, says("hi"), "agent_name", "no configured agent is named 'nobody'"),
        (CAPITAL, "other_app", says("hi"), "session", "belongs to app 'other_app'"),
        (CAPITAL, CAPITAL, says("   "), "message", "the message is empty"),
        (CAPITAL, CAPITAL, types.Content(role="user", parts=[]), "message", "empty"),
        (CAPITAL, CAPITAL, "just a string", "message", "must be a google.genai"),
        (
            CAPITAL,
            CAPITAL,
            types.Content(role="model", parts=[types.Part(text="hi")]),
            "message",
            "role must be 'user'",
        ),
    ],
)
def test_invalid_requests_are_refused_and_write_nothing(
    register: Callable[..., None],
    recorder: RecordingExecutor,
    agent_name: str,
    app_name: str,
    message: Any,
    field: str,
    text: str,
) -> None:
    session = AgentSession.objects.create(
        id="s", app_name=app_name, user_id="u", last_update_time=0
    )
    with pytest.raises(ValidationError) as excinfo:
        run_enqueue(session=session, agent_name=agent_name, message=message, requested_by=None)
    assert text in " ".join(excinfo.value.message_dict[field])
    assert not Run.objects.exists() and not SessionChange.objects.exists()
    assert recorder.submitted == []


def test_a_failing_submit_leaves_the_run_queued_for_the_reaper(
    session: AgentSession,
    recorder: RecordingExecutor,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(run_id: int) -> None:
        raise ConnectionError("broker down")

    monkeypatch.setattr(recorder, "submit", broken)
    with django_capture_on_commit_callbacks(execute=True):
        run = run_enqueue(
            session=session, agent_name=CAPITAL, message=says("hi"), requested_by=None
        )
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED
    assert f"could not submit run {run.pk}" in caplog.text


def test_executors_by_name(settings: Any) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "INLINE_CONCURRENCY": 3}
    inline = executor_build("inline")
    assert isinstance(inline, InlineExecutor) and inline.concurrency == 3
    assert isinstance(executor_build("celery"), CeleryExecutor)
    with pytest.raises(ImproperlyConfigured, match="'threads'; use one of 'inline', 'celery'"):
        executor_build("threads")


def test_system_check_names_a_bad_executor(settings: Any) -> None:
    assert check_executor(None) == []
    settings.AGENTDASH = {**settings.AGENTDASH, "EXECUTOR": "threads"}
    errors = check_executor(None)
    assert [e.id for e in errors] == ["agentdash.E020"]
    assert isinstance(errors[0], Error) and "'threads'" in errors[0].msg


def test_system_check_wants_a_broker_for_celery(settings: Any) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "EXECUTOR": "celery"}
    settings.CELERY_BROKER_URL = ""
    assert [e.id for e in check_executor(None)] == ["agentdash.E021"]
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:63799/0"
    assert check_executor(None) == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("RUN_STALE_AFTER_S", None),
        ("RUN_HEARTBEAT_S", 0),
        ("REAPER_INTERVAL_S", "5"),
        ("RUN_REQUEUE_AFTER_S", -1.0),
        ("RUN_MAX_ATTEMPTS", 0),
        ("RUN_MAX_ATTEMPTS", True),
    ],
)
def test_system_check_wants_positive_run_timings(settings: Any, key: str, value: Any) -> None:
    assert check_run_timing(None) == []
    settings.AGENTDASH = {**settings.AGENTDASH, key: value}
    (error,) = check_run_timing(None)
    assert error.id == "agentdash.E023" and repr(key) in error.msg


SUBMIT_WITHOUT_THE_APP = """
import django
django.setup()
from django.core.exceptions import ImproperlyConfigured
from agentdash.runs.executors import CeleryExecutor
try:
    CeleryExecutor().submit(1)
except ImproperlyConfigured as exc:
    print("refused:", exc)
import agentdash.celery_app
from celery import current_app
print("loaded:", current_app.main)
"""


@pytest.mark.slow  # a process (or twenty) of its own: seconds
def test_the_celery_executor_refuses_to_send_through_an_app_that_is_not_the_projects() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "agentdash.settings"}
    done = subprocess.run(
        [sys.executable, "-c", SUBMIT_WITHOUT_THE_APP],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "refused: the Celery app is not loaded in this process" in done.stdout
    assert "loaded: agentdash" in done.stdout


# ── A message sent again with its client id ─────────────────────────────────────────────────
def _send(session: AgentSession, alice: User, text: str, client_id: str) -> Run:
    return run_enqueue(
        session=session,
        agent_name=CAPITAL,
        message=says(text),
        requested_by=alice,
        client_id=client_id,
    )


def test_a_message_sent_again_with_its_client_id_is_the_run_queued_the_first_time(
    session: AgentSession,
    recorder: RecordingExecutor,
    alice: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        first = _send(session, alice, "Capital of France?", "c-1")
        again = _send(session, alice, "Capital of France?", "c-1")
        other = _send(session, alice, "Capital of France?", "c-2")  # another message
    assert again.pk == first.pk and other.pk != first.pk
    assert again.invocation_id == first.invocation_id
    assert recorder.submitted == [first.pk, other.pk]  # queued once each
    assert Run.objects.filter(session=session).count() == 2
    assert SessionChange.objects.filter(session=session, kind="run").count() == 2
    assert Run.objects.get(pk=first.pk).client_id == "c-1"


def test_a_client_id_is_a_messages_only_in_its_own_session(
    session: AgentSession, recorder: RecordingExecutor, alice: User
) -> None:
    elsewhere = AgentSession.objects.create(
        id="s-cap-2", app_name=CAPITAL, user_id="u", last_update_time=0
    )
    here = _send(session, alice, "Capital of France?", "c-1")
    there = _send(elsewhere, alice, "Capital of France?", "c-1")
    assert here.pk != there.pk and there.session_id == "s-cap-2"


def test_a_client_id_sent_with_another_message_is_refused_and_queues_nothing(
    session: AgentSession, recorder: RecordingExecutor, alice: User
) -> None:
    first = _send(session, alice, "Capital of France?", "c-1")
    with pytest.raises(ValidationError) as raised:
        _send(session, alice, "Capital of Spain?", "c-1")
    assert "client_id" in raised.value.message_dict
    assert list(Run.objects.filter(session=session).values_list("pk", flat=True)) == [first.pk]


def test_a_message_sent_twice_at_once_is_queued_once(
    session: AgentSession,
    recorder: RecordingExecutor,
    alice: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The second copy looked before the first one's transaction committed (both found
    nothing): its insert meets the first one's row, and it answers with that run."""
    from agentdash.runs import services

    first = _send(session, alice, "Capital of France?", "c-1")
    looked = services._run_sent_before
    calls: list[str] = []

    def too_early(*args: Any) -> Run | None:
        calls.append("looked")
        return None if len(calls) == 1 else looked(*args)

    monkeypatch.setattr(services, "_run_sent_before", too_early)
    again = _send(session, alice, "Capital of France?", "c-1")
    assert again.pk == first.pk and calls == ["looked", "looked"]
    assert Run.objects.filter(session=session).count() == 1
    assert SessionChange.objects.filter(session=session, kind="run").count() == 1
