"""Stored rows as the change items of the live protocol (docs/PROTOCOL.md).

A change item is ``{"seq", "kind", "data"}``. ``data`` is the row's data *now* (an event
never changes; a span's latest version; a run's current status), or ``None`` when the row it
refers to is gone. Model and tool text reaches clients only as ``html`` rendered by
:func:`~agentdash.core.rendering.render_untrusted`; other payloads are plain JSON values that
clients must display as text.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from agentdash.agent_sessions.models import SessionEvent
from agentdash.core.rendering import render_untrusted
from agentdash.timeline.models import SessionChange, Span
from agentdash.timeline.selectors import changes_after
from runtime.events.event import Event

Item = dict[str, Any]

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
        "html": _render(event.text),
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


def span_item(span: Span) -> dict[str, Any]:
    """The ``data`` of a ``span`` change: the span's stored (latest) version."""
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
    changes = list(
        changes_after(session_id=session_id, seq=after_seq, limit=limit).values_list(
            "seq", "kind", "ref"
        )
    )
    refs: dict[str, set[str]] = {}
    for _, kind, ref in changes:
        refs.setdefault(kind, set()).add(ref)
    found = {
        SessionChange.Kind.EVENT: _events(session_id, refs.get(SessionChange.Kind.EVENT)),
        SessionChange.Kind.SPAN: _spans(session_id, refs.get(SessionChange.Kind.SPAN)),
        SessionChange.Kind.RUN: _runs(session_id, refs.get(SessionChange.Kind.RUN)),
    }
    return [
        {"seq": seq, "kind": kind, "data": found.get(kind, {}).get(ref)}
        for seq, kind, ref in changes
    ]


def _events(session_id: str, refs: set[str] | None) -> dict[str, Item]:
    if not refs:
        return {}
    rows = SessionEvent.objects.filter(session_id=session_id, event_id__in=refs)
    return {row.event_id: event_item(row) for row in rows}


def _spans(session_id: str, refs: set[str] | None) -> dict[str, Item]:
    if not refs:
        return {}
    wanted = {tuple(ref.split(":", 1)) for ref in refs}
    rows = Span.objects.filter(
        session_id=session_id,
        trace_id__in={t for t, *_ in wanted},
        span_id__in={s for *_, s in wanted},
    )
    return {f"{s.trace_id}:{s.span_id}": span_item(s) for s in rows}


def _runs(session_id: str, refs: set[str] | None) -> dict[str, Item]:
    if not refs:
        return {}
    from agentdash.runs.models import Run  # the runs app builds on this one

    ids = [int(ref) for ref in refs if ref.isdigit()]
    rows = Run.objects.filter(session_id=session_id, pk__in=ids)
    return {str(run.pk): run_item(run) for run in rows}


def _render(text: str) -> str:
    if not text:
        return ""
    # Events never change, and replays render the same texts again and again; long texts are
    # rendered each time rather than kept.
    return _render_cached(text) if len(text) <= _CACHED_TEXT_CHARS else render_untrusted(text)


_CACHED_TEXT_CHARS = 4_096


@lru_cache(maxsize=2048)
def _render_cached(text: str) -> str:
    return render_untrusted(text)


def _capped(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_PAYLOAD_CHARS:
        return value
    return {"truncated": True, "json": text[:MAX_PAYLOAD_CHARS]}
