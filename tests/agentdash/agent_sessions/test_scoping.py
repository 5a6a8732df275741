"""Where each key prefix is stored, checked on the database rows themselves."""

from __future__ import annotations

import json

import pytest

from agentdash.agent_sessions.models import AgentSession, AppState, SessionEvent, UserState
from agentdash.agent_sessions.session_service import DjangoSessionService
from runtime.events import Event, EventActions

pytestmark = pytest.mark.django_db(transaction=True)


def every_stored_json() -> str:
    rows = [
        *AgentSession.objects.values_list("state", flat=True),
        *SessionEvent.objects.values_list("data", "state_delta_keys"),
        *AppState.objects.values_list("state", "key_versions"),
        *UserState.objects.values_list("state", "key_versions"),
    ]
    return json.dumps(rows)


def test_temp_keys_are_never_stored_anywhere(service: DjangoSessionService) -> None:
    s = service.create_session(
        app_name="app", user_id="u", state={"temp:init": 1, "own": 1, "user:u": 1, "app:a": 1}
    )
    assert s.state == {"own": 1, "user:u": 1, "app:a": 1}
    original = Event(
        author="agent",
        actions=EventActions(state_delta={"temp:flag": True, "kept": 2, "user:u": 2}),
    )
    stored = service.append_event(s, original)

    assert s.state["temp:flag"] is True  # the rest of the invocation sees it
    assert stored.actions.state_delta == {"kept": 2, "user:u": 2}
    assert "temp:flag" in original.actions.state_delta  # the caller's event is not mutated
    assert "temp:" not in every_stored_json()
    event_row = SessionEvent.objects.get()
    assert event_row.state_delta_keys == ["kept", "user:u"]
    assert event_row.data["actions"]["state_delta"] == {"kept": 2, "user:u": 2}
    assert AgentSession.objects.get().state == {"own": 1, "kept": 2}

    # a later append refreshes the live state without dropping the temp: key
    service.append_event(s, Event(author="agent", actions=EventActions(state_delta={"n": 1})))
    assert s.state["temp:flag"] is True
    assert "temp:" not in every_stored_json()


def test_an_event_with_only_temp_keys_stores_an_empty_delta(
    service: DjangoSessionService,
) -> None:
    s = service.create_session(app_name="app", user_id="u")
    service.append_event(s, Event(author="a", actions=EventActions(state_delta={"temp:t": 1})))
    row = SessionEvent.objects.get()
    assert row.state_delta_keys == [] and row.data["actions"]["state_delta"] == {}
    assert not UserState.objects.exists() and not AppState.objects.exists()


def test_prefixes_scope_state_across_users_and_apps(service: DjangoSessionService) -> None:
    def write(session, **delta):
        service.append_event(session, Event(author="a", actions=EventActions(state_delta=delta)))

    alice = service.create_session(app_name="shop", user_id="alice")
    bob = service.create_session(app_name="shop", user_id="bob")
    alice_other_app = service.create_session(app_name="bank", user_id="alice")
    write(alice, **{"user:lang": "fr", "app:banner": "sale", "cart": ["tea"]})
    write(bob, **{"user:lang": "en", "cart": ["cake"]})
    write(alice_other_app, **{"user:lang": "de", "app:banner": "rates"})

    rows = {(r.app_name, r.user_id): r.state for r in UserState.objects.all()}
    assert rows == {
        ("shop", "alice"): {"user:lang": "fr"},
        ("shop", "bob"): {"user:lang": "en"},
        ("bank", "alice"): {"user:lang": "de"},
    }
    assert {r.app_name: r.state for r in AppState.objects.all()} == {
        "shop": {"app:banner": "sale"},
        "bank": {"app:banner": "rates"},
    }
    assert AgentSession.objects.get(pk=alice.id).state == {"cart": ["tea"]}

    def merged(app: str, user: str, sid: str) -> dict:
        got = service.get_session(app_name=app, user_id=user, session_id=sid)
        assert got is not None
        return got.state

    assert merged("shop", "bob", bob.id) == {
        "user:lang": "en",
        "app:banner": "sale",
        "cart": ["cake"],
    }
    second = service.create_session(app_name="shop", user_id="alice")
    assert second.state == {"user:lang": "fr", "app:banner": "sale"}
    listed = {s.id: s.state for s in service.list_sessions(app_name="shop").sessions}
    assert listed[bob.id]["user:lang"] == "en" and listed[second.id]["user:lang"] == "fr"
    assert merged("bank", "alice", alice_other_app.id) == {
        "user:lang": "de",
        "app:banner": "rates",
    }


def test_events_are_stored_whole_and_queryable(service: DjangoSessionService) -> None:
    from google.genai import types

    s = service.create_session(app_name="app", user_id="u")
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="hi"),
            types.Part.from_bytes(data=b"\x89PNG\x00\xff", mime_type="image/png"),
        ],
    )
    sent = Event(
        invocation_id="inv-1",
        author="agent",
        content=content,
        long_running_tool_ids={"call-1"},
        custom_metadata={"k": None},
        actions=EventActions(state_delta={"k": None}, artifact_delta={"f": 0}),
    )
    service.append_event(s, sent)
    got = service.get_session(app_name="app", user_id="u", session_id=s.id)
    assert got is not None
    assert got.events == [sent]
    assert got.events[0].content.parts[1].inline_data.data == b"\x89PNG\x00\xff"
    assert got.state == {"k": None}
    row = SessionEvent.objects.get()
    assert (row.event_id, row.invocation_id, row.author, row.seq) == (sent.id, "inv-1", "agent", 1)
