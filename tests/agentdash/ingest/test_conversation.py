"""An ingested session's chat holds its conversation: each run's question and answer, read
out of the model calls' recorded messages in every convention a sender uses, told once."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from agentdash.agent_sessions.models import SessionEvent
from agentdash.ingest import conversation
from agentdash.ingest.conversation import answer_text, plain_value, question_text
from agentdash.ingest.semconv import mapped
from tests.agentdash.ingest.otlp_bodies import JSON, PROTOBUF
from tests.agentdash.ingest.test_otlp_ingest import T1, new_key, partial, post
from tests.agentdash.ingest.test_senders import FIXTURES

pytestmark = pytest.mark.django_db

FRANCE = [
    ("user", "What is the capital of France?"),
    ("capitals", "The capital of France is Paris."),
]
JAPAN = [("user", "And the capital of Japan?"), ("capitals", "The capital of Japan is Tokyo.")]
# file → the chat, in order: (author, text)
CHATS = {
    "adk_2.13.0_content.pb": FRANCE + JAPAN,
    "adk_2.13.0_legacy.pb": FRANCE + JAPAN,
    "adk_2.13.0_legacy.json": FRANCE + JAPAN,
    "openinference_langchain.json": [
        ("user", "What's the weather in Paris?"),
        ("shop", "It is 14 °C and rainy in Paris."),  # the chain's output: no agent name
    ],
    "genai_semconv.json": [("user", "Weather in Paris?")],  # its only call asked a tool
    "adk_2.13.0.pb": [],  # ADK's default records no message content
}


def chat(session_filter: dict[str, str] | None = None) -> list[tuple[str, str]]:
    rows = SessionEvent.objects.filter(**(session_filter or {})).order_by("session_id", "seq")
    found = []
    for author, data in rows.values_list("author", "data"):
        parts = (data.get("content") or {}).get("parts") or []
        found.append((author, "".join(p.get("text", "") for p in parts)))
    return found


@pytest.mark.parametrize("name", sorted(CHATS))
def test_a_senders_runs_are_told_in_the_chat_once(alice: User, name: str) -> None:
    body = (FIXTURES / name).read_bytes()
    key = new_key(alice)
    kind = JSON if name.endswith(".json") else PROTOBUF
    assert partial(post(body, key, kind)) == (0, "")
    assert chat() == CHATS[name]
    assert partial(post(body, key, kind)) == (0, "")  # the same export again: told once
    assert chat() == CHATS[name]


def span(trace: str, span_id: str, parent: str, name: str, attributes: dict, end: bool) -> dict:
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000" if end else "0",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()],
    }


def export(*spans: dict) -> bytes:
    return json.dumps(
        {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]}
    ).encode()


def test_the_question_shows_while_the_run_goes_on_the_answer_when_it_ends(alice: User) -> None:
    key = new_key(alice)
    hostile = "<script>alert(1)</script>**Paris**\x00"
    model = span(T1, "b" * 16, "a" * 16, "chat m", {
        "gen_ai.operation.name": "chat",
        "gen_ai.conversation.id": "c1",
        "gen_ai.agent.name": "helper",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "Capital?"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": hostile}]}]
        ),
    }, end=True)  # fmt: skip
    root = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c1"}
    assert partial(post(export(model), key, JSON)) == (0, "")
    assert chat() == [("user", "Capital?")]  # the run is still going: no answer yet
    ended = span(T1, "a" * 16, "", "invoke_agent helper", root, True)
    assert partial(post(export(ended), key, JSON)) == (0, "")
    told = SessionEvent.objects.order_by("seq")
    assert [e.author for e in told] == ["user", "helper"]
    answer = told.last()
    assert answer is not None
    assert "<script" not in answer.html and "<strong>Paris</strong>" in answer.html
    assert "\x00" not in answer.data["content"]["parts"][0]["text"]


def test_message_content_in_each_convention() -> None:
    assert question_text({"gen_ai.input.messages": "not json"}) is None
    legacy = {"contents": [
        {"role": "user", "parts": [{"text": "first"}]},
        {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [{"function_response": {"name": "f"}}]},
    ]}  # fmt: skip
    # The last user message *with text*: a tool's response is not the question. ADK's legacy
    # layout is read as ingest reads it (into the GenAI conventions).
    request = mapped({"gcp.vertex.agent.llm_request": json.dumps(legacy)}, "call_llm")
    assert question_text(request) == "first"
    thought = {"content": {"parts": [{"text": "hmm", "thought": True}, {"text": "Done."}]}}
    response = mapped({"gcp.vertex.agent.llm_response": json.dumps(thought)}, "call_llm")
    assert answer_text(response) == "Done."
    calls_only = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "f"}]}]
    assert answer_text({"gen_ai.output.messages": json.dumps(calls_only)}) is None
    assert plain_value('{"input": "hi"}', ("input",)) == "hi"
    assert plain_value('{"other": 1}', ("input",)) is None
    assert plain_value("plain words", ("input",)) == "plain words"
    assert plain_value("", ("input",)) is None


def model_call(span_id: str, end: str, text: str | None) -> dict:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "c2"}
    if text is not None:
        attributes["gen_ai.output.messages"] = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        )
    found = span(T1, span_id, "a" * 16, "chat m", attributes, end=True)
    found["endTimeUnixNano"] = end
    return found


def root_span() -> dict:
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "c2"}
    found = span(T1, "a" * 16, "", "invoke_agent helper", attributes, end=True)
    found["endTimeUnixNano"] = "1700000009000000000"
    return found


def read_backs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The traces whose stored spans the conversation reads back (any thread)."""
    read: list[str] = []
    stored_ended = conversation._stored_ended

    def spy(session_id: str, trace_id: str) -> Any:
        read.append(trace_id)
        return stored_ended(session_id, trace_id)

    monkeypatch.setattr(conversation, "_stored_ended", spy)
    return read


def test_a_whole_trace_in_one_export_is_answered_without_reading_it_back(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every span the trace has is in hand: the answer is read from them, not from the
    stored spans' attributes."""
    read = read_backs(monkeypatch)
    key = new_key(alice)
    calls = [model_call("b" * 16, "1700000002000000000", "Paris."), root_span()]
    assert partial(post(export(*calls), key, JSON)) == (0, "")
    author, text = chat()[-1]
    assert (author != "user", text) == (True, "Paris.")
    assert read == []


def test_an_answer_stored_in_an_earlier_export_is_found_when_the_run_ends(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trace's last model call with text came in an earlier export; the export that
    ends the run has only a later call without text: the stored spans are read."""
    read = read_backs(monkeypatch)
    key = new_key(alice)
    first = model_call("b" * 16, "1700000002000000000", "The capital is Paris.")
    assert partial(post(export(first), key, JSON)) == (0, "")
    later = model_call("c" * 16, "1700000003000000000", None)
    assert partial(post(export(later, root_span()), key, JSON)) == (0, "")
    assert chat()[-1][1] == "The capital is Paris."
    assert read == [T1]
