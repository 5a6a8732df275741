"""Reads: who may see a session, events after a seq, the state view."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from agentdash.agent_sessions.selectors import (
    event_from_row,
    session_events,
    session_get_for_user,
    session_state_view,
)
from agentdash.agent_sessions.services import session_create
from agentdash.agent_sessions.session_service import DjangoSessionService
from runtime.events import Event, EventActions
from runtime.sessions import SessionNotFoundError

pytestmark = pytest.mark.django_db


def test_session_get_for_user(django_user_model: Any, operator: Any) -> None:
    alice = django_user_model.objects.create_user("alice")
    bob = django_user_model.objects.create_user("bob")
    mine = session_create(app_name="app", user_id="alice", owner=alice)
    assert session_get_for_user(user=alice, session_id=mine.id) == mine
    assert session_get_for_user(user=operator, session_id=mine.id) == mine
    with pytest.raises(Http404):
        session_get_for_user(user=bob, session_id=mine.id)
    with pytest.raises(Http404):
        session_get_for_user(user=alice, session_id="missing")
    with pytest.raises(PermissionDenied):
        session_get_for_user(user=AnonymousUser(), session_id=mine.id)


def test_session_events_filters_and_orders(service: DjangoSessionService) -> None:
    s = service.create_session(app_name="app", user_id="u")
    for i, (inv, author) in enumerate(
        [("i1", "user"), ("i1", "bot"), ("i2", "user"), ("i2", "bot")]
    ):
        service.append_event(
            s, Event(invocation_id=inv, author=author, actions=EventActions(state_delta={"n": i}))
        )
    assert [e.seq for e in session_events(session_id=s.id)] == [1, 2, 3, 4]
    assert [e.seq for e in session_events(session_id=s.id, after_seq=2)] == [3, 4]
    assert [e.seq for e in session_events(session_id=s.id, invocation_id="i2")] == [3, 4]
    assert [e.seq for e in session_events(session_id=s.id, author="bot")] == [2, 4]
    first = event_from_row(session_events(session_id=s.id).first())
    assert first == s.events[0]


def test_session_state_view(service: DjangoSessionService) -> None:
    s = service.create_session(
        app_name="app", user_id="u", state={"own": 1, "user:u": 2, "app:a": 3}
    )
    view = session_state_view(session_id=s.id)
    assert view.state == {"own": 1, "user:u": 2, "app:a": 3}
    assert (view.version, view.user_version, view.app_version) == (0, 1, 1)
    with pytest.raises(SessionNotFoundError):
        session_state_view(session_id="missing")
