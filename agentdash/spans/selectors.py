"""Reads of the span store: a trace's spans, a session's spans."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from agentdash.spans.change_items import span_item
from agentdash.spans.models import Span


def spans_for_trace(*, trace_id: str) -> QuerySet[Span]:
    """The trace's spans in start order (ties by id, i.e. first stored first)."""
    return Span.objects.filter(trace_id=trace_id).order_by("start_time", "id")


def spans_for_session(*, session_id: str) -> QuerySet[Span]:
    """The session's spans in start order."""
    return Span.objects.filter(session_id=session_id).order_by("start_time", "id")


def span_detail(*, session_id: str, trace_id: str, span_id: str) -> dict[str, Any] | None:
    """One span of the session as a ``span`` change sends it, plus ``seq`` (the change that
    last wrote it); ``None`` when the session has no such span."""
    row = Span.objects.filter(session_id=session_id, trace_id=trace_id, span_id=span_id).first()
    return None if row is None else {**span_item(row), "seq": row.seq}
