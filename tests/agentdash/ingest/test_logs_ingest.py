"""OTLP logs (``POST /v1/logs``): what senders record as log records of their spans — the
OpenTelemetry GenAI instrumentation's messages, per message (its first events) or as one
inference event (its latest), captured from its PyPI release by bench/sender_fixtures.py —
becomes events of those spans, so the model calls read as the conversation whichever comes
first, logs or spans; an OTLP export gives the spans back as sent (the logs were not span
events). Records without a span, of another sender's span, malformed or without a key get
the answers OTLP asks for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord

from agentdash.agent_sessions.models import AgentSession, SessionEvent
from agentdash.changes.models import SessionChange
from agentdash.ingest.models import PendingLog
from agentdash.ingest.otlp_logs import BODY
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import JSON, PROTOBUF
from tests.agentdash.ingest.test_lossless import exported, per_span
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post, status_message
from tests.agentdash.ingest.test_sender_conversations import (
    ANSWER,
    QUESTION,
    SYSTEM,
    of_kind,
    parsed,
    parts,
)

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
SENDERS = ("genai_openai_v2_log_events", "genai_openai_v2_event_only")


def logs_partial(response: Any) -> tuple[int, str]:
    """(rejected records, error message) of a 200 answer to a log export."""
    assert response.status_code == 200, response.content
    answer = ExportLogsServiceResponse()
    if response["Content-Type"] == PROTOBUF:
        answer.ParseFromString(response.content)
    else:
        json_format.Parse(response.content, answer)
    return answer.partial_success.rejected_log_records, answer.partial_success.error_message


def send(key: str, name: str, *, logs_first: bool) -> None:
    spans = (FIXTURES / f"{name}.pb").read_bytes()
    logs = (FIXTURES / f"{name}.logs.pb").read_bytes()
    if logs_first:
        assert logs_partial(post(logs, key, PROTOBUF, "/v1/logs")) == (0, "")
        assert PendingLog.objects.exists()  # their spans are still to come
    assert partial(post(spans, key, PROTOBUF)) == (0, "")
    if not logs_first:
        assert logs_partial(post(logs, key, PROTOBUF, "/v1/logs")) == (0, "")


@pytest.mark.parametrize("logs_first", [False, True], ids=["spans-first", "logs-first"])
@pytest.mark.parametrize("name", SENDERS)
def test_messages_sent_as_logs_read_as_the_conversation(
    alice: User, name: str, logs_first: bool
) -> None:
    send(new_key(alice), name, logs_first=logs_first)
    (session,) = AgentSession.objects.all()
    first, last = of_kind(session, "model")
    asked = parsed(first, "gen_ai.input.messages")
    assert [p["content"] for p in parts(asked, "user", "text")] == [QUESTION]
    instructions = parsed(first, "gen_ai.system_instructions") or parts(asked, "system", "text")
    assert [p["content"] for p in instructions] == [SYSTEM]
    (call,) = parts(parsed(first, "gen_ai.output.messages"), "assistant", "tool_call")
    assert call["name"] == "get_weather"
    answered = parts(parsed(last, "gen_ai.output.messages"), "assistant", "text")
    assert [p["content"] for p in answered] == [ANSWER]
    # The records are the span's events, marked as logs; none waits any more.
    assert first.events and all(e["attributes"]["agentdash.ingest.log"] for e in first.events)
    assert not PendingLog.objects.exists()
    # The chat tells the question and the answer, as for a sender that puts them on spans.
    told = SessionEvent.objects.filter(session=session).order_by("seq")
    assert [e.data["content"]["parts"][0]["text"] for e in told] == [QUESTION, ANSWER]
    # An export gives the spans back as sent: the logs were no events of theirs.
    sent = ExportTraceServiceRequest.FromString((FIXTURES / f"{name}.pb").read_bytes())
    assert per_span(exported(session)) == per_span(sent)


def test_records_of_a_span_stored_ended_amend_it_and_tell_open_pages(alice: User) -> None:
    key = new_key(alice)
    name = SENDERS[0]
    assert partial(post((FIXTURES / f"{name}.pb").read_bytes(), key, PROTOBUF)) == (0, "")
    (session,) = AgentSession.objects.all()
    before = SessionChange.objects.filter(session=session, kind="span").count()
    assert logs_partial(
        post((FIXTURES / f"{name}.logs.pb").read_bytes(), key, PROTOBUF, "/v1/logs")
    ) == (0, "")
    # One span change per model call amended: pages following the session receive them.
    assert SessionChange.objects.filter(session=session, kind="span").count() == before + 2


def record(trace_id: bytes, span_id: bytes, body: Any = None, **attributes: Any) -> LogRecord:
    found = LogRecord(trace_id=trace_id, span_id=span_id, time_unix_nano=1, event_name="note")
    if body is not None:
        found.body.CopyFrom(body)
    for k, v in attributes.items():
        found.attributes.append(KeyValue(key=k, value=AnyValue(string_value=v)))
    return found


def export_of(*records: LogRecord) -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    request.resource_logs.add().scope_logs.add().log_records.extend(records)
    return request


def test_records_without_a_span_or_of_another_senders_span_are_rejected(
    alice: User, bob: User
) -> None:
    key = new_key(alice)
    name = SENDERS[0]
    assert partial(post((FIXTURES / f"{name}.pb").read_bytes(), key, PROTOBUF)) == (0, "")
    span = Span.objects.filter(name__startswith="chat").first()
    assert span is not None
    theirs = record(bytes.fromhex(span.trace_id), bytes.fromhex(span.span_id), **{"a": "b"})
    lost = record(b"", b"")
    answer = post(export_of(theirs, lost).SerializeToString(), new_key(bob), PROTOBUF, "/v1/logs")
    rejected, message = logs_partial(answer)
    assert rejected == 2
    assert "carry no span context" in message and "another sender's" in message


def test_bad_log_exports_get_otlps_answers(alice: User) -> None:
    key = new_key(alice)
    assert post(b"\x0a\xff", key, PROTOBUF, "/v1/logs").status_code == 400
    refused = post(b"{}", None, JSON, "/v1/logs")
    assert refused.status_code == 401 and "ingest key" in status_message(refused)
    bad_id = {"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "zz"}]}]}]}
    answer = post(json.dumps(bad_id).encode(), key, JSON, "/v1/logs")
    assert answer.status_code == 400 and "logRecords[0].traceId is not hex" in status_message(
        answer
    )
    asked = Client().get("/v1/logs", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert asked.status_code == 405 and "send logs with POST" in status_message(asked)


def hostile_export(depth: int) -> bytes:
    deep: Any = "bottom"
    for _ in range(depth):
        deep = {"down": deep}
    body = {"content": "<script>alert(1)</script>\x00\ud800", "deep": deep}
    document = {"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "eventName": "gen_ai.user.message",
         "body": _any(body), "attributes": [{"key": "k\x00", "value": {"stringValue": "v"}}]},
    ]}]}]}  # fmt: skip
    return json.dumps(document).encode()


def test_hostile_records_are_kept_as_text(alice: User) -> None:
    key = new_key(alice)
    too_deep = post(hostile_export(150), key, JSON, "/v1/logs")
    assert too_deep.status_code == 400 and "nested too deeply" in status_message(too_deep)
    assert logs_partial(post(hostile_export(10), key, JSON, "/v1/logs")) == (0, "")
    (kept,) = PendingLog.objects.all()
    content = json.loads(kept.event["attributes"][BODY])
    assert content["content"] == "<script>alert(1)</script>\ufffd\ufffd"  # text, replaced
    assert "k\ufffd" in kept.event["attributes"]


def _any(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in value.items()]}}
    return {"stringValue": str(value)}
