"""Rows as change items: every stored event gets a seq with it, texts are sanitized, big
payloads are cut, and a page never runs past its limit."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.agent_sessions.services import session_state_update
from agentdash.timeline.items import MAX_PAYLOAD_CHARS, event_item, items_after
from agentdash.timeline.models import SessionChange
from runtime.events.event import Event
from tests.agentdash.timeline.conftest import store_event

pytestmark = pytest.mark.django_db

MakeSession = Callable[[str], AgentSession]


def test_every_stored_event_and_operator_edit_gets_the_next_seq(
    make_session: MakeSession, operator_user: User
) -> None:
    make_session("s1")
    first = store_event("s1", "hello")
    edit = session_state_update(
        session_id="s1", delta={"k": 1}, expected_version=1, actor=operator_user, reason="why"
    )
    changes = SessionChange.objects.filter(session_id="s1").order_by("seq")
    assert [(c.seq, c.kind, c.ref) for c in changes] == [
        (1, "event", first.id),
        (2, "event", edit.event_id),
    ]
    items = items_after(session_id="s1", after_seq=0, limit=10)
    assert [i["data"]["author"] for i in items] == ["user", "operator"]
    assert items[1]["data"]["reason"] == "why"
    assert [i["seq"] for i in items_after(session_id="s1", after_seq=0, limit=1)] == [1]
    assert items_after(session_id="s1", after_seq=2, limit=10) == []


def test_a_refused_edit_records_no_change(make_session: MakeSession) -> None:
    make_session("s1")
    with pytest.raises(ValueError):
        session_state_update(
            session_id="s1", delta={"temp:x": 1}, expected_version=0, actor=None, reason="r"
        )
    assert not SessionChange.objects.exists()


def test_event_text_is_sanitized_and_big_payloads_are_cut(make_session: MakeSession) -> None:
    make_session("s1")
    store_event(
        "s1",
        '<script>alert(1)</script><a href="javascript:x">y</a> [ok](https://example.com)',
    )
    big = {"blob": "x" * (MAX_PAYLOAD_CHARS + 1)}
    response = types.FunctionResponse(id="c1", name="dump", response=big)
    event = Event(
        author="bot",
        content=types.Content(role="user", parts=[types.Part(function_response=response)]),
    )
    from agentdash.agent_sessions._state_store import event_append, event_serialize

    event_append(session_id="s1", event_data=event_serialize(event))
    first, second = SessionEvent.objects.order_by("seq")
    html = event_item(first)["html"]
    assert html.startswith("<p>&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=")  # as text
    assert "<script" not in html and '<a href="javascript' not in html
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">ok</a>' in html
    cut = event_item(second)["function_responses"][0]["response"]
    assert cut["truncated"] is True and len(cut["json"]) == MAX_PAYLOAD_CHARS
    assert event_item(second)["final"] is False
