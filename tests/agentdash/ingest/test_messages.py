"""The layouts the sender fixtures do not cover, read into the GenAI conventions: the
conventions' per-message span events (as Azure's and Semantic Kernel's tracing write them:
``gen_ai.event.content``), OpenInference's ``input.value`` holding an OpenAI request and its
multimodal ``contents``; and what no reader expects never raises."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentdash.ingest.messages import conversation_read, in_conventions
from agentdash.ingest.semconv import mapped


def loaded(found: dict[str, Any], key: str) -> Any:
    return json.loads(found[key])


def test_per_message_span_events_become_the_conversation() -> None:
    events = [
        {"name": "gen_ai.system.message", "time": 1,
         "attributes": {"gen_ai.event.content": json.dumps({"content": "Be brief."})}},
        {"name": "gen_ai.user.message", "time": 2,
         "attributes": {"gen_ai.event.content": json.dumps({"content": "Weather in Oslo?"})}},
        {"name": "gen_ai.tool.message", "time": 3,
         "attributes": {"gen_ai.event.content": json.dumps({"content": "{\"t\": 3}", "id": "c1"})}},
        {"name": "gen_ai.choice", "time": 4, "attributes": {"gen_ai.event.content": json.dumps(
            {"finish_reason": "stop", "index": 0, "message": {"content": "3 °C."}})}},
    ]  # fmt: skip
    found = conversation_read({}, events, "model")
    assert loaded(found, "gen_ai.system_instructions") == [{"type": "text", "content": "Be brief."}]
    asked = loaded(found, "gen_ai.input.messages")
    assert asked[0] == {"role": "user", "parts": [{"type": "text", "content": "Weather in Oslo?"}]}
    assert asked[1]["parts"] == [{"type": "tool_call_response", "response": {"t": 3}, "id": "c1"}]
    answered = loaded(found, "gen_ai.output.messages")
    assert answered == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "3 °C."}],
            "finish_reason": "stop",
        }
    ]


def test_openinference_input_value_holding_an_openai_request() -> None:
    request = {"model": "m", "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        ]},
    ]}  # fmt: skip
    response = {
        "choices": [
            {"finish_reason": "stop", "message": {"role": "assistant", "content": "A cat."}}
        ]
    }
    found = mapped(
        {"openinference.span.kind": "LLM", "input.value": json.dumps(request),
         "input.mime_type": "application/json", "output.value": json.dumps(response),
         "output.mime_type": "application/json"},
        "ChatCompletion",
    )  # fmt: skip
    (asked,) = json.loads(found["gen_ai.input.messages"])
    assert asked["parts"] == [
        {"type": "text", "content": "What is this?"},
        {"type": "uri", "modality": "image", "uri": "https://example.com/a.png"},
    ]
    (answer,) = json.loads(found["gen_ai.output.messages"])
    assert answer["parts"] == [{"type": "text", "content": "A cat."}]
    assert answer["finish_reason"] == "stop"


def test_values_in_the_conventions_shape_are_left_as_sent() -> None:
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "hi"}]}])
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages}
    assert in_conventions("gen_ai.input.messages", messages)
    assert mapped(attributes, "chat m")["gen_ai.input.messages"] == messages
    assert "agentdash.ingest.sent.gen_ai.input.messages" not in mapped(attributes, "chat m")


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        "[1, 2, 3]",
        json.dumps([{"role": None, "content": {"deep": [[[[{}]]]]}}]),
        "[" * 5_000 + "]" * 5_000,
        json.dumps([{"role": "user", "content": "x" * 1_000_000}]),
        "\x00\ud800",
        json.dumps([{"role": "assistant", "tool_calls": [None, 1, {"function": None}]}]),
    ],
)
def test_what_no_reader_expects_never_raises(value: str) -> None:
    for key in ("gen_ai.input.messages", "llm.input_messages.0.message.content",
                "gcp.vertex.agent.llm_request", "gen_ai.output", "traceloop.entity.input",
                "input.value"):  # fmt: skip
        attributes = {key: value, "input.mime_type": "application/json",
                      "gen_ai.output.type": "json"}  # fmt: skip
        events = [{"name": "gen_ai.user.message", "attributes": {"gen_ai.event.content": value}}]
        for kind in ("model", "tool"):
            json.dumps(conversation_read(attributes, events, kind))  # JSON text or plain
