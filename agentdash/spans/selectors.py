"""Reads of the span store: a trace's spans, a session's spans."""

from __future__ import annotations

from django.db.models import QuerySet

from agentdash.spans.models import Span


def spans_for_trace(*, trace_id: str) -> QuerySet[Span]:
    """The trace's spans in start order (ties by id, i.e. first stored first)."""
    return Span.objects.filter(trace_id=trace_id).order_by("start_time", "id")


def spans_for_session(*, session_id: str) -> QuerySet[Span]:
    """The session's spans in start order."""
    return Span.objects.filter(session_id=session_id).order_by("start_time", "id")
