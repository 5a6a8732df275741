"""The database memory store answers as the in-memory one does."""

from __future__ import annotations

import pytest
from google.genai import types

from agentdash.agent_sessions.memory_service import DjangoMemoryService
from agentdash.agent_sessions.models import MemoryRecord
from runtime.events import Event
from runtime.memory import InMemoryMemoryService
from runtime.sessions import Session

pytestmark = pytest.mark.django_db(transaction=True)


def event(text: str | None, *, author: str = "user", ts: float = 1_700_000_000.0) -> Event:
    content = None if text is None else types.Content(role="user", parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=ts)


def session(*events: Event, sid: str = "s1", app: str = "app", user: str = "alice") -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=list(events))


SESSIONS = [
    session(
        event("My cat is called Biscuit.", ts=100.0),
        event("Nice! Green tea with lemon?", author="helper", ts=200.0),
        event(None, ts=250.0),
        event("   ", ts=260.0),
        event("late tea, early cake", ts=300.0),
        event("Ünïcode Café TEA", ts=50.0),
    ),
    session(event("second session: tea and cake", ts=150.0), sid="s2"),
    session(event("bob likes tea", ts=120.0), user="bob"),
    session(event("other app tea", ts=130.0), app="other"),
    session(event("now about coffee", ts=400.0), sid="s2"),  # replaces s2
]
QUERIES = ["tea", "green tea lemon", "CAT's name", "café", "cake tea tea", "dog", "", "?!", "ca"]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(("app", "user"), [("app", "alice"), ("app", "bob"), ("other", "alice")])
async def test_same_answers_as_the_in_memory_store(query: str, app: str, user: str) -> None:
    db, memory = DjangoMemoryService(), InMemoryMemoryService()
    for s in SESSIONS:
        await db.add_session_to_memory(s)
        await memory.add_session_to_memory(s)
    got = await db.search_memory(app_name=app, user_id=user, query=query)
    want = await memory.search_memory(app_name=app, user_id=user, query=query)
    assert got == want


async def test_only_events_with_text_are_stored_and_re_adding_replaces() -> None:
    db = DjangoMemoryService()
    await db.add_session_to_memory(SESSIONS[0])
    assert await MemoryRecord.objects.filter(session_id="s1").acount() == 4
    await db.add_session_to_memory(session(event("just this"), sid="s1"))
    texts = [r.text async for r in MemoryRecord.objects.filter(session_id="s1")]
    assert texts == ["just this"]
    [hit] = (await db.search_memory(app_name="app", user_id="alice", query="this")).memories
    assert hit.content.parts[0].text == "just this" and hit.author == "user"
