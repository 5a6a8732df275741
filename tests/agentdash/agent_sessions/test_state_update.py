"""Operator edits of state: versioned, audited, refused on a real conflict, never lossy."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection

from agentdash.agent_sessions.errors import StateConflictError
from agentdash.agent_sessions.models import AgentSession, SessionEvent, UserState
from agentdash.agent_sessions.selectors import session_state_view
from agentdash.agent_sessions.services import session_state_update
from agentdash.agent_sessions.session_service import DjangoSessionService
from agentdash.core.models import AuditEntry
from runtime.events import Event, EventActions
from runtime.sessions import SessionNotFoundError

pytestmark = pytest.mark.django_db(transaction=True)


def agent_writes(service: DjangoSessionService, live: Any, **delta: Any) -> None:
    service.append_event(live, Event(author="agent", actions=EventActions(state_delta=delta)))


def edit(session_id: str, delta: dict[str, Any], version: int, actor: Any, **kw: Any) -> Any:
    kw.setdefault("reason", "fixing a typo")
    return session_state_update(
        session_id=session_id, delta=delta, expected_version=version, actor=actor, **kw
    )


def test_edit_of_another_key_after_an_agent_write_keeps_both(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u", state={"b": "old"})
    seen = session_state_view(session_id=s.id)
    agent_writes(service, s, a=1)  # lands after the operator loaded the page

    result = edit(s.id, {"b": "new"}, seen.version, operator, reason="customer asked")

    assert result.version == 2 and result.seq == 2
    assert result.state == {"a": 1, "b": "new"}
    assert session_state_view(session_id=s.id).state == {"a": 1, "b": "new"}
    stored = SessionEvent.objects.get(session_id=s.id, seq=2)
    assert (stored.author, stored.version, stored.state_delta_keys) == ("operator", 2, ["b"])
    operator_event = Event.model_validate(stored.data)
    assert operator_event.content is None
    assert operator_event.actions.state_delta == {"b": "new"}
    [audit] = AuditEntry.objects.all()
    assert (audit.action, audit.target_type, audit.target_id) == (
        "session.state.update",
        "session",
        s.id,
    )
    assert (audit.before, audit.after, audit.reason) == (
        {"b": "old"},
        {"b": "new"},
        "customer asked",
    )
    assert audit.actor == operator and audit.actor_label == "olivia"


def test_edit_of_the_same_key_conflicts_and_writes_nothing(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    agent_writes(service, s, x=1)
    seen = session_state_view(session_id=s.id)  # version 1
    agent_writes(service, s, other=True)
    agent_writes(service, s, x="y")  # version 3

    with pytest.raises(StateConflictError) as caught:
        edit(s.id, {"x": "mine", "z": 1}, seen.version, operator)

    assert str(caught.value) == "key 'x' changed since version 1: it is now 'y' (version 3)"
    conflict = caught.value.conflicts["x"]
    assert (conflict.current_value, conflict.current_version) == ("y", 3)
    assert (conflict.seen_version, conflict.changed_at_version) == (1, 3)
    assert list(caught.value.conflicts) == ["x"]
    row = AgentSession.objects.get(pk=s.id)
    assert (row.version, row.event_count, row.state) == (3, 3, {"x": "y", "other": True})
    assert not SessionEvent.objects.filter(author="operator").exists()
    assert not AuditEntry.objects.exists()


def test_an_edit_based_on_the_current_version_always_applies(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    agent_writes(service, s, x=1)
    result = edit(s.id, {"x": 2}, 1, operator)
    assert result.state == {"x": 2} and result.version == 2


def test_edit_is_visible_to_the_agents_live_session_at_its_next_append(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    live = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert live is not None
    live.state["temp:scratch"] = "kept"
    edit(s.id, {"note": "from operator", "user:tier": "gold"}, 0, operator)
    assert "note" not in live.state  # a snapshot until the agent's next write
    agent_writes(service, live, step=1)
    assert live.state == {
        "note": "from operator",
        "user:tier": "gold",
        "step": 1,
        "temp:scratch": "kept",
    }


def test_operator_racing_an_agent_on_another_key_keeps_both(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    rounds = 12
    errors: list[BaseException] = []

    def agent() -> None:
        live = service.get_session(app_name="app", user_id="u", session_id=s.id)
        assert live is not None
        for i in range(rounds):
            agent_writes(service, live, **{f"a{i}": i})

    def operator_edits() -> None:
        for i in range(rounds):
            seen = session_state_view(session_id=s.id)
            edit(s.id, {f"o{i}": i}, seen.version, operator)

    def guarded(target: Any) -> None:
        try:
            target()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=guarded, args=(t,)) for t in (agent, operator_edits)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    state = session_state_view(session_id=s.id).state
    assert state == {**{f"a{i}": i for i in range(rounds)}, **{f"o{i}": i for i in range(rounds)}}
    assert AuditEntry.objects.count() == rounds


def test_operator_racing_an_agent_on_the_same_key_never_loses_silently(
    service: DjangoSessionService, operator: Any
) -> None:
    """Whoever commits first, an edit is either applied and audited, or refused and invisible:
    never applied on top of an agent write the operator did not see."""
    s = service.create_session(app_name="app", user_id="u", state={"x": 0})
    outcomes: list[str] = []
    start = threading.Barrier(2)

    def agent() -> None:
        try:
            start.wait()
            agent_writes(service, s, x="agent")
        finally:
            connection.close()

    t = threading.Thread(target=agent)
    t.start()
    start.wait()
    try:
        edit(s.id, {"x": "operator"}, 0, operator)
        outcomes.append("applied")
    except StateConflictError as exc:
        outcomes.append("refused")
        assert exc.conflicts["x"].current_value == "agent"
    t.join(timeout=60)

    events = list(SessionEvent.objects.filter(session_id=s.id).order_by("seq"))
    if outcomes == ["applied"]:  # the operator committed first: both events, agent last
        assert [e.author for e in events] == ["operator", "agent"]
        assert AuditEntry.objects.count() == 1
    else:
        assert [e.author for e in events] == ["agent"]
        assert not AuditEntry.objects.exists()


def test_shared_key_changed_from_another_session_conflicts_when_its_version_is_given(
    service: DjangoSessionService, operator: Any
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    other = service.create_session(app_name="app", user_id="u")
    seen = session_state_view(session_id=s.id)
    agent_writes(service, other, **{"user:lang": "fr"})

    with pytest.raises(StateConflictError, match="user state version 0: it is now 'fr'"):
        edit(
            s.id,
            {"user:lang": "de"},
            seen.version,
            operator,
            expected_app_version=seen.app_version,
            expected_user_version=seen.user_version,
        )
    assert not AuditEntry.objects.exists()
    assert UserState.objects.get().state == {"user:lang": "fr"}

    fresh = session_state_view(session_id=s.id)
    edit(s.id, {"user:lang": "de"}, fresh.version, operator, expected_user_version=1)
    row = UserState.objects.get()
    assert (row.state, row.version, row.key_versions) == ({"user:lang": "de"}, 2, {"user:lang": 2})


@pytest.mark.parametrize(
    ("delta", "reason", "message"),
    [
        ({"temp:x": 1}, "why", "temp: keys .* never stored"),
        ({"x": object()}, "why", "not JSON-serializable"),
        ({"x": float("nan")}, "why", "not JSON-serializable"),
        ({"x": {1, 2}}, "why", "not JSON-serializable"),
        ({}, "why", "empty"),
        ({"": 1}, "why", "non-empty strings"),
        ({"x": 1}, "   ", "reason is required"),
        ({"x": 1}, "", "reason is required"),
    ],
)
def test_bad_edits_are_refused_and_write_nothing(
    service: DjangoSessionService, operator: Any, delta: Any, reason: str, message: str
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    with pytest.raises(ValueError, match=message):
        edit(s.id, delta, 0, operator, reason=reason)
    assert AgentSession.objects.get(pk=s.id).version == 0
    assert not SessionEvent.objects.exists() and not AuditEntry.objects.exists()


def test_unknown_session_and_impossible_version_are_refused(
    service: DjangoSessionService, operator: Any
) -> None:
    with pytest.raises(SessionNotFoundError):
        edit("nope", {"x": 1}, 0, operator)
    s = service.create_session(app_name="app", user_id="u")
    with pytest.raises(ValueError, match="ahead of session"):
        edit(s.id, {"x": 1}, 5, operator)
    assert not AuditEntry.objects.exists() and not SessionEvent.objects.exists()
