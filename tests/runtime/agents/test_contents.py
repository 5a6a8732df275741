"""The history a model call sends: the runtime's own call ids cleared, each stored part copied
once however many calls rebuild it, and nothing of the request shared with the stored events."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from google.genai import types

from runtime.agents._contents import CLIENT_ID_PREFIX, build_contents
from runtime.events.event import Event
from runtime.models.genai_values import replaced


def _tool_turn(n: int) -> list[Event]:
    """A model turn of ``n`` calls with the runtime's ids, and the event answering them."""
    ids = [f"{CLIENT_ID_PREFIX}{i:04x}" for i in range(n)]
    calls = [types.Part(function_call=types.FunctionCall(id=i, name="tick", args={})) for i in ids]
    answers = [
        types.Part(function_response=types.FunctionResponse(id=i, name="tick", response={"n": 1}))
        for i in ids
    ]
    return [
        Event(author="agent", content=types.Content(role="model", parts=calls)),
        Event(author="agent", content=types.Content(role="user", parts=answers)),
    ]


def _ctx(events: list[Event]) -> Any:
    return SimpleNamespace(
        agent=SimpleNamespace(name="agent"), session=SimpleNamespace(events=events), branch=None
    )


def _ids(contents: list[types.Content]) -> list[str | None]:
    found = []
    for content in contents:
        for part in content.parts or []:
            if part.function_call:
                found.append(part.function_call.id)
            if part.function_response:
                found.append(part.function_response.id)
    return found


def test_every_call_sees_the_history_without_the_runtimes_ids_and_copies_it_once() -> None:
    user = Event(author="user", content=types.Content(role="user", parts=[types.Part(text="go")]))
    events = [user, *_tool_turn(3)]
    first = build_contents(_ctx(events), include_contents="default")
    second = build_contents(_ctx(events), include_contents="default")

    assert first == second
    assert _ids(first) == [None] * 6
    assert [len(c.parts or []) for c in first] == [1, 3, 3]
    # The stored events keep their ids.
    made_up = [f"{CLIENT_ID_PREFIX}{i:04x}" for i in range(3)]
    assert _ids([e.content for e in events if e.content]) == made_up * 2
    for made, again, event in zip(first, second, events, strict=True):
        assert event.content is not None
        # A request's contents and their lists are its own: never the stored event's, nor
        # another request's (a callback may change them).
        assert made is not event.content and made is not again
        assert made.parts is not event.content.parts and made.parts is not again.parts
        # The parts: made once for a content, whatever the calls.
        assert all(a is b for a, b in zip(made.parts or [], again.parts or [], strict=True))
    # A part without the runtime's ids is the stored one.
    assert first[0].parts and first[0].parts[0] is user.content.parts[0]  # type: ignore[union-attr,index]


def test_a_content_given_other_parts_is_copied_again() -> None:
    events = _tool_turn(2)
    before = build_contents(_ctx(events), include_contents="default")
    calls = events[0].content
    assert calls is not None and calls.parts is not None
    calls.parts = [*calls.parts, types.Part(text="and a word")]  # a new list, one part more
    after = build_contents(_ctx(events), include_contents="default")
    assert [len(c.parts or []) for c in after] == [3, 2]
    assert after[0].parts and after[0].parts[2].text == "and a word"
    assert _ids(after) == [None] * 4
    assert before[1].parts and after[1].parts
    assert all(a is b for a, b in zip(before[1].parts, after[1].parts, strict=True))


def test_a_replaced_content_is_not_taken_for_the_one_before() -> None:
    events = _tool_turn(1)
    build_contents(_ctx(events), include_contents="default")
    answer = events[1].content
    assert answer is not None and answer.parts is not None
    fr = answer.parts[0].function_response
    assert fr is not None
    changed = replaced(fr, response={"n": 2})
    events[1] = replaced(
        events[1], content=replaced(answer, parts=[types.Part(function_response=changed)])
    )
    after = build_contents(_ctx(events), include_contents="default")
    assert after[1].parts and after[1].parts[0].function_response is not None
    assert after[1].parts[0].function_response.response == {"n": 2}
    assert after[1].parts[0].function_response.id is None


def test_an_answer_given_twice_shows_once_in_the_place_of_the_first() -> None:
    calls, answers = _tool_turn(1)
    assert answers.content is not None and answers.content.parts is not None
    fr = answers.content.parts[0].function_response
    assert fr is not None
    later = Event(
        author="agent",
        content=types.Content(
            role="user",
            parts=[types.Part(function_response=replaced(fr, response={"n": "final"}))],
        ),
    )
    contents = build_contents(_ctx([calls, answers, later]), include_contents="default")
    assert len(contents) == 2
    assert contents[1].parts and contents[1].parts[0].function_response is not None
    assert contents[1].parts[0].function_response.response == {"n": "final"}
