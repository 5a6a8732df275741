"""What real senders send, stored as the timeline expects: google-adk 2.13's own export bodies
(captured by bench/adk_fixtures.py: its default span layout, with message content, and its
legacy layout), an OpenInference app's and a GenAI-conventions app's (fixtures/README.md
has the facts and the expected totals)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db.models import Sum
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentdash.agent_sessions.models import AgentSession
from agentdash.ingest.models import IngestKey
from agentdash.ingest.services import session_id_for
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import JSON, PROTOBUF
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post
from tests.agentdash.otlp_receiver import otlp_parse

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"

# file → (conversation, spans, input tokens, output tokens)
SENDERS = {
    "adk_2.13.0.pb": ("adk-session-1", 10, 200, 40),
    "adk_2.13.0.json": ("adk-session-1", 10, 200, 40),
    "adk_2.13.0_content.pb": ("adk-session-1", 10, 200, 40),
    "adk_2.13.0_legacy.pb": ("adk-session-1", 14, 200, 40),
    "adk_2.13.0_legacy.json": ("adk-session-1", 14, 200, 40),
    "openinference_langchain.json": ("oi-session-1", 3, 52, 18),
    "genai_semconv.json": ("conv-42", 3, 64, 19),
}


def kinds_by_name(session_id: str) -> dict[str, str]:
    return {
        s.name.split(" ", 1)[0]: s.attributes.get("agentdash.span.kind", "")
        for s in Span.objects.filter(session_id=session_id)
    }


@pytest.mark.parametrize("name", sorted(SENDERS))
def test_a_sender_lands_in_one_session_with_its_kinds_and_tokens_once(
    alice: User, name: str
) -> None:
    conversation, count, tokens_in, tokens_out = SENDERS[name]
    body = (FIXTURES / name).read_bytes()
    content_type = JSON if name.endswith(".json") else PROTOBUF
    assert partial(post(body, new_key(alice), content_type)) == (0, "")
    (session,) = AgentSession.objects.all()
    assert session.pk == session_id_for(IngestKey.objects.get(), conversation)
    assert Span.objects.filter(session=session).count() == count
    totals = Span.objects.filter(session=session).aggregate(i=Sum("tokens_in"), o=Sum("tokens_out"))
    assert (totals["i"], totals["o"]) == (tokens_in, tokens_out)
    kinds = set(kinds_by_name(session.pk).values())
    assert {"agent", "model"} <= kinds, kinds_by_name(session.pk)


@pytest.mark.parametrize("name", ["adk_2.13.0_content.pb", "adk_2.13.0_legacy.pb"])
def test_adk_runs_read_as_runs_agents_models_and_tools(alice: User, name: str) -> None:
    post((FIXTURES / name).read_bytes(), new_key(alice))
    session = AgentSession.objects.get()
    kinds = kinds_by_name(session.pk)
    root = "invoke_workflow" if "legacy" not in name else "invocation"
    assert kinds[root] == "invocation"
    assert kinds["invoke_agent"] == "agent" and kinds["execute_tool"] == "tool"
    assert kinds["generate_content"] == "model"
    tool = Span.objects.filter(session=session, name__startswith="execute_tool").first()
    assert tool is not None
    assert tool.attributes["gen_ai.tool.name"] == "get_capital_city"
    assert "gen_ai.tool.call.arguments" in tool.attributes
    assert "gen_ai.tool.call.result" in tool.attributes


def test_legacy_usage_counts_once_whichever_half_comes_first(alice: User) -> None:
    whole = otlp_parse((FIXTURES / "adk_2.13.0_legacy.json").read_text())
    steps, rest = ExportTraceServiceRequest(), ExportTraceServiceRequest()
    steps.CopyFrom(whole)
    rest.CopyFrom(whole)
    for message, keep in ((steps, True), (rest, False)):
        for resource in message.resource_spans:
            for scope in resource.scope_spans:
                kept = [s for s in scope.spans if (s.name == "call_llm") == keep]
                del scope.spans[:]
                scope.spans.extend(kept)
    key = new_key(alice)
    assert partial(post(steps.SerializeToString(), key)) == (0, "")  # parents first
    assert partial(post(rest.SerializeToString(), key)) == (0, "")
    totals = Span.objects.aggregate(i=Sum("tokens_in"), o=Sum("tokens_out"))
    assert (totals["i"], totals["o"]) == (200, 40)
    assert Span.objects.count() == 14 and AgentSession.objects.count() == 1
