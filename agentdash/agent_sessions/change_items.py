"""Stored events as change items (kind ``event``): registered with the change log by
``AgentSessionsConfig``."""

from __future__ import annotations

from typing import Any

from agentdash.agent_sessions.models import SessionEvent
from agentdash.changes.items import TOO_LARGE, Item, RowKey, items_of_rows, payload_capped
from runtime.events.event import Event

TOO_LARGE_HTML = "<p>[too large to show live: see the stored event]</p>"


def event_item(row: SessionEvent) -> Item:
    """The ``data`` of an ``event`` change: the stored event, its text rendered safe (once,
    when it was stored: ``row.html``), its payloads capped."""
    event = Event.model_validate(row.data)
    metadata = event.custom_metadata or {}
    return {
        "id": event.id,
        "invocation_id": event.invocation_id,
        "author": event.author,
        "branch": event.branch,
        "timestamp": event.timestamp,
        "position": row.seq,
        "version": row.version,
        "html": row.html,
        "function_calls": [
            {"id": call.id, "name": call.name, "args": payload_capped(call.args or {})}
            for call in event.get_function_calls()
        ],
        "function_responses": [
            {"id": resp.id, "name": resp.name, "response": payload_capped(resp.response or {})}
            for resp in event.get_function_responses()
        ],
        "state_delta": payload_capped(event.actions.state_delta),
        "reason": str(metadata.get("reason", "")) if event.author == "operator" else "",
        "error_code": event.error_code,
        "error_message": event.error_message,
        "final": event.is_final_response(),
    }


def events_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """The data of the events named ``(session id, event id)``, in one query."""
    if not refs:
        return {}
    rows = SessionEvent.objects.filter(
        session_id__in={s for s, _ in refs}, event_id__in={e for _, e in refs}
    )
    return items_of_rows(
        refs,
        rows,
        session_of=lambda row: row.session_id,
        ref_of=lambda row: row.event_id,
        item_of=event_item,
    )


def event_trimmed(data: dict[str, Any]) -> dict[str, Any]:
    """An event too large to send whole keeps its author, calls and responses by name, not
    their payloads or its text."""
    return {
        **data,
        "html": TOO_LARGE_HTML,
        "function_calls": [{**c, "args": TOO_LARGE} for c in data.get("function_calls", [])],
        "function_responses": [
            {**r, "response": TOO_LARGE} for r in data.get("function_responses", [])
        ],
        "state_delta": TOO_LARGE,
    }
