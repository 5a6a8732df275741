"""The runtime's unvalidated makers of genai values give what validation would."""

from __future__ import annotations

import pydantic
import pytest
from google.genai import types

from runtime.events.event import Event
from runtime.models.genai_values import call_id, function_response_part, replaced


def test_a_replaced_part_is_what_model_copy_makes():
    call = types.FunctionCall(id="adk-1", name="tick", args={"n": 1})
    part = types.Part(function_call=call)
    made = replaced(part, function_call=replaced(call, id=None))
    expected = part.model_copy(update={"function_call": call.model_copy(update={"id": None})})
    assert made == expected
    assert made.model_fields_set == expected.model_fields_set
    assert made.function_call.model_fields_set == expected.function_call.model_fields_set
    assert made.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True)


def test_a_replaced_model_leaves_the_original_as_it_was():
    call = types.FunctionCall(id="adk-1", name="tick", args={"n": 1})
    made = replaced(call, id="adk-2")
    assert (call.id, made.id) == ("adk-1", "adk-2")
    assert made.args is call.args  # shallow: values it was not given are shared
    made.name = "tock"
    assert call.name == "tick"


def test_a_replaced_runtime_event_keeps_its_own_fields():
    event = Event(author="agent", content=types.Content(role="model", parts=[types.Part(text="a")]))
    content = replaced(event.content, parts=[types.Part(text="b")])
    made = replaced(event, content=content)
    assert made == event.model_copy(update={"content": content})
    assert (made.id, made.author, made.content.parts[0].text) == (event.id, "agent", "b")
    assert event.content.parts[0].text == "a"


@pytest.mark.parametrize("call", ["adk-1", None])
def test_a_response_part_equals_the_validated_one(call):
    result = {"n": 5, "nested": {"list": [1, "two", None]}, "text": "\x00\ud800"}
    made = function_response_part(id=call, name="tick", response=result)
    expected = types.Part(
        function_response=types.FunctionResponse(id=call, name="tick", response=result)
    )
    assert made == expected
    assert made.model_dump(mode="json", exclude_none=True) == expected.model_dump(
        mode="json", exclude_none=True
    )
    assert made.model_fields_set == expected.model_fields_set


def test_a_response_part_holds_a_copy_of_the_result_as_validation_does():
    result = {"n": 5}
    made = function_response_part(id="adk-1", name="tick", response=result)
    result["n"] = 6  # a tool that keeps and changes what it returned
    assert made.function_response.response == {"n": 5}


def test_a_result_with_a_key_that_is_not_text_is_refused_as_before():
    with pytest.raises(pydantic.ValidationError):
        function_response_part(id="adk-1", name="tick", response={1: "one"})


def test_call_ids_are_the_prefix_and_sixteen_random_hex_digits():
    made = {call_id("adk-") for _ in range(200)}
    assert len(made) == 200
    for found in made:
        assert found.startswith("adk-") and len(found) == 20
        int(found[4:], 16)
