"""OTLP in, end to end, on the embedded default: daphne in its own process, an ingest key made
with ``manage.py ingest_key``, an OpenTelemetry SDK app exporting with the official OTLP/HTTP
exporter; the key's owner sees the session in her list and, on its socket, the next trace's
spans arrive live — sent by the official OTLP/gRPC exporter to the same process, and read in
its decoding process (on by default on two CPUs or more: the project's tests turn it off
elsewhere)."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from grpc import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from prometheus_client.parser import text_string_to_metric_families

from tests.agentdash.ingest.ingest_server import (
    embedded_server,
    external_sessions,
    key_create,
    otlp_send,
    span_names,
)
from tests.agentdash.ingest.otlp_bodies import agent_run
from tests.agentdash.live_harness import Browserless, LiveClient

pytestmark = [pytest.mark.slow, pytest.mark.own_servers]


def sdk_app(url: str, key: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    exporter = OTLPSpanExporter(
        endpoint=f"{url}/v1/traces", headers={"Authorization": f"Bearer {key}"}
    )
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    return provider


def grpc_app(address: str, key: str) -> TracerProvider:
    """The same app exporting over OTLP/gRPC (gzip), its key in the metadata."""
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
        OTLPSpanExporter as GrpcExporter,
    )

    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    exporter = GrpcExporter(
        endpoint=address,
        insecure=True,
        headers={"authorization": f"Bearer {key}"},
        compression=Compression.Gzip,
    )
    provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=50))
    return provider


async def watch(alice: Browserless, session_id: str, provider: TracerProvider) -> None:
    client = LiveClient(alice, session_id)
    try:
        await client.open()
        await client.hello(after_seq=alice.snapshot(session_id)["seq"])
        agent_run(provider.get_tracer("shop"), "live-1")  # a second run, same conversation
        assert provider.force_flush(30_000)
        wanted = {"invoke_agent shopper", "chat gemini-2.5-flash", "execute_tool find_product"}
        found = await client.wait_for(
            lambda _: wanted <= set(span_names(client)) and span_names(client),
            "the second run's spans on the socket",
            timeout=60,
        )
        assert found["chat gemini-2.5-flash"]["attributes"]["agentdash.span.kind"] == "model"
        assert found["execute_tool find_product"]["end_time"] is not None
    finally:
        await client.close()


@pytest.fixture
def decoding_server(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """The embedded default as on a machine of two CPUs: a decoding process reads exports."""
    with embedded_server(tmp_path, AGENTDASH_INGEST_DECODE_PROCESSES="1") as found:
        yield found


def exports_read(url: str) -> dict[str, float]:
    """Trace exports read so far, by where (``/metrics``, read from this machine)."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=30) as answer:
        text = answer.read().decode()
    return {
        s.labels["where"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "agentdash_ingest_exports_read_total"
    }


def test_an_sdk_app_streams_into_its_owners_session(
    decoding_server: tuple[str, dict[str, str]],
) -> None:
    url, env = decoding_server
    key = key_create(env, "alice", "shop")
    provider = sdk_app(url, key)
    over_grpc = grpc_app(env["AGENTDASH_OTLP_GRPC"], key)
    try:
        agent_run(provider.get_tracer("shop"), "live-1")
        assert provider.force_flush(30_000)
        # The first export starts the decoding process (read by daphne meanwhile): the ones
        # after it, once it is up, are read there — the spans stream all the same.
        tracer, deadline, more = provider.get_tracer("shop"), time.monotonic() + 60, 0
        while not exports_read(url).get("split") and time.monotonic() < deadline:
            named = {"gen_ai.conversation.id": "live-1"}
            with tracer.start_as_current_span("warm-up", attributes=named):
                more += 1
            assert provider.force_flush(30_000)
        assert exports_read(url).get("split"), exports_read(url)
        alice = Browserless(url)
        alice.log_in("alice")
        (session_id,) = external_sessions(alice)  # the ingested session is in her list
        assert alice.snapshot(session_id)["spans_total"] == 3 + more
        asyncio.run(asyncio.wait_for(watch(alice, session_id, over_grpc), 120))
        assert alice.snapshot(session_id)["spans_total"] == 6 + more
        bob = Browserless(url)
        bob.log_in("bob")
        assert external_sessions(bob) == []
    finally:
        provider.shutdown()
        over_grpc.shutdown()


async def watch_a_span_run(alice: Browserless, session_id: str, provider: TracerProvider) -> None:
    """A tool call is on the socket while it runs (no end), then ended."""
    client = LiveClient(alice, session_id)
    try:
        await client.open()
        await client.hello(after_seq=alice.snapshot(session_id)["seq"])
        tracer = provider.get_tracer("shop")
        with (
            tracer.start_as_current_span(
                "invoke_agent shopper", attributes={"gen_ai.conversation.id": "live-1"}
            ),
            tracer.start_as_current_span(
                "execute_tool slow_lookup", attributes={"gen_ai.operation.name": "execute_tool"}
            ),
        ):
            running = await client.wait_for(
                lambda _: span_names(client).get("execute_tool slow_lookup"),
                "the running tool's start",
                timeout=60,
            )
            assert running["end_time"] is None  # seen while it still runs
        await client.wait_for(
            lambda _: (s := span_names(client).get("execute_tool slow_lookup")) and s["end_time"],
            "the tool's end",
            timeout=60,
        )
    finally:
        await client.close()


def test_agentdash_otel_streams_starts_too(server: tuple[str, dict[str, str]]) -> None:
    from agentdash.otel import install

    url, env = server
    key = key_create(env, "alice", "shop")
    provider = TracerProvider(resource=Resource.create({"service.name": "shop-agent"}))
    install(endpoint=url, key=key, provider=provider)
    try:
        agent_run(provider.get_tracer("shop"), "live-1")
        assert provider.force_flush(30_000)
        alice = Browserless(url)
        alice.log_in("alice")
        (session_id,) = external_sessions(alice)
        asyncio.run(asyncio.wait_for(watch_a_span_run(alice, session_id, provider), 120))
    finally:
        provider.shutdown()


def test_bodies_of_every_size_arrive_whole(server: tuple[str, dict[str, str]]) -> None:
    """An export under Twisted's 100 KB (its own buffer), one over it (kept in memory and
    handed to the application whole) and one over ``IN_MEMORY_BYTES`` (through a temporary
    file, in daphne's pieces) are each read whole: answered 200, every span stored."""
    from agentdash.http_limits import IN_MEMORY_BYTES
    from tests.agentdash.ingest.otlp_bodies import request_of, span

    url, env = server
    key = key_create(env, "alice", "shop")
    count = 20
    for n, size in enumerate([40_000, 600_000, IN_MEMORY_BYTES + 400_000], start=1):
        trace = f"{n:032x}"
        spans = [
            span(trace, f"{n:08x}{i + 1:08x}", f"part {i}", gen_ai__conversation__id="sizes",
                 blob=chr(65 + i % 26) * (size // count))
            for i in range(count)
        ]  # fmt: skip
        body = request_of(*spans).SerializeToString()
        assert len(body) > size
        otlp_send(url, key, body)
    alice = Browserless(url)
    alice.log_in("alice")
    (session_id,) = external_sessions(alice)
    assert alice.snapshot(session_id)["spans_total"] == 3 * count
