"""What real instrumentation libraries send reads as one conversation: each sender's
fixture (captured by bench/sender_fixtures.py from the library's PyPI release: OpenInference,
the OpenTelemetry GenAI instrumentation, any-agent, OpenLLMetry new and old, Pydantic AI) lands
with its model calls' messages, its tool calls' arguments and results in the GenAI
conventions' shape the span details and the chat read, its kinds and its tokens; and what it
sent comes back out of an OTLP export unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import Sum

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import PROTOBUF
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
QUESTION = "What is the weather in Paris?"
ANSWER = "It is sunny in Paris, 21 °C."  # senders/fake_openai.py
SYSTEM = "You answer questions about the weather."
# fixture → does it record the system instruction, and the usage of both calls
SENDERS = {
    "openinference_openai": (True, True),
    "genai_openai_v2": (True, True),
    "any_agent": (True, True),
    "traceloop_openai": (True, True),
    "traceloop_legacy_openai": (True, True),
    "pydantic_ai": (True, True),
}


def ingest(owner: User, name: str) -> AgentSession:
    body = (FIXTURES / f"{name}.pb").read_bytes()
    assert partial(post(body, new_key(owner), PROTOBUF)) == (0, "")
    (session,) = AgentSession.objects.all()
    return session


def of_kind(session: AgentSession, kind: str) -> list[Span]:
    return [
        s
        for s in Span.objects.filter(session=session).order_by("start_time")
        if s.attributes.get("agentdash.span.kind") == kind
    ]


def parsed(span: Span, key: str) -> Any:
    value = span.attributes.get(key)
    return json.loads(value) if isinstance(value, str) else value


def parts(messages: list[dict[str, Any]], role: str, kind: str) -> list[dict[str, Any]]:
    return [p for m in messages if m["role"] == role for p in m["parts"] if p.get("type") == kind]


@pytest.mark.parametrize("name", sorted(SENDERS))
def test_a_senders_model_calls_read_as_the_conversation(alice: User, name: str) -> None:
    system, usage = SENDERS[name]
    session = ingest(alice, name)
    first, *_, last = of_kind(session, "model")
    asked = parsed(first, "gen_ai.input.messages")
    assert all(isinstance(m["parts"], list) for m in asked), asked
    assert [p["content"] for p in parts(asked, "user", "text")] == [QUESTION]
    (call,) = parts(parsed(first, "gen_ai.output.messages"), "assistant", "tool_call")
    assert call["name"] == "get_weather"
    arguments = call["arguments"]
    assert (json.loads(arguments) if isinstance(arguments, str) else arguments) == {"city": "Paris"}
    answered = parts(parsed(last, "gen_ai.output.messages"), "assistant", "text")
    assert [p["content"] for p in answered] == [ANSWER]
    if system:
        instructions = parsed(first, "gen_ai.system_instructions") or [
            p for m in asked if m["role"] == "system" for p in m["parts"]
        ]
        assert [p["content"] for p in instructions] == [SYSTEM]
    if usage:
        totals = Span.objects.filter(session=session).aggregate(
            i=Sum("tokens_in"), o=Sum("tokens_out")
        )
        assert (totals["i"], totals["o"]) == (52 + 70, 18 + 9)


@pytest.mark.parametrize("name", sorted(SENDERS))
def test_a_senders_tool_call_has_its_arguments_and_result(alice: User, name: str) -> None:
    session = ingest(alice, name)
    (tool,) = of_kind(session, "tool")
    assert tool.attributes["gen_ai.tool.name"] == "get_weather"
    assert parsed(tool, "gen_ai.tool.call.arguments") == {"city": "Paris"}
    assert "sunny" in str(tool.attributes["gen_ai.tool.call.result"])
    assert of_kind(session, "agent"), "no agent span"


@pytest.mark.parametrize("name", sorted(SENDERS))
def test_a_senders_question_and_answer_are_in_the_chat(alice: User, name: str) -> None:
    session = ingest(alice, name)
    told = SessionEvent.objects.filter(session=session).order_by("seq")
    texts = [(e.author == "user", e.data["content"]["parts"][0]["text"]) for e in told]
    assert texts == [(True, QUESTION), (False, ANSWER)]


def test_a_value_in_another_shape_is_replaced_and_what_was_sent_kept(alice: User) -> None:
    """any-agent puts OpenAI's chat messages under gen_ai.input.messages: the conventions'
    shape takes the key, the sent value is kept beside it (and exported as sent: the
    round-trip tests in test_lossless.py)."""
    session = ingest(alice, "any_agent")
    first = of_kind(session, "model")[0]
    sent = json.loads(first.attributes["agentdash.ingest.sent.gen_ai.input.messages"])
    assert sent[-1] == {"role": "user", "content": QUESTION}
    assert "parts" in parsed(first, "gen_ai.input.messages")[0]
