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


EVERY_FIELD_TRACE = "0af7651916cd43dd8448eb211c80319c"
EVERY_FIELD_OTHER_TRACE = "5b8efff798038103d269b633813fc60c"


def every_field_request() -> ExportTraceServiceRequest:
    """One export using every field OTLP defines for resources, scopes, spans, events and
    links, two resources and three scopes."""
    return json_format.ParseDict(
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [
                            {"key": "service.name", "value": {"stringValue": "billing"}},
                            {"key": "service.version", "value": {"stringValue": "4.2.0"}},
                            {"key": "host.name", "value": {"stringValue": "worker-7"}},
                            {"key": "process.pid", "value": {"intValue": "4242"}},
                            {
                                "key": "deployment.zones",
                                "value": {
                                    "arrayValue": {
                                        "values": [
                                            {"stringValue": "eu-1"},
                                            {"stringValue": "eu-2"},
                                        ]
                                    }
                                },
                            },
                        ],
                        "droppedAttributesCount": 3,
                    },
                    "schemaUrl": "https://opentelemetry.io/schemas/1.26.0",
                    "scopeSpans": [
                        {
                            "scope": {
                                "name": "billing.agent",
                                "version": "0.9.1",
                                "attributes": [
                                    {"key": "scope.team", "value": {"stringValue": "payments"}}
                                ],
                                "droppedAttributesCount": 1,
                            },
                            "schemaUrl": "https://opentelemetry.io/schemas/1.27.0",
                            "spans": [
                                {
                                    "traceId": _b64(EVERY_FIELD_TRACE),
                                    "spanId": _b64("b7ad6b7169203331"),
                                    "traceState": "vendor=abc,other=1",
                                    "flags": 769,
                                    "name": "invoke_agent billing",
                                    "kind": "SPAN_KIND_SERVER",
                                    "startTimeUnixNano": "1700000000000000000",
                                    "endTimeUnixNano": "1700000002000000000",
                                    "attributes": [
                                        {
                                            "key": "gen_ai.operation.name",
                                            "value": {"stringValue": "invoke_agent"},
                                        },
                                        {
                                            "key": "gen_ai.conversation.id",
                                            "value": {"stringValue": "conv-links"},
                                        },
                                    ],
                                    "droppedAttributesCount": 2,
                                    "events": [
                                        {
                                            "timeUnixNano": "1700000001000000000",
                                            "name": "retry",
                                            "attributes": [
                                                {"key": "attempt", "value": {"intValue": "2"}}
                                            ],
                                            "droppedAttributesCount": 4,
                                        }
                                    ],
                                    "droppedEventsCount": 5,
                                    "links": [
                                        {
                                            "traceId": _b64(EVERY_FIELD_OTHER_TRACE),
                                            "spanId": _b64("051581bf3cb55c13"),
                                            "traceState": "vendor=xyz",
                                            "attributes": [
                                                {
                                                    "key": "link.reason",
                                                    "value": {"stringValue": "caused by"},
                                                }
                                            ],
                                            "droppedAttributesCount": 1,
                                            "flags": 257,
                                        },
                                        {
                                            "traceId": _b64("ffffffffffffffffffffffffffffffff"),
                                            "spanId": _b64("ffffffffffffffff"),
                                        },
                                    ],
                                    "droppedLinksCount": 6,
                                    "status": {"code": "STATUS_CODE_OK", "message": "done"},
                                }
                            ],
                        },
                        {
                            "scope": {"name": "billing.tools"},
                            "spans": [
                                {
                                    "traceId": _b64(EVERY_FIELD_TRACE),
                                    "spanId": _b64("00f067aa0ba902b7"),
                                    "parentSpanId": _b64("b7ad6b7169203331"),
                                    "name": "execute_tool refund",
                                    "kind": "SPAN_KIND_INTERNAL",
                                    "startTimeUnixNano": "1700000000500000000",
                                    "endTimeUnixNano": "1700000001500000000",
                                    "status": {"code": "STATUS_CODE_ERROR", "message": "no"},
                                }
                            ],
                        },
                    ],
                },
                {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": "ledger"}}]
                    },
                    "scopeSpans": [
                        {
                            "scope": {},
                            "spans": [
                                {
                                    "traceId": _b64(EVERY_FIELD_OTHER_TRACE),
                                    "spanId": _b64("051581bf3cb55c13"),
                                    "name": "ledger write",
                                    "kind": "SPAN_KIND_CONSUMER",
                                    "startTimeUnixNano": "1700000000200000000",
                                    "endTimeUnixNano": "1700000000300000000",
                                    "attributes": [
                                        {
                                            "key": "gen_ai.conversation.id",
                                            "value": {"stringValue": "conv-links"},
                                        }
                                    ],
                                }
                            ],
                        }
                    ],
                },
            ]
        },
        ExportTraceServiceRequest(),
    )


def _b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode("ascii")
