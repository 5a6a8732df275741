"""OTLP request bodies for the ingest tests, made as senders make them: spans recorded by
the OpenTelemetry SDK and encoded by the official exporter's encoder (protobuf), the same
turned into OTLP/JSON (hex ids), and hand-made spans for what the SDK will not produce
(children before parents, bad ids, open spans)."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


@contextmanager
def recorded(service: str = "shop") -> Iterator[tuple[Tracer, Callable[[], list[ReadableSpan]]]]:
    """A tracer of a fresh SDK provider, and a function giving the spans it ended."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        yield provider.get_tracer("tests.ingest"), lambda: list(exporter.get_finished_spans())
    finally:
        provider.shutdown()


def agent_run(tracer: Tracer, conversation: str = "conv-1") -> None:
    """An agent run as the GenAI conventions describe it: agent → model call, tool call."""
    with tracer.start_as_current_span(
        "invoke_agent shopper",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": conversation,
        },
    ):
        with tracer.start_as_current_span(
            "chat gemini-2.5-flash",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gemini-2.5-flash",
                "gen_ai.usage.input_tokens": 120,
                "gen_ai.usage.output_tokens": 30,
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool find_product",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.call.arguments": '{"query": "tea"}',
            },
        ):
            pass


def protobuf_of(spans: list[ReadableSpan]) -> bytes:
    return encode_spans(spans).SerializeToString()


def json_of(message: ExportTraceServiceRequest) -> bytes:
    """``message`` in OTLP/JSON: protobuf's JSON mapping with hex trace and span ids."""
    document = json_format.MessageToDict(message)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for field in ("traceId", "spanId", "parentSpanId"):
                    if span.get(field):
                        span[field] = base64.b64decode(span[field]).hex()
    return json.dumps(document).encode()


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body)


def value(v: Any) -> AnyValue:
    """``v`` as an OTLP ``AnyValue`` (lists as arrays; anything else not a number or a bool
    as its text)."""
    if isinstance(v, bool):
        return AnyValue(bool_value=v)
    if isinstance(v, int):
        return AnyValue(int_value=v)
    if isinstance(v, float):
        return AnyValue(double_value=v)
    if isinstance(v, list):
        return AnyValue(array_value=ArrayValue(values=[value(x) for x in v]))
    return AnyValue(string_value=str(v))


def span(
    trace: str,
    span_id: str,
    name: str,
    *,
    parent: str = "",
    start: int = 1_700_000_000_000_000_000,
    end: int | None = 1_700_000_001_000_000_000,
    **attributes: Any,
) -> Span:
    """A hand-made span; ids in hex (``trace`` 32 digits, ``span_id`` 16), attribute keys
    with ``__`` for ``.``; ``end`` ``None``: still running."""
    return Span(
        trace_id=bytes.fromhex(trace),
        span_id=bytes.fromhex(span_id),
        parent_span_id=bytes.fromhex(parent) if parent else b"",
        name=name,
        start_time_unix_nano=start,
        end_time_unix_nano=end or 0,
        attributes=[
            KeyValue(key=k.replace("__", "."), value=value(v)) for k, v in attributes.items()
        ],
    )


def request_of(*spans: Span, service: str = "shop") -> ExportTraceServiceRequest:
    resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=list(spans))])
    resource_spans.resource.attributes.append(KeyValue(key="service.name", value=value(service)))
    return ExportTraceServiceRequest(resource_spans=[resource_spans])
