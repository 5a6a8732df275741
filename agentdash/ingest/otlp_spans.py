"""The spans of an ``ExportTraceServiceRequest`` as plain values, checked and capped.

A span whose ids OTLP forbids (a trace id that is not 16 bytes or is all zeros, a span id
that is not 8 bytes or is all zeros, a parent id of the wrong length) or with no start time
is rejected, and said so in the answer's partial success; everything else is taken. Values
are kept as sent — strings, numbers, lists, maps — except that a string longer than
:data:`~IngestLimits.max_value_chars` is cut (the key listed in
``agentdash.ingest.truncated``), a list or map is cut to :data:`MAX_ITEMS` entries, and a
span keeps at most :data:`MAX_ATTRIBUTES` attributes, :data:`MAX_EVENTS` events and
:data:`MAX_LINKS` links (the numbers AgentDash dropped in ``agentdash.ingest.dropped``).

Nothing else is lost: each span keeps its resource and instrumentation scope (a
:class:`~agentdash.spans.sources.Source`), its flags, trace state, links and the sender's own
dropped counts (``IncomingSpan.otlp``, in OTLP/JSON's names).
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

from agentdash.spans.sources import Source

MAX_ATTRIBUTES = 512
MAX_EVENTS = 256
MAX_LINKS = 128
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
    source: Source = field(default_factory=Source)
    otlp: dict[str, Any] = field(default_factory=dict)

    @property
    def resource(self) -> dict[str, Any]:
        return self.source.resource


@dataclass
class Unpacked:
    spans: list[IncomingSpan]
    rejected: int
    problems: list[str]


class Caps:
    """Values of one span or log record as plain values, cut where they are too large (what
    was cut and dropped is counted, for the item's own record of it)."""

    def __init__(self, max_value_chars: int) -> None:
        self.max_value_chars = max_value_chars
        self.truncated: list[str] = []
        self.dropped = 0

    def value(self, value: AnyValue, key: str) -> Any:
        which = value.WhichOneof("value")
        if which == "string_value":
            return self.text(value.string_value, key)
        if which == "bool_value":
            return value.bool_value
        if which == "int_value":
            return value.int_value
        if which == "double_value":
            number = value.double_value
            return number if math.isfinite(number) else str(number)
        if which == "bytes_value":
            return self.text(base64.b64encode(value.bytes_value).decode("ascii"), key)
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

    def text(self, text: str, key: str) -> str:
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
            key = self.text(kv.key, "(attribute name)") if kv.key else "(no name)"
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


def unpack(
    request: ExportTraceServiceRequest, *, max_value_chars: int, part: tuple[int, int] = (0, 1)
) -> Unpacked:
    """Every span of ``request`` that can be taken, in the order sent, and what was not.
    ``part`` ``(i, n)``: only the i-th of n runs of the spans as sent (all the parts, in
    order, are the whole)."""
    spans: list[IncomingSpan] = []
    problems: list[str] = []
    rejected = 0
    index, parts = part
    total = sum(len(ss.spans) for rs in request.resource_spans for ss in rs.scope_spans)
    first, past = total * index // parts, total * (index + 1) // parts
    position = -1
    for r, resource_spans in enumerate(request.resource_spans):
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            source: Source | None = None
            for n, span in enumerate(scope_spans.spans):
                position += 1
                if not first <= position < past:
                    continue
                if source is None:
                    source = _source(resource_spans, scope_spans, max_value_chars)
                problem = _span_problem(span)
                if problem is not None:
                    rejected += 1
                    problems.append(f"resource {r} scope {s} span {n}: {problem}")
                    continue
                spans.append(_incoming(span, source, max_value_chars))
    return Unpacked(spans=spans, rejected=rejected, problems=problems)


def _source(resource_spans: Any, scope_spans: Any, max_value_chars: int) -> Source:
    resource, scope = resource_spans.resource, scope_spans.scope
    caps = Caps(max_value_chars)
    resource_attributes = caps.attributes(resource.attributes)
    resource_dropped = resource.dropped_attributes_count + caps.dropped
    caps = Caps(max_value_chars)
    scope_attributes = caps.attributes(scope.attributes)
    return Source(
        resource=resource_attributes,
        resource_schema_url=caps.text(resource_spans.schema_url, "(schema url)"),
        resource_dropped=resource_dropped,
        scope_name=caps.text(scope.name, "(scope name)"),
        scope_version=caps.text(scope.version, "(scope version)"),
        scope_attributes=scope_attributes,
        scope_schema_url=caps.text(scope_spans.schema_url, "(schema url)"),
        scope_dropped=scope.dropped_attributes_count + caps.dropped,
    )


def _incoming(span: ProtoSpan, source: Source, max_value_chars: int) -> IncomingSpan:
    caps = Caps(max_value_chars)
    attributes = caps.attributes(span.attributes)
    events = []
    for index, event in enumerate(span.events):
        if index >= MAX_EVENTS:
            caps.dropped += 1
            continue
        found = {
            "name": caps.text(event.name, "(event name)"),
            "time": event.time_unix_nano,
            "attributes": caps.attributes(event.attributes, limit=64),
        }
        if event.dropped_attributes_count:
            found["dropped_attributes_count"] = event.dropped_attributes_count
        events.append(found)
    otlp = _otlp_rest(span, caps)
    if caps.truncated:
        attributes[TRUNCATED] = sorted(set(caps.truncated))
    if caps.dropped:
        attributes[DROPPED] = caps.dropped
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
        status_message=caps.text(span.status.message, "(status message)"),
        attributes=attributes,
        events=events,
        source=source,
        otlp=otlp,
    )


def _otlp_rest(span: ProtoSpan, caps: Caps) -> dict[str, Any]:
    """What of ``span`` the span store has no column for, in OTLP/JSON's names, only when
    set (links beyond :data:`MAX_LINKS` count as dropped by AgentDash)."""
    found: dict[str, Any] = {}
    if span.flags:
        found["flags"] = span.flags
    if span.trace_state:
        found["traceState"] = caps.text(span.trace_state, "(trace state)")
    links = []
    for index, link in enumerate(span.links):
        if index >= MAX_LINKS:
            caps.dropped += 1
            continue
        item: dict[str, Any] = {"traceId": _hex(link.trace_id), "spanId": _hex(link.span_id)}
        if link.trace_state:
            item["traceState"] = caps.text(link.trace_state, "(trace state)")
        if link.attributes:
            item["attributes"] = caps.attributes(link.attributes, limit=64)
        if link.dropped_attributes_count:
            item["droppedAttributesCount"] = link.dropped_attributes_count
        if link.flags:
            item["flags"] = link.flags
        links.append(item)
    if links:
        found["links"] = links
    for name, count in (
        ("droppedAttributesCount", span.dropped_attributes_count),
        ("droppedEventsCount", span.dropped_events_count),
        ("droppedLinksCount", span.dropped_links_count),
    ):
        if count:
            found[name] = count
    return found
