"""Stored sessions and events for the tests, written through the real write paths."""

from __future__ import annotations

import time
from typing import Any

from django.contrib.auth.models import User
from google.genai import types

from agentdash.agent_sessions._state_store import event_append
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.models import AgentSession
from runtime.events.event import Event


def session_make(session_id: str) -> AgentSession:
    """A session of app ``app`` for user ``u``, owned by nobody."""
    return AgentSession.objects.create(
        id=session_id, app_name="app", user_id="u", last_update_time=time.time()
    )


def session_of(owner: User | None, session_id: str, app_name: str = "app") -> AgentSession:
    return AgentSession.objects.create(
        id=session_id,
        app_name=app_name,
        user_id=str(owner.pk) if owner else "u",
        owner=owner,
        last_update_time=time.time(),
    )


def store_event(session_id: str, text: str = "hi", **fields: Any) -> Event:
    """Append an event through the session store's write path (it records the change)."""
    event = Event(
        author=fields.pop("author", "user"),
        invocation_id=fields.pop("invocation_id", "inv-1"),
        content=types.Content(role="user", parts=[types.Part(text=text)]),
        **fields,
    )
    event_append(session_id=session_id, event_data=event_serialize(event))
    return event
