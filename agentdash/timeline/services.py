"""Writes of the timeline: span versions and the per-session change log."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from django.db import IntegrityError, connection, transaction
from django.db.models import Max

from agentdash.agent_sessions.models import AgentSession
from agentdash.timeline.models import SessionChange, Span

SEQ_ATTEMPTS = 20
_SPAN_FIELDS = (
    "name",
    "parent_span_id",
    "kind",
    "start_time",
    "end_time",
    "status",
    "status_message",
    "attributes",
    "events",
    "session_id",
    "run_id",
)


class SeqAllocationError(RuntimeError):
    """No free sequence number after ``SEQ_ATTEMPTS`` tries (heavy contention, or an insert
    failing for another reason, such as an unknown session)."""


def session_change_next(*, session_id: str, kind: str, ref: str, announce: bool = True) -> int:
    """Record one change of the session and return its ``seq``: one more than the highest so
    far, so a session's seqs run 1, 2, 3 … without gaps between committed changes.

    Safe under concurrency on SQLite and PostgreSQL: every allocator of a session's seqs (this
    function and :func:`spans_store`) first holds the session row (``FOR NO KEY UPDATE``,
    which inserts referencing the session do not wait for; on SQLite, the write lock holds
    everything), so they queue per session instead of racing. Should an insert still lose
    (the unique constraint on (session, seq) decides), it is retried with a fresh maximum,
    ``SEQ_ATTEMPTS`` times, then :class:`SeqAllocationError`. Runs in a savepoint, so it may be
    called inside the caller's transaction; the seq is only final when that commits.

    With ``announce`` (the default) this process's live pipeline is poked once the
    transaction commits, so connected clients get the change within a flush (~50 ms); a
    rolled-back change announces nothing.
    """
    last_error: IntegrityError | None = None
    for _attempt in range(SEQ_ATTEMPTS):
        try:
            with transaction.atomic():
                _hold_sessions([session_id])
                top = SessionChange.objects.filter(session_id=session_id).aggregate(m=Max("seq"))
                seq = (top["m"] or 0) + 1
                SessionChange.objects.create(session_id=session_id, seq=seq, kind=kind, ref=ref)
            if announce:
                _announce_on_commit(session_id, seq)
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
    announce: bool = True,
) -> SpanWrite:
    """Store this version of span ``(trace_id, span_id)``.

    A started span (``end_time`` None) is written when the span is new or still open; an
    ended span replaces an open one. An ended span is final: any later write for it, ended or
    not, is ignored (``stored`` False), so versions arriving out of order never regress it.
    When stored with a ``session_id``, the write gets the session's next change seq (kind
    ``span``, ref ``trace:span``), also saved on the row, in the same transaction
    (``announce``: see :func:`session_change_next`).
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
        _hold_sessions([session_id] if session_id else [])  # the session, then its span
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
            session_id=session_id,
            kind=SessionChange.Kind.SPAN,
            ref=f"{trace_id}:{span_id}",
            announce=announce,
        )
        Span.objects.filter(**identity).update(seq=seq)
    return SpanWrite(stored=True, seq=seq)


@dataclass(frozen=True)
class SpanVersion:
    """One version of a span, as :func:`spans_store` takes it (fields as in ``span_upsert``)."""

    trace_id: str
    span_id: str
    name: str
    start_time: int
    end_time: int | None = None
    parent_span_id: str = ""
    kind: str = "internal"
    status: str = Span.Status.UNSET
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[Any] = field(default_factory=list)
    session_id: str | None = None
    run_id: int | None = None

    @property
    def identity(self) -> tuple[str, str]:
        return (self.trace_id, self.span_id)


def spans_store(*, versions: Sequence[SpanVersion], announce: bool = True) -> list[SpanWrite]:
    """Store many span versions with :func:`span_upsert`'s rules, in one transaction and a
    handful of queries whatever their number (the live pipeline's batch write).

    Versions of one span are coalesced first: the last one wins, except that an ended version
    is never replaced by an open one. Returns one :class:`SpanWrite` per span, in the
    order of their first version (``stored`` False for one whose final version was already
    there). Each session's seqs are allocated in that order. If another
    writer interferes (a seq or span inserted concurrently), the batch is redone span by span
    with ``span_upsert``; an error from that (e.g. an unknown session) propagates.
    """
    latest: dict[tuple[str, str], SpanVersion] = {}
    for version in versions:
        kept = latest.get(version.identity)
        if kept is None or kept.end_time is None or version.end_time is not None:
            latest[version.identity] = version
    if not latest:
        return []
    try:
        with transaction.atomic():
            return _store_batch(list(latest.values()), announce)
    except IntegrityError:
        return [span_upsert(**asdict(v), announce=announce) for v in latest.values()]


def _store_batch(versions: list[SpanVersion], announce: bool) -> list[SpanWrite]:
    # The sessions first, in one order (two flushers never wait on each other in a cycle),
    # then their spans: an event stored meanwhile queues behind this batch, or it behind it.
    _hold_sessions({v.session_id for v in versions if v.session_id is not None})
    wanted = {v.identity for v in versions}
    rows = (
        Span.objects.select_for_update(no_key=True)
        .filter(trace_id__in={t for t, _ in wanted}, span_id__in={s for _, s in wanted})
        .values_list("pk", "trace_id", "span_id", "end_time")
    )
    existing = {(t, s): (pk, end) for pk, t, s, end in rows if (t, s) in wanted}
    # An ended stored span is final: later versions of it are ignored.
    final = {key for key, (_, end) in existing.items() if end is not None}
    writes = [v for v in versions if v.identity not in final]
    sessions = {v.session_id for v in writes if v.session_id is not None}
    tops = dict(
        SessionChange.objects.filter(session_id__in=sessions)
        .values("session_id")
        .annotate(top=Max("seq"))
        .values_list("session_id", "top")
    )
    changes: list[SessionChange] = []
    seqs: list[int | None] = []
    for version in writes:
        if version.session_id is None:
            seqs.append(None)
            continue
        seq = tops.get(version.session_id, 0) + 1
        tops[version.session_id] = seq
        seqs.append(seq)
        ref = f"{version.trace_id}:{version.span_id}"
        changes.append(SessionChange(session_id=version.session_id, seq=seq, kind="span", ref=ref))
    with transaction.atomic():  # a savepoint: an insert lost to a racing writer fails here
        SessionChange.objects.bulk_create(changes)
        new, changed = [], []
        for version, seq in zip(writes, seqs, strict=True):
            fields = {name: getattr(version, name) for name in _SPAN_FIELDS}
            span = Span(trace_id=version.trace_id, span_id=version.span_id, seq=seq or 0, **fields)
            (changed if version.identity in existing else new).append(span)
        Span.objects.bulk_create(new)  # a span inserted meanwhile elsewhere fails: redone
        # Rows known open and held (locked above; on SQLite the write lock holds them all):
        # one INSERT … ON CONFLICT DO UPDATE rewrites them, where bulk_update would build a
        # CASE per field and row.
        Span.objects.bulk_create(
            changed,
            update_conflicts=True,
            unique_fields=["trace_id", "span_id"],
            update_fields=[*_SPAN_FIELDS, "seq"],
        )
    if announce:
        firsts: dict[str, int] = {}
        for change in changes:
            firsts.setdefault(change.session_id, change.seq)
        for session_id, seq in firsts.items():
            _announce_on_commit(session_id, seq)
    written = dict(zip((v.identity for v in writes), seqs, strict=True))
    return [
        SpanWrite(stored=True, seq=written[v.identity])
        if v.identity in written
        else SpanWrite(stored=False, seq=None)
        for v in versions
    ]


def _hold_sessions(session_ids: Iterable[str]) -> None:
    """Lock the sessions' rows until the transaction ends (``FOR NO KEY UPDATE``, in id
    order; a no-op on SQLite, whose write lock is held already)."""
    ids = sorted(session_ids)
    if ids and connection.features.has_select_for_update:
        sessions = AgentSession.objects.select_for_update(no_key=True).order_by("pk")
        list(sessions.filter(pk__in=ids).values_list("pk", flat=True))


def _announce_on_commit(session_id: str, seq: int) -> None:
    from agentdash.timeline.live import notify_threadsafe  # the pipeline imports this module

    transaction.on_commit(lambda: notify_threadsafe(session_id, seq=seq))
