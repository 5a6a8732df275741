"""A session's events become an eval case: one invocation per user message."""

from __future__ import annotations

from google.genai import types

from runtime import Event, EventActions
from runtime.evaluation import eval_case_from_events, events_to_invocations


def said(author: str, *parts: types.Part, **fields: object) -> Event:
    role = "user" if author == "user" else "model"
    return Event(author=author, content=types.Content(role=role, parts=list(parts)), **fields)


def text(t: str) -> types.Part:
    return types.Part(text=t)


def call(name: str, **args: object) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args, id=f"c-{name}"))


def answer(name: str, **result: object) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(name=name, response=result, id=f"c-{name}")
    )


def test_each_user_message_is_an_invocation_with_its_tools_and_last_text() -> None:
    events = [
        said("user", text("Capital of France?"), invocation_id="e-1"),
        said("agent", call("get_capital_city", country="France"), invocation_id="e-1"),
        said("agent", answer("get_capital_city", capital="Paris"), invocation_id="e-1"),
        said("agent", text("Paris."), invocation_id="e-1"),
        said("agent", text("Par"), invocation_id="e-2", partial=True),
        Event(author="operator", actions=EventActions(state_delta={"k": 1})),
        said("user", text("And Spain?"), invocation_id="e-2"),
        said("helper", text("Looking it up."), invocation_id="e-2"),
        said("agent", text("Madrid."), invocation_id="e-2"),
    ]
    first, second = events_to_invocations(events)

    assert first.invocation_id == "e-1"
    assert [(c.name, c.args) for c in first.tool_calls()] == [
        ("get_capital_city", {"country": "France"})
    ]
    assert first.final_response == types.Content(role="model", parts=[text("Paris.")])
    assert first.intermediate_data is not None
    assert [r.name for r in first.intermediate_data.tool_responses] == ["get_capital_city"]  # type: ignore[union-attr]
    assert second.tool_calls() == []
    assert second.final_response == types.Content(role="model", parts=[text("Madrid.")])
    assert second.intermediate_data.intermediate_responses == [  # type: ignore[union-attr]
        ("helper", [text("Looking it up.")])
    ]


def test_failures_confirmations_and_answers_to_them_are_not_turns_or_tools() -> None:
    events = [
        said("user", text("Delete it")),
        said("agent", call("delete", path="/x")),
        said("agent", call("adk_request_confirmation", originalFunctionCall={})),
        said("user", answer("adk_request_confirmation", confirmed=True)),
        said("agent", answer("delete", ok=True)),
        Event(author="agent", error_code="RUN_FAILED", error_message="boom"),
    ]
    (only,) = events_to_invocations(events)
    assert [c.name for c in only.tool_calls()] == ["delete"]
    assert only.final_response is None


def test_the_case_names_its_session_input() -> None:
    case = eval_case_from_events(
        eval_id="c", events=[said("user", text("hi"))], app_name="a", user_id="u", state={"k": 1}
    )
    assert case.session_input is not None and case.session_input.state == {"k": 1}
    assert case.conversation is not None and len(case.conversation) == 1
