"""Reads of the change log: a session's changes after a seq, and its last seq."""

from __future__ import annotations

from django.db.models import QuerySet

from agentdash.changes.models import SessionChange


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
