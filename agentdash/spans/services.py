"""Writes of the span store: span versions, one at a time or a batch at once, each stored
version recorded as a change of its session (the price table's: ``spans.prices``)."""

from __future__ import annotations

import logging
import re
import secrets
import time
from collections import Counter
from collections.abc import Sequence
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction

from agentdash.changes.announcements import ItemsMaker
from agentdash.changes.bulk import rows_insert
from agentdash.changes.items import Item
from agentdash.changes.models import SessionChange
from agentdash.changes.services import (
    seqs_give_back,
    seqs_hold,
    seqs_take,
    session_change_next,
    session_changes_insert,
)
from agentdash.core.outages import caused_by_outage
from agentdash.spans.change_items import span_change_item
from agentdash.spans.decisions import DECISION_COLUMNS
from agentdash.spans.measures import spans_measured
from agentdash.spans.models import Span
from agentdash.spans.rollups import versions_counted
from agentdash.spans.selectors import spans_stored
from agentdash.spans.span_version import SpanVersion
from agentdash.spans.totals import price_book
from agentdash.spans.usage import USAGE_COLUMNS
from runtime.telemetry.attributes import AgentDash

logger = logging.getLogger(__name__)

_HEX_32 = re.compile(r"[0-9a-f]{32}")
_HEX_16 = re.compile(r"[0-9a-f]{16}")


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
    "otlp",
    "source_id",
    *USAGE_COLUMNS,
    *DECISION_COLUMNS,
)


_ROW_FIELDS = ("trace_id", "span_id", *_SPAN_FIELDS)
"""A span's row as the batch write inserts it, from its version (then ``seq``)."""
_INSERT_FIELDS = (*_ROW_FIELDS, "seq")
_row_values = attrgetter(
    *(
        {"attributes": "attributes_stored", "events": "events_stored", "otlp": "otlp_stored"}.get(
            name, name
        )
        for name in _ROW_FIELDS
    )
)
"""A version's values of ``_ROW_FIELDS``, its JSON as encoded when it was made storable."""


class SpanWrite(NamedTuple):
    """What ``span_upsert`` did: ``stored`` False when a final version was already there
    (a sender's retry: nothing lost) or, ``dropped`` True, when the database would not hold
    it; ``seq`` is the session change recorded for the write (``None`` without a session)."""

    stored: bool
    seq: int | None
    dropped: bool = False


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
    (``announce``: see :func:`session_change_next`). Strings are made storable first, as
    :class:`SpanVersion` does.
    """
    version = SpanVersion(
        trace_id=trace_id,
        span_id=span_id,
        name=name,
        start_time=start_time,
        end_time=end_time,
        parent_span_id=parent_span_id,
        kind=kind,
        status=status,
        status_message=status_message,
        attributes=attributes or {},
        events=events or [],
        session_id=session_id,
        run_id=run_id,
    )  # made storable on construction
    write = _version_upsert(version, announce)
    if write.stored:
        spans_measured([version])
    return write


def _version_upsert(version: SpanVersion, announce: bool) -> SpanWrite:
    """:func:`span_upsert` of a version already made (and made storable)."""
    fields = {field_name: getattr(version, field_name) for field_name in _SPAN_FIELDS}
    trace_id, span_id, session_id = version.trace_id, version.span_id, version.session_id
    identity = {"trace_id": trace_id, "span_id": span_id}
    with transaction.atomic():
        if session_id:  # the session's counter first, then its span: every span writer's order
            seqs_hold([session_id])
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
        if stored:
            versions_counted([version])
        return _written(version, stored, announce)


def _written(version: SpanVersion, stored: bool, announce: bool) -> SpanWrite:
    """A span version written (``stored``): its session's change recorded, its seq kept."""
    if not stored or version.session_id is None:
        return SpanWrite(stored=stored, seq=None)
    seq = session_change_next(
        session_id=version.session_id,
        kind=SessionChange.Kind.SPAN,
        ref=f"{version.trace_id}:{version.span_id}",
        announce=announce,
        prompt=True,  # as a batch's (``_store_batch``)
    )
    Span.objects.filter(trace_id=version.trace_id, span_id=version.span_id).update(seq=seq)
    return SpanWrite(stored=True, seq=seq)


def span_amend(*, version: SpanVersion, announce: bool = True) -> SpanWrite:
    """Replace a stored span's final version by ``version``: what was learnt of the span
    after it ended (an outside sender's log records of it, as its events). ``stored`` False
    when it is not stored or not ended yet (its own final version is still to come)."""
    fields = {field_name: getattr(version, field_name) for field_name in _SPAN_FIELDS}
    identity = {"trace_id": version.trace_id, "span_id": version.span_id}
    with transaction.atomic():
        if version.session_id:
            seqs_hold([version.session_id])
        stored = Span.objects.filter(**identity, end_time__isnull=False).update(**fields) == 1
        return _written(version, stored, announce)


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
    latest = _coalesced(versions)
    if not latest:
        return []
    try:
        with transaction.atomic():
            writes = _store_batch(latest, announce)
    except IntegrityError:
        writes = [_version_upsert(v, announce) for v in latest]
    spans_measured(v for v, w in zip(latest, writes, strict=True) if w.stored)
    return writes


def _coalesced(versions: Sequence[SpanVersion]) -> list[SpanVersion]:
    """One version per span, in the order of their first version: the last one, except that
    an ended version is never replaced by an open one."""
    latest: dict[tuple[str, str], SpanVersion] = {}
    for version in versions:
        kept = latest.get(version.identity)
        if kept is None or kept.end_time is None or version.end_time is not None:
            latest[version.identity] = version
    return list(latest.values())


def _store_batch(versions: list[SpanVersion], announce: bool) -> list[SpanWrite]:
    # The sessions' seqs first (one per version; this holds every other writer of their
    # spans), then the spans.
    counts = Counter(v.session_id for v in versions if v.session_id is not None)
    next_seq = seqs_take(counts)
    stored = spans_stored(identities=[v.identity for v in versions], lock=True)
    existing = {identity: span.end_time for identity, span in stored.items()}
    # An ended stored span is final: later versions of it are ignored, their seqs given back.
    final = {key for key, end in existing.items() if end is not None}
    writes = [v for v in versions if v.identity not in final]
    seqs_give_back(Counter(v.session_id for v in versions if v.identity in final and v.session_id))
    changes: list[tuple[str, int, str]] = []
    new: list[tuple[Any, ...]] = []
    changed: list[tuple[Any, ...]] = []
    written: dict[tuple[str, str], int | None] = {}
    for version in writes:
        seq = None
        if version.session_id is not None:
            seq = next_seq[version.session_id]
            next_seq[version.session_id] = seq + 1
            changes.append((version.session_id, seq, f"{version.trace_id}:{version.span_id}"))
        written[version.identity] = seq
        row = (*_row_values(version), seq or 0)
        (changed if version.identity in existing else new).append(row)
    # A collision (seqs written around the counter) raises: the batch is redone. Spans that
    # are announced were stored outside the live pipeline's flusher (an export, a run's
    # settle): whoever sent them waits to see them, so they go out at once.
    session_changes_insert(
        kind=SessionChange.Kind.SPAN,
        changes=changes,
        announce=announce,
        items=_items_makers(writes, written) if announce else None,
        prompt=True,
    )
    # New spans by a plain INSERT: one inserted meanwhile by another writer (a span of no
    # session has no counter to hold writers off) fails it, and the batch is redone span by
    # span, instead of being overwritten. Stored open spans by INSERT … ON CONFLICT DO
    # UPDATE (their rows are held: no one else can end them meanwhile).
    rows_insert(model=Span, fields=_INSERT_FIELDS, rows=new)
    rows_insert(
        model=Span,
        fields=_INSERT_FIELDS,
        rows=changed,
        unique=("trace_id", "span_id"),
        update=(*_SPAN_FIELDS, "seq"),
    )
    versions_counted(writes)
    return [
        SpanWrite(stored=True, seq=written[v.identity])
        if v.identity in written
        else SpanWrite(stored=False, seq=None)
        for v in versions
    ]


def _items_makers(
    writes: list[SpanVersion], written: dict[tuple[str, str], int | None]
) -> dict[str, ItemsMaker]:
    """For each session, what makes the change items of the spans written to it (the
    publisher need not read back what it is told): in seq order, as they were taken."""
    stored: dict[str, list[tuple[int, SpanVersion]]] = {}
    for version in writes:
        seq = written[version.identity]
        if version.session_id is not None and seq is not None:
            stored.setdefault(version.session_id, []).append((seq, version))
    return {session_id: partial(_span_items, pairs) for session_id, pairs in stored.items()}


def _span_items(pairs: list[tuple[int, SpanVersion]], limit: int) -> list[Item]:
    prices = price_book()
    return [span_change_item(seq, version, prices) for seq, version in pairs[: max(limit, 0)]]


def spans_store_isolating(
    *, versions: Sequence[SpanVersion], announce: bool = True
) -> list[SpanWrite]:
    """:func:`spans_store`, except that a version that cannot be stored does not take the
    others down with it (one session's bad data never holds up another's).

    A batch that fails is split in halves, each stored on its own, down to single versions;
    a version that fails alone is stored reduced (:meth:`SpanVersion.reduced`, with the
    error), and one that fails even so is dropped, logged, and replaced by an error span
    saying so (``span not stored``, whose seq its write carries). Versions of one span are
    coalesced first (as :func:`spans_store`); returns one :class:`SpanWrite` per span, in
    order, ``stored`` False for a dropped one. A database outage
    (``core.outages.caused_by_outage``) propagates at once: nothing is split or dropped for
    that.
    """
    return _store_halves(_coalesced(versions), announce)


def _store_halves(versions: list[SpanVersion], announce: bool) -> list[SpanWrite]:
    if not versions:
        return []
    try:
        return spans_store(versions=versions, announce=announce)
    except Exception as exc:
        if caused_by_outage(exc):
            raise
        if len(versions) > 1:
            half = len(versions) // 2
            return _store_halves(versions[:half], announce) + _store_halves(
                versions[half:], announce
            )
        return [_store_reduced(versions[0], exc, announce)]


def _store_reduced(version: SpanVersion, error: Exception, announce: bool) -> SpanWrite:
    why = f"{type(error).__name__}: {error}"
    where = f"span {version.trace_id}/{version.span_id} ({version.name!r}) of session " + repr(
        version.session_id
    )
    try:
        (write,) = spans_store(versions=[version.reduced(why)], announce=announce)
    except Exception as exc:
        if caused_by_outage(exc):
            raise
        logger.exception("%s dropped: not storable (%s), not even without its data", where, why)
        return _store_drop_notice(version, why, announce)
    logger.error("%s stored without its attributes and events: %s", where, why)
    return write


def _store_drop_notice(version: SpanVersion, why: str, announce: bool) -> SpanWrite:
    """A span of the dropped one's session saying it was dropped and why (an error span named
    ``span not stored``, ``agentdash.storage.dropped`` naming the span); the write of the
    dropped version, ``stored`` False, carries its seq. If even that cannot be stored (the
    session is gone, say), the log line is all that is left."""
    now = time.time_ns()
    start = version.start_time if isinstance(version.start_time, int) else now
    notice = SpanVersion(
        trace_id=version.trace_id if _HEX_32.fullmatch(version.trace_id) else secrets.token_hex(16),
        span_id=secrets.token_hex(8),
        parent_span_id=version.parent_span_id if _HEX_16.fullmatch(version.parent_span_id) else "",
        name="span not stored",
        start_time=start,
        end_time=max(start, now),
        status=Span.Status.ERROR,
        status_message=f"span {version.span_id[:64]!r} ({version.name!r}) was not stored: {why}",
        attributes={
            AgentDash.STORAGE_ERROR: why,
            AgentDash.STORAGE_DROPPED: f"{version.trace_id[:64]}/{version.span_id[:64]}",
        },
        session_id=version.session_id,
    )
    try:
        (write,) = spans_store(versions=[notice], announce=announce)
    except Exception as exc:
        if caused_by_outage(exc):
            raise
        logger.warning("no span could say so either: %s: %s", type(exc).__name__, exc)
        return SpanWrite(stored=False, seq=None, dropped=True)
    return SpanWrite(stored=False, seq=write.seq, dropped=True)
