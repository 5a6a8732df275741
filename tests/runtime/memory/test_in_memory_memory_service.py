from datetime import datetime

from google.genai import types

from runtime.events import Event
from runtime.memory import InMemoryMemoryService, MemoryEntry
from runtime.sessions import Session


def event(text: str | None, *, author: str = "user", ts: float = 1_700_000_000.0) -> Event:
    content = None if text is None else types.Content(role="user", parts=[types.Part(text=text)])
    return Event(author=author, content=content, timestamp=ts)


def session(*events: Event, sid: str = "s1", app: str = "app", user: str = "alice") -> Session:
    return Session(id=sid, app_name=app, user_id=user, events=list(events))


def texts(memories: list[MemoryEntry]) -> list[str]:
    return ["".join(p.text or "" for p in m.content.parts or []) for m in memories]


async def search(service: InMemoryMemoryService, query: str, *, app="app", user="alice"):
    return (await service.search_memory(app_name=app, user_id=user, query=query)).memories


async def test_added_session_is_searchable():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(
        session(
            event("My cat is called Biscuit."), event("Nice!", author="helper", ts=1_700_000_001.0)
        )
    )
    [hit] = await search(service, "what is the CAT's name")
    assert texts([hit]) == ["My cat is called Biscuit."]
    assert hit.author == "user"
    assert hit.timestamp is not None
    assert datetime.fromisoformat(hit.timestamp).timestamp() == 1_700_000_000.0


async def test_misses_return_nothing():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(session(event("My cat is called Biscuit.")))
    assert len(await search(service, "biscuit")) == 1  # punctuation is not part of a word
    assert await search(service, "dog") == []
    assert await search(service, "ca") == []  # whole words only
    assert await search(service, "") == []
    assert await search(service, "?!") == []
    assert await search(InMemoryMemoryService(), "cat") == []


async def test_events_without_text_are_not_remembered():
    service = InMemoryMemoryService()
    call = Event(
        author="agent",
        content=types.Content(
            role="model", parts=[types.Part.from_function_call(name="cat", args={"cat": "cat"})]
        ),
    )
    await service.add_session_to_memory(session(event(None), event("   "), call))
    assert await search(service, "cat") == []


async def test_search_is_scoped_to_user_and_app():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(session(event("alice likes tea")))
    await service.add_session_to_memory(session(event("bob likes tea"), user="bob"))
    await service.add_session_to_memory(session(event("other app tea"), app="other"))
    assert texts(await search(service, "tea")) == ["alice likes tea"]
    assert texts(await search(service, "tea", user="bob")) == ["bob likes tea"]
    assert texts(await search(service, "tea", app="other")) == ["other app tea"]
    assert await search(service, "tea", user="carol") == []


async def test_sessions_accumulate_and_re_adding_replaces():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(session(event("first session about tea"), sid="s1"))
    await service.add_session_to_memory(session(event("second session about tea"), sid="s2"))
    assert len(await search(service, "tea")) == 2

    await service.add_session_to_memory(session(event("now it is about coffee"), sid="s1"))
    assert texts(await search(service, "tea")) == ["second session about tea"]
    assert texts(await search(service, "coffee")) == ["now it is about coffee"]


async def test_same_session_id_for_different_users_does_not_collide():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(session(event("alice tea"), sid="s1"))
    await service.add_session_to_memory(session(event("bob coffee"), sid="s1", user="bob"))
    assert texts(await search(service, "tea")) == ["alice tea"]


async def test_ordered_by_matching_words_then_timestamp():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(
        session(
            event("late tea", ts=300.0),
            event("green tea with lemon", ts=200.0),
            event("early tea", ts=100.0),
            event("green tea", ts=50.0),
            event("coffee only", ts=10.0),
        )
    )
    found = texts(await search(service, "green tea lemon"))
    assert found == ["green tea with lemon", "green tea", "early tea", "late tea"]


async def test_repeated_words_count_once():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(
        session(event("tea tea tea tea", ts=1.0), event("tea and cake", ts=2.0))
    )
    assert texts(await search(service, "tea tea cake")) == ["tea and cake", "tea tea tea tea"]


async def test_returned_entries_do_not_alias_the_store():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(session(event("keep this tea")))
    [hit] = await search(service, "tea")
    assert hit.content.parts
    hit.content.parts[0].text = "changed"
    assert texts(await search(service, "tea")) == ["keep this tea"]
