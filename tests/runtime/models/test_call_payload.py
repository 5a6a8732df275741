"""A model call read back from its span's GenAI payloads (``runtime.models.call_payload``):
what ``payloads`` wrote comes back as the same contents, tools and system instruction; a cut
or broken attribute reads as nothing, never as half a value."""

from __future__ import annotations

import json

from google.genai import types

from runtime.models.call_payload import (
    CallPayload,
    contents_of,
    loads_attribute,
    request_of,
    system_text,
)
from runtime.telemetry.payloads import TRUNCATION_MARK, contents_to_messages, tool_definitions


def test_what_a_span_says_comes_back_as_the_call() -> None:
    contents = [
        types.Content(role="user", parts=[types.Part(text="Capital of France?")]),
        types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            id="c1", name="get_capital_city", args={"country": "France"}))]),
        types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            id="c1", name="get_capital_city", response={"result": "Paris"}))]),
    ]  # fmt: skip
    messages = json.loads(json.dumps(contents_to_messages(contents)))
    back = contents_of(messages)
    assert [c.role for c in back] == ["user", "model", "user"]
    assert back[0].parts[0].text == "Capital of France?"  # type: ignore[index]
    call = back[1].parts[0].function_call  # type: ignore[index]
    assert call and (call.id, call.name, call.args) == (
        "c1",
        "get_capital_city",
        {"country": "France"},
    )
    response = back[2].parts[0].function_response  # type: ignore[index]
    assert response and (response.name, response.response) == (
        "get_capital_city",
        {"result": "Paris"},
    )

    schema = {"type": "object", "properties": {"country": {"type": "string"}}}
    declared_here = types.FunctionDeclaration(
        name="get_capital_city", description="The capital.", parameters_json_schema=schema
    )
    tool = types.Tool(function_declarations=[declared_here])
    request = request_of(CallPayload(model="offline", system="Be brief.", messages=messages,
                                     tools=tool_definitions([tool]),
                                     parameters={"temperature": 0.3, "nope": 1}))  # fmt: skip
    assert request.config.system_instruction == "Be brief." and request.config.temperature == 0.3
    declared = request.config.tools[0].function_declarations[0]  # type: ignore[index, union-attr]
    assert (declared.name, declared.description) == ("get_capital_city", "The capital.")


def test_cut_or_broken_attributes_read_as_nothing() -> None:
    assert loads_attribute('[{"type": "text"' + TRUNCATION_MARK) is None
    assert loads_attribute("{not json") is None
    assert system_text(json.dumps([{"type": "text", "content": "A"}, {"type": "x"},
                                   {"type": "text", "content": "B"}])) == "A\n\nB"  # fmt: skip
    assert contents_of([{"role": "user", "parts": [{"type": "blob"}]}, "junk"]) == []  # type: ignore[list-item]
