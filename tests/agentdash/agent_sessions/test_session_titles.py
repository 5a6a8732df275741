"""A session's first message and title: kept once, renamed by people (cleaned, capped,
audited)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agentdash.agent_sessions.models import AgentSession
from agentdash.agent_sessions.services import (
    session_create,
    session_first_message_record,
    session_title_update,
)
from agentdash.core.models import AuditEntry

pytestmark = pytest.mark.django_db


def test_the_first_message_with_text_is_kept_once() -> None:
    session = session_create(app_name="app", user_id="u", session_id="s")
    assert not session_first_message_record(session_id="s", text="  \n ")  # no text: not it
    assert session_first_message_record(session_id="s", text="Hello\nthere")
    assert not session_first_message_record(session_id="s", text="Second")
    session.refresh_from_db()
    assert (session.first_message, session.title) == ("Hello there", "Hello there")


def test_renaming_cleans_the_title_and_audits_it(alice: User) -> None:
    session = session_create(app_name="app", user_id="u", owner=alice, title="Old")
    stored = session_title_update(session_id=session.id, title=" New\ttitle\n", actor=alice)
    assert stored == "New title"
    session.refresh_from_db()
    assert session.title == "New title"
    audit = AuditEntry.objects.get(action="session.rename")
    assert (audit.actor, audit.target_id, audit.before, audit.after) == (
        alice, session.id, {"title": "Old"}, {"title": "New title"},
    )  # fmt: skip
    session_title_update(session_id=session.id, title="New title", actor=alice)
    assert AuditEntry.objects.filter(action="session.rename").count() == 1  # nothing changed


@pytest.mark.parametrize("title", ["", "x" * 121, "a\x00b"])
def test_a_title_that_cannot_be_one_changes_nothing(alice: User, title: str) -> None:
    session = session_create(app_name="app", user_id="u", owner=alice, title="Kept")
    with pytest.raises(ValueError):
        session_title_update(session_id=session.id, title=title, actor=alice)
    session.refresh_from_db()
    assert session.title == "Kept" and not AuditEntry.objects.filter(action="session.rename")


def test_renaming_a_missing_session_raises(alice: User) -> None:
    with pytest.raises(AgentSession.DoesNotExist):
        session_title_update(session_id="nope", title="x", actor=alice)
