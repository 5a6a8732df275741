"""Stored events as change items (kind ``event``): registered with the change log by
``AgentSessionsConfig``."""

from __future__ import annotations

from typing import Any

from agentdash.agent_sessions.models import SessionEvent
from agentdash.changes.items import TOO_LARGE, Item, RowKey, items_of_rows, payload_capped
from agentdash.core.prepared import PreparedQuery
from runtime.events.event import ends_turn

TOO_LARGE_HTML = "<p>[too large to show live: see the stored event]</p>"


def event_item(row: SessionEvent) -> Item:
    """The ``data`` of an ``event`` change: the stored event, its text rendered safe (once,
    when it was stored: ``row.html``), its payloads capped. Read from the stored data as
    ``event_data.event_serialize`` wrote it, without building the ``Event`` again (pydantic
    would validate every part: most of the cost of an event of many tool calls)."""
    data: dict[str, Any] = row.data
    parts: list[dict[str, Any]] = (data.get("content") or {}).get("parts") or []
    calls = [part["function_call"] for part in parts if part.get("function_call") is not None]
    responses = [
        part["function_response"] for part in parts if part.get("function_response") is not None
    ]
    actions = data.get("actions") or {}
    metadata = data.get("custom_metadata") or {}
    author = data["author"]
    return {
        "id": data["id"],
        "invocation_id": data.get("invocation_id", ""),
        "author": author,
        "branch": data.get("branch"),
        "timestamp": data["timestamp"],
        "position": row.seq,
        "version": row.version,
        "html": row.html,
        "function_calls": [
            {
                "id": call.get("id"),
                "name": call.get("name"),
                "args": payload_capped(call.get("args") or {}),
            }
            for call in calls
        ],
        "function_responses": [
            {
                "id": resp.get("id"),
                "name": resp.get("name"),
                "response": payload_capped(resp.get("response") or {}),
            }
            for resp in responses
        ],
        "state_delta": payload_capped(actions.get("state_delta") or {}),
        "reason": str(metadata.get("reason", "")) if author == "operator" else "",
        "error_code": data.get("error_code"),
        "error_message": data.get("error_message"),
        "final": ends_turn(
            skip_summarization=bool(actions.get("skip_summarization")),
            long_running=bool(data.get("long_running_tool_ids")),
            calls=bool(calls),
            responses=bool(responses),
            partial=bool(data.get("partial")),
            trailing_code_result=bool(parts) and parts[-1].get("code_execution_result") is not None,
        ),
    }


_EVENTS: PreparedQuery[SessionEvent] = PreparedQuery(
    lambda session_ids, event_ids: SessionEvent.objects.filter(
        session_id__in=session_ids, event_id__in=event_ids
    )
)


def events_load(refs: set[RowKey]) -> dict[RowKey, Item]:
    """The data of the events named ``(session id, event id)``, in one query."""
    if not refs:
        return {}
    rows = _EVENTS.rows(sorted({s for s, _ in refs}), sorted({e for _, e in refs}))
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
