"""An outside span as a version of the span store's."""

from __future__ import annotations

from agentdash.ingest import semconv
from agentdash.ingest.otlp_spans import IncomingSpan
from agentdash.spans.span_version import SpanVersion
from runtime.telemetry.attributes import AgentDash

SERVICE_NAME = "service.name"


def span_version_of(
    span: IncomingSpan, session_id: str | None, source_id: int | None
) -> SpanVersion:
    """The span as the store takes it: its attributes read into the runtime's names
    (``semconv.mapped``: what was added named, what was replaced kept)."""
    attributes = semconv.mapped(span.attributes, span.name, span.events)
    service = span.resource.get(SERVICE_NAME)
    if service is not None:
        attributes.setdefault(SERVICE_NAME, service)
    added = [
        key
        for key in attributes
        if key not in span.attributes and not key.startswith(semconv.SENT_PREFIX)
    ]
    if added:
        attributes[AgentDash.INGEST_ADDED] = added
    return SpanVersion(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        name=span.name,
        kind=span.kind,
        start_time=span.start_time,
        end_time=span.end_time,
        status=span.status,
        status_message=span.status_message,
        attributes=attributes,
        events=span.events,
        session_id=session_id,
        otlp=span.otlp,
        source_id=source_id,
    )
