"""The spans of an ``ExportTraceServiceRequest`` as plain values, checked and capped.

A span whose ids OTLP forbids (a trace id that is not 16 bytes or is all zeros, a span id
that is not 8 bytes or is all zeros, a parent id of the wrong length) or with no start time
is rejected, and said so in the answer's partial success; everything else is taken. Values
are kept as sent — strings, numbers, lists, maps — except that a string longer than
:data:`~IngestLimits.max_value_chars` is cut (the key listed in
``agentdash.ingest.truncated``), a list or map is cut to :data:`MAX_ITEMS` entries, and a
span keeps at most :data:`MAX_ATTRIBUTES` attributes and :data:`MAX_EVENTS` events (the
numbers dropped in ``agentdash.ingest.dropped``).
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status as ProtoStatus

MAX_ATTRIBUTES = 512
MAX_EVENTS = 256
MAX_ITEMS = 1_000
TRUNCATED = "agentdash.ingest.truncated"
DROPPED = "agentdash.ingest.dropped"
CUT_MARK = "…[cut]"

_KINDS = {
    ProtoSpan.SPAN_KIND_INTERNAL: "internal",
    ProtoSpan.SPAN_KIND_SERVER: "server",
    ProtoSpan.SPAN_KIND_CLIENT: "client",
    ProtoSpan.SPAN_KIND_PRODUCER: "producer",
    ProtoSpan.SPAN_KIND_CONSUMER: "consumer",
}
_STATUSES = {
    ProtoStatus.STATUS_CODE_UNSET: "unset",
    ProtoStatus.STATUS_CODE_OK: "ok",
    ProtoStatus.STATUS_CODE_ERROR: "error",
}


@dataclass
class IncomingSpan:
    """One span as sent (ids in lowercase hex; ``end_time`` ``None`` while it runs)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: str
    start_time: int
    end_time: int | None
    status: str
    status_message: str
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""


@dataclass
class Unpacked:
    spans: list[IncomingSpan]
    rejected: int
    problems: list[str]


class _Caps:
    def __init__(self, max_value_chars: int) -> None:
        self.max_value_chars = max_value_chars
        self.truncated: list[str] = []
        self.dropped = 0

    def value(self, value: AnyValue, key: str) -> Any:
        which = value.WhichOneof("value")
        if which == "string_value":
            return self._text(value.string_value, key)
        if which == "bool_value":
            return value.bool_value
        if which == "int_value":
            return value.int_value
        if which == "double_value":
            number = value.double_value
            return number if math.isfinite(number) else str(number)
        if which == "bytes_value":
            return self._text(base64.b64encode(value.bytes_value).decode("ascii"), key)
        if which == "array_value":
            items = value.array_value.values
            if len(items) > MAX_ITEMS:
                self.truncated.append(key)
            return [self.value(item, key) for item in items[:MAX_ITEMS]]
        if which == "kvlist_value":
            pairs = value.kvlist_value.values
            if len(pairs) > MAX_ITEMS:
                self.truncated.append(key)
            return {kv.key: self.value(kv.value, key) for kv in pairs[:MAX_ITEMS]}
        return None  # an empty AnyValue

    def _text(self, text: str, key: str) -> str:
        if len(text) <= self.max_value_chars:
            return text
        self.truncated.append(key)
        return text[: self.max_value_chars] + CUT_MARK

    def attributes(self, pairs: Any, limit: int = MAX_ATTRIBUTES) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for kv in pairs:
            if len(found) >= limit:
                self.dropped += 1
                continue
            key = self._text(kv.key, "(attribute name)") if kv.key else "(no name)"
            found[key] = self.value(kv.value, key)
        return found


LATEST_NANOS = 2**63  # times are stored as signed 64-bit integers


def _hex(raw: bytes) -> str:
    return raw.hex()


def _span_problem(span: ProtoSpan) -> str | None:
    if len(span.trace_id) != 16 or not any(span.trace_id):
        return f"trace_id must be 16 bytes, not all zero (got {len(span.trace_id)} bytes)"
    if len(span.span_id) != 8 or not any(span.span_id):
        return f"span_id must be 8 bytes, not all zero (got {len(span.span_id)} bytes)"
    if span.parent_span_id and len(span.parent_span_id) != 8:
        return f"parent_span_id must be empty or 8 bytes (got {len(span.parent_span_id)})"
    if span.start_time_unix_nano <= 0:
        return "start_time_unix_nano is missing"
    for name in ("start_time_unix_nano", "end_time_unix_nano"):
        if getattr(span, name) >= LATEST_NANOS:
            return f"{name} is past 2^63 ns (the year 2262): no database column holds it"
    if span.end_time_unix_nano and span.end_time_unix_nano < span.start_time_unix_nano:
        return "end_time_unix_nano is before start_time_unix_nano"
    return None


def unpack(request: ExportTraceServiceRequest, *, max_value_chars: int) -> Unpacked:
    """Every span of ``request`` that can be taken, in the order sent, and what was not."""
    spans: list[IncomingSpan] = []
    problems: list[str] = []
    rejected = 0
    for r, resource_spans in enumerate(request.resource_spans):
        resource = _Caps(max_value_chars).attributes(resource_spans.resource.attributes)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for n, span in enumerate(scope_spans.spans):
                problem = _span_problem(span)
                if problem is not None:
                    rejected += 1
                    problems.append(f"resource {r} scope {s} span {n}: {problem}")
                    continue
                spans.append(_incoming(span, resource, scope_spans.scope.name, max_value_chars))
    return Unpacked(spans=spans, rejected=rejected, problems=problems)


def _incoming(
    span: ProtoSpan, resource: dict[str, Any], scope: str, max_value_chars: int
) -> IncomingSpan:
    caps = _Caps(max_value_chars)
    attributes = caps.attributes(span.attributes)
    events = []
    for index, event in enumerate(span.events):
        if index >= MAX_EVENTS:
            caps.dropped += 1
            continue
        events.append(
            {
                "name": caps._text(event.name, "(event name)"),
                "time": event.time_unix_nano,
                "attributes": caps.attributes(event.attributes, limit=64),
            }
        )
    dropped = caps.dropped + span.dropped_attributes_count + span.dropped_events_count
    if caps.truncated:
        attributes[TRUNCATED] = sorted(set(caps.truncated))
    if dropped:
        attributes[DROPPED] = dropped
    parent = _hex(span.parent_span_id) if any(span.parent_span_id) else ""
    end = span.end_time_unix_nano or None
    return IncomingSpan(
        trace_id=_hex(span.trace_id),
        span_id=_hex(span.span_id),
        parent_span_id=parent,
        name=span.name or "(no name)",
        kind=_KINDS.get(span.kind, "internal"),
        start_time=span.start_time_unix_nano,
        end_time=end,
        status=_STATUSES.get(span.status.code, "unset"),
        status_message=caps._text(span.status.message, "(status message)"),
        attributes=attributes,
        events=events,
        resource=resource,
        scope=scope,
    )
