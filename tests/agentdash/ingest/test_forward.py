"""OTLP out as a collector: with ``AGENTDASH_OTLP_OUT_INGESTED`` on, what ingest takes reaches
the collector the standard variables name exactly as the sender sent it (resources, scopes,
every field, none of AgentDash's additions), over HTTP and gRPC alike; a collector that is
down or hangs never slows a sender, and a request is passed on once."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User

from agentdash.ingest.forward import Forwarder, forward_target, forwarder
from agentdash.spans.models import Span
from tests.agentdash.ingest.otlp_bodies import every_field_request
from tests.agentdash.ingest.test_otlp_ingest import new_key, partial, post
from tests.agentdash.otlp_collector import Collector

pytestmark = pytest.mark.django_db


@pytest.fixture
def forwarding(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    settings.AGENTDASH = {**getattr(settings, "AGENTDASH", {}), "OTLP_OUT_INGESTED": True}
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_a_taken_export_reaches_the_collector_as_sent(forwarding: Any, alice: User) -> None:
    with Collector() as collector:
        forwarding.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        forwarding.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=shop%20one,authorization=k1")
        sent = every_field_request()
        assert partial(post(sent.SerializeToString(), new_key(alice))) == (0, "")
        assert forwarder.flush()
        (received,) = collector.wait_for(lambda c: c.received, "the export")
        assert received.path == "/v1/traces"
        assert received.headers["x-team"] == "shop one"
        assert received.message == sent  # resources, scopes, spans: field for field
        # Sent again (an exporter's retry): nothing new is stored, nothing passed on again.
        post(sent.SerializeToString(), new_key(alice))
        assert forwarder.flush()
        assert len(collector.received) == 1


def test_off_by_default(settings: Any, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    with Collector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        post(every_field_request().SerializeToString(), new_key(alice))
        assert forwarder.flush()
        assert collector.received == [] and Span.objects.count() == 3


def test_a_collector_that_hangs_never_slows_the_sender(forwarding: Any, alice: User) -> None:
    with Collector() as collector:
        forwarding.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"{collector.url}/v1/traces")
        forwarding.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "20000")
        collector.hold()
        key = new_key(alice)
        started = time.monotonic()
        for n in range(3):
            message = every_field_request()
            for resource in message.resource_spans:
                for scope in resource.scope_spans:
                    for span in scope.spans:
                        span.trace_id = bytes([n + 1]) * 16
            assert partial(post(message.SerializeToString(), key)) == (0, "")
        # Three exports taken while the collector holds the first request: the sender never
        # waited for it (a bound on a wait, not a timing: holding lasts up to 60 s).
        assert time.monotonic() - started < 30
        collector.wait_for(lambda c: c.arrived >= 1, "the first request, held")
        collector.release()
        collector.wait_for(lambda c: len(c.received) == 3, "every export, once released")


def test_a_collector_that_is_down_costs_a_drop_not_an_error(alice: User) -> None:
    down = Forwarder()
    environ = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}  # nothing listens
    target = forward_target(environ)
    assert target == (
        "http://127.0.0.1:9/v1/traces",
        {"Content-Type": "application/x-protobuf"},
        10.0,
    )
    import agentdash.ingest.forward as forward

    original = forward.RETRY_S
    forward.RETRY_S = 0.01
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
            patch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
            assert down.put(b"\x0a\x00")
            assert down.flush()
    finally:
        forward.RETRY_S = original
    assert (down.sent, down.dropped) == (0, 1)


def test_a_full_queue_drops_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentdash.ingest.forward as forward

    monkeypatch.setattr(forward, "MAX_WAITING", 1)
    with Collector() as collector:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30000")
        collector.hold()
        full = Forwarder()
        assert full.put(b"")  # taken by the sending thread, which the collector holds
        collector.wait_for(lambda c: c.arrived == 1, "the first request, held")
        assert full.put(b"")  # waits in the queue (room for one)
        assert not full.put(b"")  # no room: dropped
        assert full.dropped == 1
        collector.release()
        assert full.flush() and full.sent == 2
