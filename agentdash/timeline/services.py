"""Writes of the timeline: span versions and the per-session change log."""

from __future__ import annotations

from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.db.models import Max

from agentdash.timeline.models import SessionChange, Span

SEQ_ATTEMPTS = 20


class SeqAllocationError(RuntimeError):
    """No free sequence number after ``SEQ_ATTEMPTS`` tries (heavy contention, or an insert
    failing for another reason, such as an unknown session)."""


def session_change_next(*, session_id: str, kind: str, ref: str) -> int:
    """Record one change of the session and return its ``seq``: one more than the highest so
    far, so a session's seqs run 1, 2, 3 … without gaps between committed changes.

    Safe under concurrency on SQLite and PostgreSQL: the (session, seq) unique constraint
    decides; a writer that loses the race retries with a fresh maximum (bounded by
    ``SEQ_ATTEMPTS``, then :class:`SeqAllocationError`). Runs in a savepoint, so it may be
    called inside the caller's transaction; the seq is only final when that commits.
    """
    last_error: IntegrityError | None = None
    for _ in range(SEQ_ATTEMPTS):
        try:
            with transaction.atomic():
                top = SessionChange.objects.filter(session_id=session_id).aggregate(m=Max("seq"))
                seq = (top["m"] or 0) + 1
                SessionChange.objects.create(session_id=session_id, seq=seq, kind=kind, ref=ref)
            return seq
        except IntegrityError as exc:
            last_error = exc
    raise SeqAllocationError(
        f"could not allocate a change seq for session {session_id!r} after {SEQ_ATTEMPTS} attempts"
    ) from last_error


class SpanWrite(NamedTuple):
    """What ``span_upsert`` did: ``stored`` False when a final version was already there;
    ``seq`` is the session change recorded for the write (``None`` without a session)."""

    stored: bool
    seq: int | None


def span_upsert(
    *,
    trace_id: str,
    span_id: str,
    name: str,
    start_time: int,
    end_time: int | None = None,
    parent_span_id: str = "",
    kind: str = "internal",
    status: str = Span.Status.UNSET,
    status_message: str = "",
    attributes: dict[str, Any] | None = None,
    events: list[Any] | None = None,
    session_id: str | None = None,
    run_id: int | None = None,
) -> SpanWrite:
    """Store this version of span ``(trace_id, span_id)``.

    A started span (``end_time`` None) is written when the span is new or still open; an
    ended span replaces an open one. An ended span is final: any later write for it, ended or
    not, is ignored (``stored`` False), so versions arriving out of order never regress it.
    When stored with a ``session_id``, the write gets the session's next change seq (kind
    ``span``, ref ``trace:span``), also saved on the row, in the same transaction.
    """
    fields: dict[str, Any] = {
        "name": name,
        "parent_span_id": parent_span_id,
        "kind": kind,
        "start_time": start_time,
        "end_time": end_time,
        "status": status,
        "status_message": status_message,
        "attributes": attributes or {},
        "events": events or [],
        "session_id": session_id,
        "run_id": run_id,
    }
    identity = {"trace_id": trace_id, "span_id": span_id}
    with transaction.atomic():
        # Conditional on the stored row still being open: the database, not this process,
        # decides whether a final version is already there.
        stored = Span.objects.filter(**identity, end_time__isnull=True).update(**fields) == 1
        if not stored and not Span.objects.filter(**identity).exists():
            try:
                with transaction.atomic():
                    Span.objects.create(**identity, **fields)
                stored = True
            except IntegrityError:  # inserted concurrently: overwrite it only if still open
                open_span = Span.objects.filter(**identity, end_time__isnull=True)
                stored = open_span.update(**fields) == 1
        if not stored or session_id is None:
            return SpanWrite(stored=stored, seq=None)
        seq = session_change_next(
            session_id=session_id, kind=SessionChange.Kind.SPAN, ref=f"{trace_id}:{span_id}"
        )
        Span.objects.filter(**identity).update(seq=seq)
    return SpanWrite(stored=True, seq=seq)
