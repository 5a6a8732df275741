"""Forks: a new session holding exactly the parent's first k events, its state as of event
k (session keys only: app and user state stay shared), an edited state as one operator
event, the link both ways, the change log and the audit trail; refusals store nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from google.genai import types

from agentdash.agent_sessions._state_store import event_append
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.forks import session_fork, session_state_at
from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.selectors import (
    session_list_for_user,
    session_snapshot,
    session_state_view,
)
from agentdash.agent_sessions.services import session_create
from agentdash.changes.models import SessionChange
from agentdash.core.models import AuditEntry
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db


def _append(session_id: str, author: str, text: str, **delta: Any) -> Event:
    event = Event(
        author=author,
        invocation_id=f"inv-{text}",
        content=types.Content(
            role="user" if author == "user" else "model", parts=[types.Part(text=text)]
        ),
        actions=EventActions(state_delta=dict(delta)),
    )
    event_append(session_id=session_id, event_data=event_serialize(event))
    return event


@pytest.fixture
def parent(alice: User) -> AgentSession:
    """Alice's session, started with ``city=Paris`` (and an app key), then five events."""
    session = session_create(
        app_name="app",
        user_id=str(alice.pk),
        owner=alice,
        title="Trip planning",
        state={"city": "Paris", "app:currency": "EUR"},
    )
    _append(session.pk, "user", "hello", step=1)
    _append(session.pk, "agent", "hi", step=2, **{"user:lang": "fr"})
    _append(session.pk, "user", "go to Rome", city="Rome", step=3)
    _append(session.pk, "agent", "ok", step=4, mood="happy")
    _append(session.pk, "user", "thanks", step=5, city="Oslo")
    session.refresh_from_db()
    return session


def _event_at(session: AgentSession, seq: int) -> SessionEvent:
    return SessionEvent.objects.get(session=session, seq=seq)


def test_a_fork_at_event_k_has_exactly_the_parents_first_k_events_and_its_state(
    parent: AgentSession, alice: User
) -> None:
    point = _event_at(parent, 3)
    fork = session_fork(parent=parent, event_id=point.event_id, actor=alice)

    copied = list(SessionEvent.objects.filter(session=fork).order_by("seq"))
    original = list(SessionEvent.objects.filter(session=parent, seq__lte=3).order_by("seq"))
    fields = ("seq", "event_id", "invocation_id", "author", "timestamp", "data", "html")
    assert [[getattr(e, f) for f in fields] for e in copied] == [
        [getattr(e, f) for f in fields] for e in original
    ]
    assert fork.pk != parent.pk and (fork.event_count, fork.version) == (3, 3)
    # Its own keys as of event 3; the shared ones are the parent's (shared rows).
    assert fork.state == {"city": "Rome", "step": 3}
    assert session_state_view(session_id=fork.pk).state == {
        "city": "Rome",
        "step": 3,
        "app:currency": "EUR",
        "user:lang": "fr",
    }
    snapshot = session_snapshot(session_id=fork.pk, app_name="app", user_id=str(alice.pk))
    assert snapshot is not None and [e.id for e in snapshot.events] == [
        e.event_id for e in original
    ]
    # Linked both ways; owned by who forked; the parent unchanged.
    assert (fork.parent_id, fork.forked_from_event, fork.forked_from_seq) == (
        parent.pk,
        point.event_id,
        3,
    )
    assert list(parent.forks.all()) == [fork]
    assert fork.owner == alice and fork.app_name == parent.app_name
    assert fork.user_id == parent.user_id
    assert fork.first_message == "hello" and "Trip planning" in fork.title
    parent.refresh_from_db()
    assert parent.event_count == 5 and parent.state["city"] == "Oslo"
    # The copied events are in its change log (a client catches up on them), and it is
    # listed like any session.
    changes = SessionChange.objects.filter(session=fork).order_by("seq")
    assert [(c.seq, c.kind, c.ref) for c in changes] == [
        (i, "event", e.event_id) for i, e in enumerate(original, start=1)
    ]
    assert fork in session_list_for_user(user=alice)
    entry = AuditEntry.objects.get(action="session.fork")
    assert entry.target_id == fork.pk and entry.actor == alice
    assert entry.before == {"parent": parent.pk, "event_id": point.event_id, "seq": 3}


@pytest.mark.parametrize("k", [1, 2, 4, 5])
def test_the_state_as_of_each_event_replays_the_deltas_over_the_initial_keys(
    parent: AgentSession, alice: User, k: int
) -> None:
    expected = {
        1: {"city": "Paris", "step": 1},
        2: {"city": "Paris", "step": 2},
        4: {"city": "Rome", "step": 4, "mood": "happy"},
        5: {"city": "Oslo", "step": 5, "mood": "happy"},
    }[k]
    assert session_state_at(session=parent, seq=k) == expected
    fork = session_fork(parent=parent, event_id=_event_at(parent, k).event_id, actor=alice)
    assert fork.state == expected and fork.event_count == k
    # A fork of the fork, at its last event, is the same again.
    again = session_fork(parent=fork, event_id=_event_at(fork, k).event_id, actor=alice)
    assert again.state == expected and again.parent == fork


def test_sessions_stored_before_their_initial_state_was_kept_start_from_keys_no_event_set(
    alice: User,
) -> None:
    legacy = session_of(alice, "legacy")
    AgentSession.objects.filter(pk="legacy").update(state={"city": "Paris", "kept": 1})
    _append("legacy", "user", "a", step=1)
    _append("legacy", "user", "b", city="Rome")
    legacy.refresh_from_db()
    assert legacy.initial_state is None
    assert session_state_at(session=legacy, seq=1) == {"kept": 1, "step": 1}


def test_an_edited_state_is_merged_as_one_operator_event(
    parent: AgentSession, operator_user: User
) -> None:
    point = _event_at(parent, 3)
    fork = session_fork(
        parent=parent,
        event_id=point.event_id,
        actor=operator_user,
        state={"city": "Lima", "step": 3, "budget": {"max": 900}},
    )
    assert fork.state == {"city": "Lima", "step": 3, "budget": {"max": 900}}
    assert fork.owner == operator_user and fork.event_count == 4
    edit = SessionEvent.objects.get(session=fork, seq=4)
    assert edit.author == "operator"
    # Only what changed: step was already 3.
    assert edit.data["actions"]["state_delta"] == {"city": "Lima", "budget": {"max": 900}}
    assert AuditEntry.objects.filter(action="session.state.update", target_id=fork.pk).exists()
    assert AuditEntry.objects.get(action="session.fork").after["state_edit"] == {
        "city": "Lima",
        "budget": {"max": 900},
    }
    # An edit that changes nothing adds no event.
    same = session_fork(
        parent=parent, event_id=point.event_id, actor=operator_user, state={"city": "Rome"}
    )
    assert same.event_count == 3


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("state", "says"),
    [
        ([1, 2], "must be a JSON object"),
        ("Paris", "must be a JSON object"),
        ({"app:currency": "USD"}, "app-scoped"),
        ({"user:lang": "en"}, "user-scoped"),
        ({"temp:x": 1}, "temp: keys are never stored"),
        ({"": 1}, "non-empty strings"),
        ({"city": "a\x00b"}, "NUL"),
        ({"city": "a\ud800b"}, "surrogate"),
        ({"city": _deep(100)}, "deeper"),
        ({"n": float("nan")}, "not finite"),
    ],
)
def test_a_bad_state_is_refused_and_nothing_is_stored(
    parent: AgentSession, operator_user: User, state: Any, says: str
) -> None:
    before = AgentSession.objects.count()
    with pytest.raises(ValidationError, match=says):
        session_fork(
            parent=parent,
            event_id=_event_at(parent, 2).event_id,
            actor=operator_user,
            state=state,
        )
    assert AgentSession.objects.count() == before
    assert not AuditEntry.objects.filter(action="session.fork").exists()


def test_an_unknown_event_is_refused(parent: AgentSession, alice: User) -> None:
    other = session_of(alice, "other")
    _append(other.pk, "user", "elsewhere")
    elsewhere = _event_at(other, 1).event_id
    for event_id in ("nope", "", elsewhere):
        with pytest.raises(ValidationError, match="no event with that id"):
            session_fork(parent=parent, event_id=event_id, actor=alice)
    assert not AgentSession.objects.filter(parent=parent).exists()


def test_only_the_owner_or_an_operator_may_fork_and_only_editors_edit_state(
    parent: AgentSession, alice: User, bob: User, operator_user: User
) -> None:
    event_id = _event_at(parent, 2).event_id
    with pytest.raises(PermissionDenied):
        session_fork(parent=parent, event_id=event_id, actor=bob)
    with pytest.raises(PermissionDenied, match="edited state is not allowed"):
        session_fork(parent=parent, event_id=event_id, actor=alice, state={"city": "Rome"})
    assert not AgentSession.objects.filter(parent=parent).exists()
    fork = session_fork(parent=parent, event_id=event_id, actor=operator_user)
    assert fork.owner == operator_user
    assert fork not in session_list_for_user(user=alice)  # the operator's, not alice's


def test_deleting_the_parent_keeps_its_forks(parent: AgentSession, alice: User) -> None:
    fork = session_fork(parent=parent, event_id=_event_at(parent, 2).event_id, actor=alice)
    parent.delete()
    fork.refresh_from_db()
    assert fork.parent is None and fork.forked_from_seq == 2 and fork.event_count == 2
