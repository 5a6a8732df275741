"""OTLP exports in protobuf's binary encoding (``?encoding=protobuf``, ``manage.py
export_session --encoding protobuf``): the body OTLP/HTTP receivers that take no JSON (Arize
Phoenix) accept. Decoded with opentelemetry-proto's own message, an export is the same
request as the OTLP/JSON one."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agentdash.agent_sessions.models import AgentSession
from agentdash.dashboard.exports.session_export import session_otlp_proto_parts
from agentdash.spans.models import Span
from tests.agentdash.dashboard.test_export import OTHER_TRACE, TRACE, body_of, spans_of, url
from tests.agentdash.otlp_receiver import otlp_parse
from tests.agentdash.stored import session_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(alice: User) -> AgentSession:
    """Alice's session, with spans of two traces."""
    found = session_of(alice, "export-1", app_name="capital_agent")
    spans_of(found, 3)
    spans_of(found, 2, trace_id=OTHER_TRACE, first=10)
    return found


def decoded(data: bytes) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest.FromString(data)


@pytest.mark.parametrize(
    ("name", "kwargs", "filename"),
    [
        ("session_export_otlp", {}, "agentdash-session-export-1.otlp.pb"),
        ("session_export_trace", {"trace_id": TRACE}, f"agentdash-trace-{TRACE}.otlp.pb"),
    ],
)
def test_a_protobuf_download_decodes_to_the_same_request_as_the_json_one(
    client: Client, alice: User, session: AgentSession, name: str, kwargs: Any, filename: str
) -> None:
    client.force_login(alice)
    response = client.get(url(name, session, **kwargs), {"encoding": "protobuf"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-protobuf"
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "no-store" in response["Cache-Control"]
    message = decoded(body_of(response))
    assert message == otlp_parse(body_of(client.get(url(name, session, **kwargs))))
    (resource,) = message.resource_spans
    assert {kv.key: kv.value.string_value for kv in resource.resource.attributes} == {
        "service.name": "capital_agent",
        "agentdash.session.id": "export-1",
    }
    spans = resource.scope_spans[0].spans
    stored = {(s.trace_id, s.span_id): s for s in Span.objects.filter(session=session)}
    assert len(spans) == (3 if kwargs else 5)
    for span in spans:
        row = stored[(span.trace_id.hex(), span.span_id.hex())]
        assert (span.name, span.start_time_unix_nano) == (row.name, row.start_time)


def test_an_unknown_encoding_is_a_400_that_says_which_there_are(
    client: Client, alice: User, session: AgentSession
) -> None:
    client.force_login(alice)
    response = client.get(url("session_export_otlp", session), {"encoding": "xml"})
    assert response.status_code == 400
    assert response.content == b"encoding must be json or protobuf"


def test_batches_are_written_one_after_another_and_read_as_one_request(alice: User) -> None:
    big = session_of(alice, "export-big-pb", app_name="capital_agent")
    spans_of(big, 23)
    parts = list(session_otlp_proto_parts(session=big, batch=5))
    assert len(parts) == 5  # one part a batch: nothing is held whole
    message = decoded(b"".join(parts))
    assert len(message.resource_spans) == 5
    names = [s.name for r in message.resource_spans for s in r.scope_spans[0].spans]
    assert names == [f"step {i}" for i in range(23)]
    resources = {r.resource.SerializeToString() for r in message.resource_spans}
    assert len(resources) == 1  # the same resource and scope each time


def test_a_session_without_spans_is_a_request_with_its_resource(alice: User) -> None:
    empty = session_of(alice, "export-empty-pb", app_name="capital_agent")
    (resource,) = decoded(b"".join(session_otlp_proto_parts(session=empty))).resource_spans
    assert resource.resource.attributes[0].value.string_value == "capital_agent"
    assert list(resource.scope_spans[0].spans) == []


def test_what_json_fixes_protobuf_carries_too(alice: User) -> None:
    odd = session_of(alice, "export-odd-pb", app_name="capital_agent")
    Span.objects.create(
        trace_id="not-a-trace-id", span_id="0" * 16, name="odd", start_time=1, session=odd,
        attributes={"big": 2**70, "deep": {"a": [{"b": None}]}},
    )  # fmt: skip
    (span,) = (
        decoded(b"".join(session_otlp_proto_parts(session=odd)))
        .resource_spans[0]
        .scope_spans[0]
        .spans
    )
    assert len(span.trace_id) == 16 and len(span.span_id) == 8 and any(span.span_id)
    values = {kv.key: kv.value for kv in span.attributes}
    assert values["agentdash.export.original_trace_id"].string_value == "not-a-trace-id"
    assert (
        values["deep"].kvlist_value.values[0].value.array_value.values[0].HasField("kvlist_value")
    )
    assert values["big"].string_value == str(2**70)


def test_the_command_writes_protobuf_to_a_file_or_standard_output(
    session: AgentSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "trace.otlp.pb"
    err = io.StringIO()
    call_command("export_session", "export-1", "--encoding", "protobuf", "-o", str(target),
                 stderr=err)  # fmt: skip
    assert len(decoded(target.read_bytes()).resource_spans[0].scope_spans[0].spans) == 5
    assert f"{target.stat().st_size:,} bytes to {target}" in err.getvalue()

    class Binary(io.StringIO):
        buffer = io.BytesIO()

    monkeypatch.setattr(sys, "stdout", Binary())
    call_command("export_session", "export-1", "--trace", TRACE, "--encoding", "protobuf")
    spans = decoded(Binary.buffer.getvalue()).resource_spans[0].scope_spans[0].spans
    assert {s.trace_id.hex() for s in spans} == {TRACE} and len(spans) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--encoding", "protobuf"], "protobuf is binary and this output takes text: use -o"),
        (["--encoding", "protobuf", "--format", "session"], "--encoding is OTLP's"),
    ],
)
def test_the_command_says_what_it_cannot_do(
    session: AgentSession, args: list[str], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        call_command("export_session", "export-1", *args, stdout=io.StringIO())
