"""Log records of outside spans (``POST /v1/logs``, OTLP/gRPC's LogsService): each becomes an
event of its span (``otlp_logs``), so what senders record as log events — the GenAI
instrumentations' messages, an app's own log lines — shows in the span's details, and a
model call's messages in its conversation (``messages.from_events``), as if sent on the span.

Logs and spans travel apart, logs often first: a record of a span stored ended is added to it
at once (the span's final version amended, its conversation read again: a span change open
pages receive); any other is kept (``PendingLog``) and added when the span's final version is
stored (``spans_ingest`` takes them), or dropped after :data:`PENDING_FOR`. A key holds at
most :data:`MAX_PENDING` waiting records; past that, records are rejected, and said so.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from agentdash.agent_sessions.external import session_owners
from agentdash.core.hygiene import storable
from agentdash.ingest.conversation import conversation_record
from agentdash.ingest.models import IngestKey, PendingLog
from agentdash.ingest.otlp_logs import UnpackedLogs
from agentdash.ingest.otlp_spans import MAX_EVENTS, IncomingSpan
from agentdash.ingest.versions import SERVICE_NAME, span_version_of
from agentdash.spans.models import Span
from agentdash.spans.otlp_json import attributes_as_sent
from agentdash.spans.selectors import spans_ended, spans_stored
from agentdash.spans.services import span_amend
from agentdash.spans.sources import Source
from agentdash.spans.span_version import SpanVersion

PENDING_FOR = timedelta(hours=1)
MAX_PENDING = 20_000

Identity = tuple[str, str]


def logs_ingest(*, key: IngestKey, unpacked: UnpackedLogs) -> tuple[int, int, list[str]]:
    """Store the records of ``unpacked`` for ``key``: (how many were kept, how many were
    rejected, what was wrong)."""
    rejected, problems = unpacked.rejected, list(unpacked.problems)
    by_span: dict[Identity, list[dict[str, Any]]] = defaultdict(list)
    for record in unpacked.records:
        by_span[(record.trace_id, record.span_id)].append(storable(record.event)[0])
    stored = spans_stored(identities=list(by_span))
    owners = session_owners(ids={s.session_id for s in stored.values() if s.session_id})
    now: dict[Identity, list[dict[str, Any]]] = {}
    later: dict[Identity, list[dict[str, Any]]] = {}
    for identity, events in by_span.items():
        span = stored.get(identity)
        owner = owners.get(span.session_id or "") if span else None
        if span is not None and owner != (key.owner_id, key.project):
            rejected += len(events)
            problems.append(f"span {identity[1]} of trace {identity[0]} is another sender's")
        elif span is not None and span.end_time is not None:
            now[identity] = events
        else:
            later[identity] = events
    kept, refused = _pending_keep(key, later)
    if refused:
        rejected += refused
        problems.append(
            f"{refused} log record(s) refused: {MAX_PENDING} already wait for their spans"
        )
    versions = _spans_amended(now)
    conversation_record(versions, amended=True)
    return kept + sum(map(len, now.values())), rejected, problems


def _pending_keep(key: IngestKey, later: dict[Identity, list[dict[str, Any]]]) -> tuple[int, int]:
    """Keep the records whose spans are still to come (within the key's room): (kept,
    refused). Records kept longer than :data:`PENDING_FOR` go first."""
    PendingLog.objects.filter(received_at__lt=timezone.now() - PENDING_FOR).delete()
    rows = [
        PendingLog(key=key, trace_id=trace_id, span_id=span_id, event=event)
        for (trace_id, span_id), events in later.items()
        for event in events
    ]
    if not rows:
        return 0, 0
    room = max(0, MAX_PENDING - PendingLog.objects.filter(key=key).count())
    PendingLog.objects.bulk_create(rows[:room])
    return min(room, len(rows)), max(0, len(rows) - room)


def _spans_amended(found: dict[Identity, list[dict[str, Any]]]) -> list[SpanVersion]:
    """The ended spans of ``found`` with their new events, stored: the versions written."""
    if not found:
        return []
    rows = spans_ended(identities=list(found))
    written = []
    for identity, row in rows.items():
        version = amended_version(row, found[identity])
        if span_amend(version=version).stored:
            written.append(version)
    return written


def amended_version(row: Span, events: list[dict[str, Any]]) -> SpanVersion:
    """A stored outside span with ``events`` added (up to ``MAX_EVENTS`` in all), its
    attributes read again from what its sender sent."""
    stored = row.attributes if isinstance(row.attributes, dict) else {}
    sent = attributes_as_sent(stored)
    resource = {}
    if SERVICE_NAME in stored and SERVICE_NAME not in sent:  # it came from the resource
        resource[SERVICE_NAME] = stored[SERVICE_NAME]
    incoming = IncomingSpan(
        trace_id=row.trace_id,
        span_id=row.span_id,
        parent_span_id=row.parent_span_id,
        name=row.name,
        kind=row.kind,
        start_time=row.start_time,
        end_time=row.end_time,
        status=row.status,
        status_message=row.status_message,
        attributes=sent,
        events=[*(row.events or []), *events][:MAX_EVENTS],
        source=Source(resource=resource),
        otlp=row.otlp if isinstance(row.otlp, dict) else {},
    )
    version = span_version_of(incoming, row.session_id, row.source_id)
    if row.tokens_in is None and version.tokens_in is not None:
        version = version.usage_uncounted()  # counted by another span: still once
    return version


def pending_take(*, key: IngestKey, spans: list[IncomingSpan]) -> set[Identity]:
    """Add to ``spans`` the records kept for them (``IncomingSpan.events``); the identities
    whose records were added to a final version (dropped once it is stored:
    :func:`pending_drop`)."""
    if not PendingLog.objects.filter(key=key).exists():
        return set()
    wanted = {(s.trace_id, s.span_id) for s in spans}
    waiting: dict[Identity, list[dict[str, Any]]] = defaultdict(list)
    rows = PendingLog.objects.filter(
        key=key, trace_id__in={t for t, _ in wanted}, span_id__in={s for _, s in wanted}
    ).order_by("id")
    for row in rows:
        if (row.trace_id, row.span_id) in wanted:
            waiting[(row.trace_id, row.span_id)].append(row.event)
    taken = set()
    for span in spans:
        identity = (span.trace_id, span.span_id)
        if identity in waiting:
            span.events = [*span.events, *waiting[identity]][:MAX_EVENTS]
            if span.end_time is not None:
                taken.add(identity)
    return taken


def pending_drop(*, key: IngestKey, identities: set[Identity]) -> None:
    """The records kept for these spans are part of their stored final versions now."""
    if not identities:
        return
    with transaction.atomic():
        for trace_id, span_id in identities:
            PendingLog.objects.filter(key=key, trace_id=trace_id, span_id=span_id).delete()
