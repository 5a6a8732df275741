"""Reads of the timeline: a trace's spans, and a session's changes after a seq."""

from __future__ import annotations

from django.db.models import QuerySet

from agentdash.timeline.models import SessionChange, Span


def spans_for_trace(*, trace_id: str) -> QuerySet[Span]:
    """The trace's spans in start order (ties by id, i.e. first stored first)."""
    return Span.objects.filter(trace_id=trace_id).order_by("start_time", "id")


def spans_for_session(*, session_id: str) -> QuerySet[Span]:
    """The session's spans in start order."""
    return Span.objects.filter(session_id=session_id).order_by("start_time", "id")


def changes_after(
    *, session_id: str, seq: int, limit: int | None = None
) -> QuerySet[SessionChange]:
    """The session's changes with a seq above ``seq``, in seq order (at most ``limit``).

    What a reconnecting client asks for with the last seq it saw (0: everything)."""
    changes = SessionChange.objects.filter(session_id=session_id, seq__gt=seq).order_by("seq")
    return changes[:limit] if limit is not None else changes


def session_last_seq(*, session_id: str) -> int:
    """The session's highest change seq; 0 when it has none."""
    last = (
        SessionChange.objects.filter(session_id=session_id)
        .order_by("-seq")
        .values_list("seq", flat=True)
        .first()
    )
    return last or 0
