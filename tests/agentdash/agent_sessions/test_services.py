"""session_create / session_delete: prefixes, ids, owners, audit."""

from __future__ import annotations

from typing import Any

import pytest

from agentdash.agent_sessions.models import AgentSession, AppState, SessionEvent, UserState
from agentdash.agent_sessions.services import session_create, session_delete
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.models import AuditEntry
from runtime.events import Event
from runtime.sessions import SessionExistsError

pytestmark = pytest.mark.django_db


def test_create_stores_by_prefix_and_audits_only_with_an_actor(operator: Any) -> None:
    row = session_create(
        app_name="app",
        user_id="u",
        state={"own": (1, 2), "user:u": 1, "app:a": 1, "temp:t": 1},
        session_id="  s-1 ",
        owner=operator,
        title="Refund chat",
        actor=operator,
    )
    assert (row.id, row.owner, row.title, row.version) == ("s-1", operator, "Refund chat", 0)
    assert AgentSession.objects.get(pk="s-1").state == {"own": [1, 2]}
    assert UserState.objects.get().state == {"user:u": 1}
    assert AppState.objects.get().state == {"app:a": 1}
    [audit] = AuditEntry.objects.all()
    assert (audit.action, audit.target_id) == ("session.create", "s-1")

    session_create(app_name="app", user_id="u")  # the runtime's own creations: no audit
    assert AuditEntry.objects.count() == 1


def test_create_refuses_taken_and_overlong_ids() -> None:
    session_create(app_name="app", user_id="u", session_id="taken")
    with pytest.raises(SessionExistsError):
        session_create(app_name="other", user_id="v", session_id="taken")
    with pytest.raises(ValueError, match="longer than 128"):
        session_create(app_name="app", user_id="u", session_id="x" * 129)


def test_delete_removes_events_audits_and_respects_app_and_user(
    operator: Any, service: DjangoSessionService
) -> None:
    s = service.create_session(app_name="app", user_id="u", state={"k": 1})
    service.append_event(s, Event(author="agent"))
    assert not session_delete(session_id=s.id, app_name="other")
    assert not session_delete(session_id=s.id, user_id="someone else")
    assert session_delete(session_id=s.id, actor=operator, reason="GDPR request")
    assert not AgentSession.objects.exists() and not SessionEvent.objects.exists()
    [audit] = AuditEntry.objects.all()
    assert (audit.action, audit.reason, audit.before["state"]) == (
        "session.delete",
        "GDPR request",
        {"k": 1},
    )
    assert not session_delete(session_id=s.id, actor=operator)  # already gone: no new row
    assert AuditEntry.objects.count() == 1
