"""An event's change item is read from its stored data, without building the ``Event``: it
must say what the ``Event`` model says of the same event (its calls, responses, finality)."""

from __future__ import annotations

import pytest
from google.genai import types

from agentdash.agent_sessions.change_items import event_item
from agentdash.agent_sessions.event_data import event_serialize
from agentdash.agent_sessions.models import SessionEvent
from runtime.events.event import Event
from runtime.events.event_actions import EventActions


def call(name: str, **args: object) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=f"c-{name}", name=name, args=args))


def response(name: str, **result: object) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=f"c-{name}", name=name, response=result)
    )


def content(*parts: types.Part, role: str = "model") -> types.Content:
    return types.Content(role=role, parts=list(parts))


EVENTS = {
    "text": Event(author="agent", content=content(types.Part(text="Paris."))),
    "no content": Event(author="agent"),
    "content without parts": Event(author="agent", content=types.Content(role="model")),
    "calls": Event(author="agent", content=content(call("a", x=1), call("b"))),
    "a call of no fields": Event(
        author="agent", content=content(types.Part(function_call=types.FunctionCall()))
    ),
    "responses": Event(author="agent", content=content(response("a", y=[1, 2]))),
    "responses, summary skipped": Event(
        author="agent",
        content=content(response("a", y=2)),
        actions=EventActions(skip_summarization=True),
    ),
    "long-running call": Event(
        author="agent", content=content(call("wait")), long_running_tool_ids={"c-wait"}
    ),
    "trailing code result": Event(
        author="agent",
        content=content(
            types.Part(text="ran"),
            types.Part(
                code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="4")
            ),
        ),
    ),
    "code result, then an empty part": Event(
        author="agent",
        content=content(
            types.Part(code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK")),
            types.Part(),
        ),
    ),
    "state delta": Event(author="agent", actions=EventActions(state_delta={"k": {"n": 1}})),
    "operator, with a reason": Event(
        author="operator",
        invocation_id="inv-1",
        branch="root.sub",
        custom_metadata={"reason": "fixed the city"},
        actions=EventActions(state_delta={"city": "Paris"}),
    ),
    "a reason not from an operator": Event(author="agent", custom_metadata={"reason": "no"}),
    "error": Event(author="agent", error_code="SAFETY", error_message="blocked"),
}


@pytest.mark.parametrize("name", list(EVENTS))
def test_an_events_item_says_what_the_event_says(name: str) -> None:
    event = EVENTS[name]
    row = SessionEvent(
        session_id="s", seq=7, version=9, event_id=event.id, data=event_serialize(event), html="h"
    )
    item = event_item(row)
    assert item["id"] == event.id
    assert item["invocation_id"] == event.invocation_id
    assert item["author"] == event.author
    assert item["branch"] == event.branch
    assert item["timestamp"] == event.timestamp
    assert (item["position"], item["version"], item["html"]) == (7, 9, "h")
    calls = [(c.id, c.name, c.args or {}) for c in event.get_function_calls()]
    assert [(c["id"], c["name"], c["args"]) for c in item["function_calls"]] == calls
    answers = [(r.id, r.name, r.response or {}) for r in event.get_function_responses()]
    got = [(r["id"], r["name"], r["response"]) for r in item["function_responses"]]
    assert got == answers
    assert item["state_delta"] == event.actions.state_delta
    reason = (event.custom_metadata or {}).get("reason", "") if event.author == "operator" else ""
    assert item["reason"] == reason
    assert (item["error_code"], item["error_message"]) == (event.error_code, event.error_message)
    assert item["final"] is event.is_final_response()


def test_the_events_cover_both_answers_of_finality() -> None:
    finals = {name: event.is_final_response() for name, event in EVENTS.items()}
    assert set(finals.values()) == {True, False}, finals
