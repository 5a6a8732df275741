"""Stored rows as the change items of the live protocol (docs/PROTOCOL.md).

A change item is ``{"seq", "kind", "data"}``. ``data`` is the row's data *now* (an event
never changes; a span's latest version; a run's current status), or ``None`` when the row it
refers to is gone. Model and tool text reaches clients only as ``html``, rendered by
:func:`~agentdash.core.rendering.render_untrusted` when the event was stored; other payloads
are plain JSON values that clients must display as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from agentdash.agent_sessions.models import SessionEvent
from agentdash.timeline.models import SessionChange, Span
from agentdash.timeline.selectors import changes_after
from agentdash.timeline.services import SpanVersion
from runtime.events.event import Event

Item = dict[str, Any]
RowKey = tuple[str, str]
"""A change's row: ``(session id, ref)``."""
SeqKey = tuple[str, int]
"""A change: ``(session id, seq)``."""

SESSIONS_PER_QUERY = 200
"""Sessions read in one query by :func:`items_after_many` (SQLite parses a long ``OR``
into a deep tree, and limits its depth)."""

MAX_PAYLOAD_CHARS = 16_384
"""Longest JSON of one function-call argument set or function response sent to clients;
a longer one is sent as a cut JSON string (``truncated`` true) instead."""


def event_item(row: SessionEvent) -> dict[str, Any]:
    """The ``data`` of an ``event`` change: the stored event, its text rendered safe."""
    event = Event.model_validate(row.data)
    metadata = event.custom_metadata or {}
    return {
        "id": event.id,
        "invocation_id": event.invocation_id,
        "author": event.author,
        "branch": event.branch,
        "timestamp": event.timestamp,
        "version": row.version,
        "html": row.html,  # rendered safe once, when stored
        "function_calls": [
            {"id": call.id, "name": call.name, "args": _capped(call.args or {})}
            for call in event.get_function_calls()
        ],
        "function_responses": [
            {"id": resp.id, "name": resp.name, "response": _capped(resp.response or {})}
            for resp in event.get_function_responses()
        ],
        "state_delta": _capped(event.actions.state_delta),
        "reason": str(metadata.get("reason", "")) if event.author == "operator" else "",
        "error_code": event.error_code,
        "error_message": event.error_message,
        "final": event.is_final_response(),
    }


def span_item(span: Span | SpanVersion) -> dict[str, Any]:
    """The ``data`` of a ``span`` change: the span's stored (latest) version (a row, or the
    version just stored)."""
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id or None,
        "name": span.name,
        "kind": span.kind,
        "start_time": span.start_time,
        "end_time": span.end_time,
        "status": span.status,
        "status_message": span.status_message,
        "attributes": span.attributes,
        "events": span.events,
        "run_id": span.run_id,
    }


def run_item(run: Any) -> dict[str, Any]:
    """The ``data`` of a ``run`` change: the run's current status (``runs.models.Run``)."""
    return {
        "id": run.id,
        "status": run.status,
        "agent": run.agent_name,
        "invocation_id": run.invocation_id,
        "attempt": run.attempt,
        "error": run.error,
        "trace_id": run.trace_id,
        "cancel_requested": run.cancel_requested,
    }


def items_after(*, session_id: str, after_seq: int, limit: int) -> list[Item]:
    """The session's change items with a seq above ``after_seq``, in seq order (at most
    ``limit``), each with its row's current data. Four queries at most, whatever ``limit``."""
    changes = changes_after(session_id=session_id, seq=after_seq, limit=limit).values_list(
        "session_id", "seq", "kind", "ref"
    )
    return _with_data(list(changes)).get(session_id, [])


def items_after_many(
    afters: Mapping[str, int], *, limit: int, fresh_spans: Mapping[SeqKey, Item] | None = None
) -> dict[str, list[Item]]:
    """:func:`items_after` for many sessions at once (session → ``after_seq``), in four
    queries per ``SESSIONS_PER_QUERY`` sessions. ``fresh_spans`` (``(session, seq)`` → span
    data) are span versions the caller has just stored with those seqs: the changes with
    those seqs take their data from there (any other change of the span reads its row)."""
    found: dict[str, list[Item]] = {}
    sessions = list(afters)
    for start in range(0, len(sessions), SESSIONS_PER_QUERY):
        chunk = sessions[start : start + SESSIONS_PER_QUERY]
        wanted = Q()
        for session_id in chunk:
            wanted |= Q(session_id=session_id, seq__gt=afters[session_id])
        # The first ``limit`` changes of each session, in one query (a window per session).
        rank = Window(RowNumber(), partition_by=F("session_id"), order_by=F("seq").asc())
        changes = (
            SessionChange.objects.filter(wanted)
            .annotate(rank=rank)
            .filter(rank__lte=limit)
            .order_by("session_id", "seq")
            .values_list("session_id", "seq", "kind", "ref")
        )
        found.update(_with_data(list(changes), fresh_spans or {}))
    return found


def _with_data(
    changes: list[tuple[str, int, str, str]], fresh_spans: Mapping[SeqKey, Item] | None = None
) -> dict[str, list[Item]]:
    """Changes ``(session, seq, kind, ref)`` as items grouped by session, each with the
    current data of its row (one query per kind), or with its ``fresh_spans`` data."""
    fresh = fresh_spans or {}
    refs: dict[str, set[RowKey]] = {}
    for session_id, seq, kind, ref in changes:
        if kind != SessionChange.Kind.SPAN or (session_id, seq) not in fresh:
            refs.setdefault(kind, set()).add((session_id, ref))
    found: dict[str, Mapping[RowKey, Item]] = {
        SessionChange.Kind.EVENT: _events(refs.get(SessionChange.Kind.EVENT)),
        SessionChange.Kind.SPAN: _spans(refs.get(SessionChange.Kind.SPAN)),
        SessionChange.Kind.RUN: _runs(refs.get(SessionChange.Kind.RUN)),
    }
    items: dict[str, list[Item]] = {}
    for session_id, seq, kind, ref in changes:
        data = fresh.get((session_id, seq)) if kind == SessionChange.Kind.SPAN else None
        if data is None:
            data = found.get(kind, {}).get((session_id, ref))
        items.setdefault(session_id, []).append({"seq": seq, "kind": kind, "data": data})
    return items


def _events(refs: set[RowKey] | None) -> dict[RowKey, Item]:
    if not refs:
        return {}
    rows = SessionEvent.objects.filter(
        session_id__in={s for s, _ in refs}, event_id__in={e for _, e in refs}
    )
    return {
        (row.session_id, row.event_id): event_item(row)
        for row in rows
        if (row.session_id, row.event_id) in refs
    }


def _spans(refs: set[RowKey] | None) -> dict[RowKey, Item]:
    if not refs:
        return {}
    ids = {tuple(ref.split(":", 1)) for _, ref in refs}
    rows = Span.objects.filter(
        session_id__in={s for s, _ in refs},
        trace_id__in={t for t, *_ in ids},
        span_id__in={s for *_, s in ids},
    )
    found = ((row.session_id, f"{row.trace_id}:{row.span_id}", row) for row in rows)
    return {(s, ref): span_item(row) for s, ref, row in found if (s, ref) in refs}


def _runs(refs: set[RowKey] | None) -> dict[RowKey, Item]:
    if not refs:
        return {}
    from agentdash.runs.models import Run  # the runs app builds on this one

    ids = [int(ref) for _, ref in refs if ref.isdigit()]
    rows = Run.objects.filter(session_id__in={s for s, _ in refs}, pk__in=ids)
    found = ((run.session_id, str(run.pk), run) for run in rows)
    return {(s, ref): run_item(run) for s, ref, run in found if (s, ref) in refs}


TOO_LARGE = {"truncated": True, "json": ""}
"""What stands in for a payload cut from a change too large to send whole."""


def item_trimmed(item: Item) -> Item:
    """``item`` with its bulky parts cut (a change too large for one websocket message):
    a span keeps its identity, timing and status, not its attributes and events; an event
    keeps its author, calls and responses by name, not their payloads or its text."""
    data = item.get("data")
    if not data:
        return item
    data = dict(data)
    if item["kind"] == SessionChange.Kind.SPAN:
        data.update(attributes={"agentdash.truncated": True}, events=[])
    elif item["kind"] == SessionChange.Kind.EVENT:
        data.update(
            html="<p>[too large to show live: see the stored event]</p>",
            function_calls=[{**c, "args": TOO_LARGE} for c in data.get("function_calls", [])],
            function_responses=[
                {**r, "response": TOO_LARGE} for r in data.get("function_responses", [])
            ],
            state_delta=TOO_LARGE,
        )
    return {**item, "data": data}


def _capped(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_PAYLOAD_CHARS:
        return value
    return {"truncated": True, "json": text[:MAX_PAYLOAD_CHARS]}
