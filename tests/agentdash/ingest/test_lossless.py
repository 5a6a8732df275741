"""Nothing a sender sends is lost: every span keeps its resource, instrumentation scope, links,
flags, trace state and dropped counts; a session exported as OTLP gives back, per span, what
was sent (its resource and scope too), but for what AgentDash says it changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.exports.session_export import (
    session_otlp_parts,
    session_otlp_proto_parts,
)
from agentdash.spans.models import Span, SpanSource
from tests.agentdash.ingest.otlp_bodies import (
    EVERY_FIELD_TRACE as TRACE,
)
from tests.agentdash.ingest.otlp_bodies import JSON, PROTOBUF, every_field_request
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post
from tests.agentdash.otlp_receiver import otlp_parse

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
SENT = [
    "adk_2.13.0.pb",
    "adk_2.13.0_content.json",
    "adk_2.13.0_legacy.pb",
    "openinference_langchain.json",
    "genai_semconv.json",
    "openinference_openai.pb",
    "genai_openai_v2.pb",
    "any_agent.pb",
    "traceloop_openai.pb",
    "traceloop_legacy_openai.pb",
    "pydantic_ai.pb",
]


def request_of(name: str) -> ExportTraceServiceRequest:
    body = (FIXTURES / name).read_bytes()
    if name.endswith(".json"):
        return otlp_parse(body.decode())
    return ExportTraceServiceRequest.FromString(body)


def per_span(request: ExportTraceServiceRequest) -> dict[str, dict[str, Any]]:
    """Each span of ``request`` (by span id) as protobuf's JSON, with the resource, the
    scope and the schema URLs it was sent under."""
    found = {}
    for resource_spans in request.resource_spans:
        resource = json_format.MessageToDict(resource_spans.resource)
        for scope_spans in resource_spans.scope_spans:
            scope = json_format.MessageToDict(scope_spans.scope)
            for span in scope_spans.spans:
                printed = json_format.MessageToDict(span)
                if printed.get("status") == {}:  # present but empty: the same as unset
                    del printed["status"]
                found[span.span_id.hex()] = {
                    "span": printed,
                    "resource": resource,
                    "resource_schema_url": resource_spans.schema_url,
                    "scope": scope,
                    "scope_schema_url": scope_spans.schema_url,
                }
    return found


def exported(session: AgentSession) -> ExportTraceServiceRequest:
    text = "".join(session_otlp_parts(session=session, batch=3))
    return otlp_parse(text)


@pytest.mark.parametrize("name", SENT)
def test_a_sender_gets_back_what_it_sent_span_by_span(alice: User, name: str) -> None:
    sent = request_of(name)
    assert partial(post(sent.SerializeToString(), new_key(alice))) == (0, "")
    session = AgentSession.objects.get()
    back = per_span(exported(session))
    assert back == per_span(sent)
    # The protobuf export says the same.
    binary = ExportTraceServiceRequest.FromString(
        b"".join(session_otlp_proto_parts(session=session, batch=2))
    )
    assert per_span(binary) == back


def test_what_ingest_adds_is_named_on_the_stored_span_and_left_out_of_exports(
    alice: User,
) -> None:
    post(request_of("openinference_langchain.json").SerializeToString(), new_key(alice))
    llm = Span.objects.get(name="ChatOpenAI")
    added = llm.attributes["agentdash.ingest.added"]
    assert {"gen_ai.request.model", "agentdash.span.kind", "service.name"} <= set(added)
    assert llm.attributes["gen_ai.request.model"] == llm.attributes["llm.model_name"]
    back = per_span(exported(AgentSession.objects.get()))[llm.span_id]["span"]
    keys = {pair["key"] for pair in back["attributes"]}
    assert "agentdash.ingest.added" not in keys and not keys & set(added)


@pytest.mark.parametrize("content_type", [PROTOBUF, JSON])
def test_every_otlp_field_is_kept_and_exported_as_sent(alice: User, content_type: str) -> None:
    sent = every_field_request()
    body = (
        sent.SerializeToString()
        if content_type == PROTOBUF
        else json.dumps(_hex_ids(json_format.MessageToDict(sent))).encode()
    )
    assert partial(post(body, new_key(alice), content_type)) == (0, "")
    session = AgentSession.objects.get()
    assert per_span(exported(session)) == per_span(sent)
    assert SpanSource.objects.count() == 3  # one per resource and scope
    agent = Span.objects.get(span_id="b7ad6b7169203331")
    assert agent.source is not None and agent.source.resource["host.name"] == "worker-7"
    assert agent.source.resource_dropped == 3 and agent.source.scope_version == "0.9.1"
    assert agent.otlp["flags"] == 769 and agent.otlp["droppedLinksCount"] == 6
    assert "agentdash.ingest.dropped" not in agent.attributes  # the sender's counts, not ours


def _hex_ids(document: dict[str, Any]) -> dict[str, Any]:
    """Protobuf's JSON of a request with its ids in hex, as OTLP/JSON writes them."""
    import base64

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64decode(v).hex()
                if k in ("traceId", "spanId", "parentSpanId")
                else walk(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    result: dict[str, Any] = walk(document)
    return result


def test_the_same_source_is_stored_once_however_often_it_sends(alice: User) -> None:
    key = new_key(alice)
    for _ in range(3):
        post(request_of("genai_semconv.json").SerializeToString(), key)
    assert SpanSource.objects.count() == 2  # one resource, two scopes


def span_url(session: AgentSession, span_id: str, trace_id: str = TRACE) -> str:
    return reverse(
        "dashboard:session_span",
        kwargs={"session_id": session.id, "trace_id": trace_id, "span_id": span_id},
    )


def test_a_spans_details_hold_its_source_and_links_to_the_stored_spans_the_reader_may_see(
    client: Client, alice: User, bob: User
) -> None:
    post(every_field_request().SerializeToString(), new_key(alice))
    session = AgentSession.objects.get()
    client.force_login(alice)
    found = client.get(span_url(session, "b7ad6b7169203331")).json()
    assert found["source"]["resource"]["attributes"]["service.version"] == "4.2.0"
    assert found["source"]["scope"] == {
        "name": "billing.agent",
        "version": "0.9.1",
        "attributes": {"scope.team": "payments"},
        "schemaUrl": "https://opentelemetry.io/schemas/1.27.0",
        "droppedAttributesCount": 1,
    }
    assert found["otlp"]["traceState"] == "vendor=abc,other=1"
    stored, never = found["links"]
    assert stored["session"] == session.id and stored["attributes"] == {"link.reason": "caused by"}
    assert "session" not in never
    # Bob cannot read the span; a span of his linking to Alice's gets no session for it.
    client.force_login(bob)
    assert client.get(span_url(session, "b7ad6b7169203331")).status_code == 404
    mine = every_field_request()
    for resource_spans in mine.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                span.trace_id = bytes.fromhex("1" * 32)
                span.span_id = bytes([span.span_id[0] ^ 1]) + span.span_id[1:]
                span.ClearField("parent_span_id")
    post(mine.SerializeToString(), new_key(bob))
    bobs = AgentSession.objects.get(owner=bob)
    agent = Span.objects.get(session=bobs, name="invoke_agent billing")
    found = client.get(span_url(bobs, agent.span_id, "1" * 32)).json()
    assert all("session" not in link for link in found["links"])


def test_the_runtimes_own_spans_have_no_source_and_export_under_agentdash(
    client: Client, alice: User
) -> None:
    from agentdash.spans.services import span_upsert
    from tests.agentdash.stored import session_of

    session = session_of(alice, "local-1")
    span_upsert(
        trace_id=TRACE,
        span_id="b7ad6b7169203331",
        name="invoke_agent local",
        start_time=1,
        end_time=2,
        session_id=session.id,
    )
    (resource_spans,) = exported(session).resource_spans
    assert resource_spans.scope_spans[0].scope.name == "agentdash.runtime"
    client.force_login(alice)
    found = client.get(span_url(session, "b7ad6b7169203331")).json()
    assert "source" not in found and found["links"] == [] and found["otlp"] == {}


def test_hostile_resource_scope_and_link_values_are_stored_safely(alice: User) -> None:
    sent = every_field_request()
    resource = sent.resource_spans[0].resource
    resource.attributes.add(key="bad\x00key", value=AnyValue(string_value="nul\x00 x"))
    resource.attributes.add(key="huge", value=AnyValue(string_value="x" * 1_000_000))
    sent.resource_spans[0].scope_spans[0].scope.name = "scope\x00name"
    link = sent.resource_spans[0].scope_spans[0].spans[0].links[0]
    link.attributes.add(key="nul", value=AnyValue(string_value="a\x00b"))
    assert partial(post(sent.SerializeToString(), new_key(alice))) == (0, "")
    agent = Span.objects.get(span_id="b7ad6b7169203331")
    assert agent.source is not None
    assert "\x00" not in json.dumps(agent.source.resource) + agent.source.scope_name
    assert len(agent.source.resource["huge"]) < 1_000_000
    assert agent.otlp["links"][0]["attributes"]["nul"] == "a\ufffdb"
    text = "".join(session_otlp_parts(session=AgentSession.objects.get()))
    json.loads(text)  # valid JSON whatever was sent
