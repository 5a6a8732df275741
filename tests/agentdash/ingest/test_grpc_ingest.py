"""OTLP/gRPC ingest: the official gRPC exporter's spans land as OTLP/HTTP's do; every bad
input gets its gRPC status (never a crash, and the server takes the next good export); the
key comes from the ``authorization`` metadata; gzip is gRPC's. The server runs in this test
process, on a free port, with the test database."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from google.rpc import error_details_pb2, status_pb2
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentdash.agent_sessions.models import AgentSession
from agentdash.ingest.grpc_server import DETAILS_KEY, EXPORT, LOGS_EXPORT, grpc_server_start
from agentdash.ingest.keys import ingest_key_create, ingest_key_revoke
from agentdash.ingest.models import IngestKey
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import agent_run, every_field_request, request_of, span
from tests.agentdash.live_harness import ROOT, free_port

pytestmark = pytest.mark.django_db(transaction=True)

T1 = "5b8efff798038103d269b633813fc60c"


@pytest.fixture
def grpc_port(settings: Any) -> Iterator[int]:
    settings.AGENTDASH = {**getattr(settings, "AGENTDASH", {}), "INGEST_MAX_BODY_BYTES": 200_000}
    bound: list[int] = []
    server = grpc_server_start("127.0.0.1:0", workers=2, on_bound=bound.append)
    assert server is not None
    try:
        yield bound[0]
    finally:
        server.stop(None)


def new_key(owner: User) -> str:
    return ingest_key_create(name="grpc", project="shop", owner=owner, actor=owner)[1]


def call(
    port: int,
    body: bytes,
    *,
    key: str | None = None,
    method: str = EXPORT,
    compression: grpc.Compression | None = None,
) -> tuple[grpc.StatusCode, Any]:
    """One raw unary call: (its status, the response or the error)."""
    metadata = [("authorization", f"Bearer {key}")] if key else []
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = channel.unary_unary(method)
        try:
            answer = stub(body, metadata=metadata, timeout=30, compression=compression)
        except grpc.RpcError as error:
            return error.code(), error
    return grpc.StatusCode.OK, ExportTraceServiceResponse.FromString(answer)


def retry_delay(error: Any) -> int:
    """The seconds of the ``google.rpc.RetryInfo`` in the error's status details."""
    found = dict(error.trailing_metadata() or ())
    status = status_pb2.Status.FromString(found[DETAILS_KEY])
    info = error_details_pb2.RetryInfo()
    assert status.details[0].Unpack(info)
    return info.retry_delay.seconds


def sdk_spans() -> list[Any]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "grpc-shop"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    agent_run(provider.get_tracer("shop"), "grpc-conv")
    return list(memory.get_finished_spans())


@pytest.mark.parametrize("compression", [None, grpc.Compression.Gzip])
def test_the_official_grpc_exporter_lands_in_its_owners_session(
    grpc_port: int, alice: User, compression: Any
) -> None:
    key = new_key(alice)
    exporter = OTLPSpanExporter(
        endpoint=f"127.0.0.1:{grpc_port}",
        insecure=True,
        headers={"authorization": f"Bearer {key}"},
        compression=compression,
    )
    spans = sdk_spans()
    assert exporter.export(spans) is SpanExportResult.SUCCESS
    exporter.shutdown()
    (session,) = AgentSession.objects.all()
    assert session.owner == alice
    stored = Span.objects.filter(session=session)
    assert stored.count() == len(spans) == 3
    model = stored.get(name__startswith="chat")
    assert model.attributes["agentdash.span.kind"] == "model"
    assert model.source is not None and model.source.resource["service.name"] == "grpc-shop"


def test_no_key_an_unknown_or_a_revoked_one_is_unauthenticated(grpc_port: int, alice: User) -> None:
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    code, error = call(grpc_port, body)
    assert code is grpc.StatusCode.UNAUTHENTICATED and "Bearer" in error.details()
    assert call(grpc_port, body, key="agd_nope")[0] is grpc.StatusCode.UNAUTHENTICATED
    key = new_key(alice)
    ingest_key_revoke(key=IngestKey.objects.get(), actor=alice)
    assert call(grpc_port, body, key=key)[0] is grpc.StatusCode.UNAUTHENTICATED
    assert not Span.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        b"\xff\xff\xff\xff",  # not protobuf
        b"\x0a\x05\x0a\x03",  # a field that ends early
        b"\x0a" + b"\x80" * 10,  # a length that never ends
    ],
)
def test_a_malformed_message_is_invalid_argument_saying_why(
    grpc_port: int, alice: User, body: bytes
) -> None:
    key = new_key(alice)
    code, error = call(grpc_port, body, key=key)
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert "ExportTraceServiceRequest" in error.details()
    good = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    assert call(grpc_port, good, key=key)[0] is grpc.StatusCode.OK  # not wedged


def test_too_large_as_sent_or_decompressed_is_resource_exhausted(
    grpc_port: int, alice: User
) -> None:
    key = new_key(alice)
    big = request_of(span(T1, "00000000000000a1", "x", blob="y" * 300_000)).SerializeToString()
    assert call(grpc_port, big, key=key)[0] is grpc.StatusCode.RESOURCE_EXHAUSTED
    # Small on the wire, too large once gRPC inflates it.
    code, _ = call(grpc_port, big, key=key, compression=grpc.Compression.Gzip)
    assert len(gzip.compress(big)) < 200_000 and code is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert not Span.objects.exists()
    good = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    assert call(grpc_port, good, key=key)[0] is grpc.StatusCode.OK


def test_spans_not_taken_are_named_in_partial_success(grpc_port: int, alice: User) -> None:
    message = request_of(span(T1, "00000000000000a1", "ok"), span(T1, "00000000000000a2", "bad"))
    message.resource_spans[0].scope_spans[0].spans[1].trace_id = b"\x00" * 16
    code, answer = call(grpc_port, message.SerializeToString(), key=new_key(alice))
    assert code is grpc.StatusCode.OK
    assert answer.partial_success.rejected_spans == 1
    assert "trace_id" in answer.partial_success.error_message
    assert Span.objects.count() == 1


def test_a_key_past_its_rate_is_told_when_to_come_back(
    grpc_port: int, alice: User, settings: Any
) -> None:
    settings.AGENTDASH = {**settings.AGENTDASH, "INGEST_RATE_PER_S": 0.01, "INGEST_BURST": 1}
    key = new_key(alice)
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    assert call(grpc_port, body, key=key)[0] is grpc.StatusCode.OK
    code, error = call(grpc_port, body, key=key)
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED and retry_delay(error) >= 1


def test_a_database_outage_is_unavailable_to_retry_and_stores_nothing(
    grpc_port: int, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.db import OperationalError

    from agentdash.ingest import receive

    def unreachable(**kwargs: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    key = new_key(alice)
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    monkeypatch.setattr(receive, "spans_ingest", unreachable)
    code, error = call(grpc_port, body, key=key)
    assert code is grpc.StatusCode.UNAVAILABLE and retry_delay(error) == 5
    assert "unreachable" in error.details() and not Span.objects.exists()
    monkeypatch.undo()
    assert call(grpc_port, body, key=key)[0] is grpc.StatusCode.OK


def test_a_failure_of_ours_is_internal_and_the_server_goes_on(
    grpc_port: int, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentdash.ingest import receive

    def broken(**kwargs: Any) -> Any:
        raise ZeroDivisionError("a bug")

    key = new_key(alice)
    body = request_of(span(T1, "00000000000000a1", "x")).SerializeToString()
    monkeypatch.setattr(receive, "spans_ingest", broken)
    assert call(grpc_port, body, key=key)[0] is grpc.StatusCode.INTERNAL
    monkeypatch.undo()
    assert call(grpc_port, body, key=key)[0] is grpc.StatusCode.OK


def test_any_other_method_is_unimplemented(grpc_port: int, alice: User) -> None:
    method = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
    assert call(grpc_port, b"", key=new_key(alice), method=method)[0] is (
        grpc.StatusCode.UNIMPLEMENTED
    )


def test_every_field_is_kept_over_grpc_too(grpc_port: int, alice: User) -> None:
    sent = every_field_request()
    assert call(grpc_port, sent.SerializeToString(), key=new_key(alice))[0] is grpc.StatusCode.OK
    agent = Span.objects.get(span_id="b7ad6b7169203331")
    assert agent.otlp["traceState"] == "vendor=abc,other=1"
    assert agent.source is not None and agent.source.scope_name == "billing.agent"
    assert isinstance(ExportTraceServiceRequest.FromString(sent.SerializeToString()), object)


def test_a_second_server_on_a_taken_port_says_so_and_serves_nothing(grpc_port: int) -> None:
    assert grpc_server_start(f"127.0.0.1:{grpc_port}", workers=1) is None


@pytest.mark.slow  # a manage.py of its own
def test_a_management_command_never_serves_the_machines_port(tmp_path: Path) -> None:
    # A system check imports the ASGI application; only a server process may serve gRPC.
    port = free_port()
    env = {**os.environ, "AGENTDASH_OTLP_GRPC": f"127.0.0.1:{port}",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}  # fmt: skip
    env.pop("PYTEST_CURRENT_TEST", None)
    ran = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "OTLP/gRPC: serving" not in ran.stdout + ran.stderr


def test_log_records_over_grpc_become_their_spans_events(grpc_port: int, alice: User) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    name = "genai_openai_v2_event_only"  # the instrumentation's latest: one event a call
    key = new_key(alice)
    spans = ExportTraceServiceRequest.FromString((fixtures / f"{name}.pb").read_bytes())
    assert call(grpc_port, spans.SerializeToString(), key=key)[0] is grpc.StatusCode.OK
    logs = (fixtures / f"{name}.logs.pb").read_bytes()
    with grpc.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = channel.unary_unary(LOGS_EXPORT)
        metadata = [("authorization", f"Bearer {key}")]
        answer = ExportLogsServiceResponse.FromString(stub(logs, metadata=metadata, timeout=30))
        assert not answer.HasField("partial_success")
        with pytest.raises(grpc.RpcError) as bad:
            stub(b"\x0a\xff", metadata=metadata, timeout=30)
        assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "ExportLogsServiceRequest" in str(bad.value.details())
        with pytest.raises(grpc.RpcError) as keyless:
            stub(logs, timeout=30)
        assert keyless.value.code() is grpc.StatusCode.UNAUTHENTICATED
    chats = Span.objects.filter(name__startswith="chat").order_by("start_time")
    assert [len(s.events) for s in chats] == [1, 1]
    assert all("gen_ai.input.messages" in s.attributes for s in chats)


SERVE_AND_RUN_CODE = """
import asyncio, os
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "agentdash.settings")
django.setup()
from agentdash.ingest.grpc_server import grpc_server_start
from runtime.code_executors import sandbox_run
assert grpc_server_start("127.0.0.1:0", workers=2) is not None
async def runs():
    return [await sandbox_run("print(42)") for _ in range(3)]
print([(o.exit_code, o.stdout, o.stderr) for o in asyncio.run(runs())])
"""


@pytest.mark.slow  # a process that serves gRPC and runs code in the sandbox
def test_a_process_serving_grpc_forks_its_sandboxes_without_grpcs_fork_handlers() -> None:
    """The server process serves OTLP/gRPC and starts sandboxes by fork and exec: gRPC's
    fork handlers (on by default) ran in the children and now and then one died before it
    was let go. The settings turn them off; with them on, gRPC says so at every fork."""
    env = {k: v for k, v in os.environ.items() if k != "GRPC_ENABLE_FORK_SUPPORT"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE_AND_RUN_CODE], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fork" not in done.stderr.lower(), done.stderr[-3000:]
    assert done.stdout.strip() == repr([(0, "42\n", "")] * 3)
