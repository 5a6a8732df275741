"""A runtime ``Event`` as the database stores it: JSON-ready, and storable whatever an agent
put in it.

What agents produce is stored, never refused (``core.hygiene``): NUL characters and lone
surrogates — in text, tool arguments and results, state deltas, keys included — become
U+FFFD, and tool payloads nested deeper than ``MAX_STORED_DEPTH`` are cut there. An event
that had to change says so: ``custom_metadata["agentdash.storage.replaced"]`` counts the
changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.genai import types

from agentdash.core.hygiene import MAX_STORED_DEPTH, storable, storable_json
from runtime.events.event import Event
from runtime.sessions.state import without_temp
from runtime.telemetry.attributes import AgentDash

ENVELOPE_DEPTH = 16
"""Levels of the event's own structure around its payloads (content → parts → call → args)."""


def event_serialize(event: Event) -> dict[str, Any]:
    """``event`` as it is stored: JSON-ready, ``temp:`` keys removed from its delta, every
    string storable, payloads no deeper than ``MAX_STORED_DEPTH`` (marked when anything had
    to change; see the module docstring).

    Raises pydantic's ``PydanticSerializationError`` for a state value JSON cannot carry.
    """
    event, changes = _payloads_bounded(event)
    data = event.model_dump(mode="json", exclude_none=True)
    actions = data.setdefault("actions", {})
    actions["state_delta"] = without_temp(actions.get("state_delta") or {})
    data, replaced, _ = storable_json(data, max_depth=MAX_STORED_DEPTH + ENVELOPE_DEPTH)
    changes += replaced
    if changes:
        metadata = dict(data.get("custom_metadata") or {})
        metadata[AgentDash.STORAGE_REPLACED] = changes
        data = {**data, "custom_metadata": metadata}
    return data


def event_text(event_data: Mapping[str, Any]) -> str:
    """The text of a stored event (as ``Event.text``: its text parts joined, thoughts left
    out), read from its data without building the ``Event``."""
    parts = (event_data.get("content") or {}).get("parts") or []
    return "".join(
        str(part["text"]) for part in parts if part.get("text") and not part.get("thought")
    )


def _payloads_bounded(event: Event) -> tuple[Event, int]:
    """``event`` with its free-form payloads (function call arguments, function responses,
    the state delta, custom metadata) made storable and cut to depth — before pydantic
    serializes it, which fails on values nested a few hundred levels deep — and the count
    of changes. The event itself is never changed: a changed copy is returned."""
    if _payloads_clean(event):
        return event, 0
    changes = 0

    def bounded(value: Any) -> Any:
        nonlocal changes
        fixed, count = storable(value)
        changes += count
        return fixed

    update: dict[str, Any] = {}
    if event.content is not None and event.content.parts:
        parts = [_part_bounded(part, bounded) for part in event.content.parts]
        if any(new is not old for new, old in zip(parts, event.content.parts, strict=True)):
            update["content"] = event.content.model_copy(update={"parts": parts})
    delta = event.actions.state_delta
    if delta:
        fixed_delta = bounded(delta)
        if fixed_delta is not delta:
            update["actions"] = event.actions.model_copy(update={"state_delta": fixed_delta})
    if event.custom_metadata:
        metadata = bounded(event.custom_metadata)
        if metadata is not event.custom_metadata:
            update["custom_metadata"] = metadata
    return (event.model_copy(update=update) if update else event), changes


def _payloads_clean(event: Event) -> bool:
    """Whether no payload of ``event`` needs a change: all of them checked at once, on their
    JSON text (``core.hygiene.storable_json``: encoded in C, not walked in Python), an event
    of a thousand tool calls as one value."""
    parts = event.content.parts if event.content is not None and event.content.parts else []
    payloads: list[Any] = [event.actions.state_delta, event.custom_metadata]
    for part in parts:
        if part.function_call is not None:
            payloads.append(part.function_call.args)
        if part.function_response is not None:
            payloads.append(part.function_response.response)
    _, changes, _ = storable_json(payloads, max_depth=MAX_STORED_DEPTH + 1)  # + the list
    return changes == 0


def _part_bounded(part: types.Part, bounded: Any) -> types.Part:
    call, response = part.function_call, part.function_response
    if call is not None and call.args:
        args = bounded(call.args)
        if args is not call.args:
            return part.model_copy(update={"function_call": call.model_copy(update={"args": args})})
    if response is not None and response.response:
        found = bounded(response.response)
        if found is not response.response:
            fixed = response.model_copy(update={"response": found})
            return part.model_copy(update={"function_response": fixed})
    return part
