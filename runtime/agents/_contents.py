"""The conversation an LLM agent sends to its model, built from session events."""

from __future__ import annotations

import functools
import json
import sys
import weakref
from typing import TYPE_CHECKING

from google.genai import types

from runtime.events.event import Event
from runtime.models.genai_values import replaced
from runtime.models.llm_request import CONTEXT_PREFIX
from runtime.telemetry.payloads import to_json
from runtime.tools.auth import REQUEST_CREDENTIAL_FUNCTION
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext

CLIENT_ID_PREFIX = "adk-"
"""Function-call ids the runtime made up (models that gave none never see them)."""


def _in_branch(ctx: InvocationContext, event: Event) -> bool:
    if not ctx.branch or not event.branch:
        return True
    return ctx.branch == event.branch or ctx.branch.startswith(event.branch + ".")


_FRAMEWORK_CALLS = (REQUEST_CREDENTIAL_FUNCTION, REQUEST_CONFIRMATION_FUNCTION)
"""Calls the runtime makes to the client, never the model's: kept out of its contents."""


def _is_auth(event: Event) -> bool:
    return any(fc.name in _FRAMEWORK_CALLS for fc in event.get_function_calls()) or any(
        fr.name in _FRAMEWORK_CALLS for fr in event.get_function_responses()
    )


def _json(value: object) -> str:
    try:
        return json.dumps(value, default=str, ensure_ascii=False)
    except (RecursionError, ValueError):  # nested too deep, or circular: cut, not crash
        return to_json(value, limit=sys.maxsize)


def _as_context(event: Event) -> types.Content:
    """Another agent's turn, retold to this agent as user-side context."""
    parts = [types.Part(text=CONTEXT_PREFIX)]
    for part in event.content.parts or [] if event.content else []:
        if part.text and not part.thought:
            parts.append(types.Part(text=f"[{event.author}] said: {part.text}"))
        elif part.function_call:
            fc = part.function_call
            args = _json(fc.args or {})
            parts.append(
                types.Part(text=f"[{event.author}] called tool `{fc.name}` with parameters: {args}")
            )
        elif part.function_response:
            fr = part.function_response
            result = _json(fr.response or {})
            parts.append(
                types.Part(text=f"[{event.author}] `{fr.name}` tool returned result: {result}")
            )
    return types.Content(role="user", parts=parts)


def _strip_client_ids(content: types.Content) -> types.Content:
    """``content`` as the model sees it: the ids the runtime made up cleared. A fresh
    ``Content`` and parts list each time, never the stored event's (a callback may change
    a request's); the parts themselves are made once per content (:func:`_model_parts`)."""
    parts = _model_parts(content)
    return replaced(content, parts=list(content.parts or [] if parts is None else parts))


# Each stored content's parts as the model sees them, made once: a model call rebuilds the
# whole history, and a session of many tool calls otherwise made thousands of copies of the
# same parts at every call. Events are values (never changed once appended: runtime.events),
# and an entry is used only for the same parts list of the same length; it goes with its
# content.
_Made = tuple[types.Part, ...] | None
_MODEL_PARTS: dict[int, tuple[weakref.ref[types.Content], list[types.Part], int, _Made]] = {}


def _model_parts(content: types.Content) -> _Made:
    """The parts of ``content`` with the runtime's ids cleared, or ``None`` when it has none
    of them."""
    parts = content.parts or []
    key = id(content)
    kept = _MODEL_PARTS.get(key)
    if kept is not None and kept[0]() is content and kept[1] is parts and kept[2] == len(parts):
        return kept[3]
    made = _parts_stripped(parts)
    if content.parts is not None:  # (an empty one costs nothing to look at again)
        forget = functools.partial(_MODEL_PARTS.pop, key, None)
        _MODEL_PARTS[key] = (weakref.ref(content, lambda _: forget()), parts, len(parts), made)
    return made


def _parts_stripped(parts: list[types.Part]) -> _Made:
    if not any(
        (p.function_call and (p.function_call.id or "").startswith(CLIENT_ID_PREFIX))
        or (p.function_response and (p.function_response.id or "").startswith(CLIENT_ID_PREFIX))
        for p in parts
    ):
        return None
    # Shallow copies with the id cleared: the arguments and results are shared, never
    # copied (they may be large, or nested deeper than a deep copy can go).
    stripped = []
    for p in parts:
        fc, fr = p.function_call, p.function_response
        if fc and (fc.id or "").startswith(CLIENT_ID_PREFIX):
            p = replaced(p, function_call=replaced(fc, id=None))
        if fr and (fr.id or "").startswith(CLIENT_ID_PREFIX):
            p = replaced(p, function_response=replaced(fr, id=None))
        stripped.append(p)
    return tuple(stripped)


def _latest_responses(events: list[Event]) -> dict[str, tuple[int, types.Part]]:
    """For each function call id, the index of the last event answering it and that answer."""
    latest: dict[str, tuple[int, types.Part]] = {}
    for i, event in enumerate(events):
        for part in event.content.parts or [] if event.content else []:
            fr = part.function_response
            if fr is not None and fr.id:
                latest[fr.id] = (i, part)
    return latest


def _dedupe_responses(
    event: Event, index: int, latest: dict[str, tuple[int, types.Part]], answered: set[str]
) -> Event:
    """``event`` with each function response replaced by the latest answer to the same call,
    and answers already placed earlier dropped: a model must see exactly one response right
    after each call (a long-running tool's final result takes its interim result's place)."""
    parts = event.content.parts or [] if event.content else []
    if not any(p.function_response and p.function_response.id for p in parts):
        return event
    kept: list[types.Part] = []
    for part in parts:
        fr = part.function_response
        if fr is None or not fr.id:
            kept.append(part)
        elif fr.id not in answered:
            answered.add(fr.id)
            kept.append(latest[fr.id][1])
    if len(kept) == len(parts) and all(a is b for a, b in zip(kept, parts, strict=True)):
        return event  # each answer its own latest: the event as stored (its parts made once)
    content = replaced(event.content, parts=kept) if event.content else None
    return replaced(event, content=content)


def build_contents(ctx: InvocationContext, *, include_contents: str) -> list[types.Content]:
    """Session events visible to ``ctx.agent`` as model contents.

    Events of other branches, partial chunks, content-less events and credential requests are
    left out; other agents' turns become "For context" user messages. A call answered more
    than once (a long-running tool's interim and final results) shows only its latest answer,
    in the place of the first. With ``include_contents="none"`` only the current turn is sent:
    from the latest user message or other agent's reply on.
    """
    name = ctx.agent.name
    events = [
        e
        for e in ctx.session.events
        if e.content and e.content.parts and not e.partial and _in_branch(ctx, e)
        if not _is_auth(e)
    ]
    if include_contents == "none":
        start = next((i for i in range(len(events) - 1, -1, -1) if events[i].author != name), None)
        events = [] if start is None else events[start:]
    latest = _latest_responses(events)
    answered: set[str] = set()
    contents: list[types.Content] = []
    for i, event in enumerate(events):
        event = _dedupe_responses(event, i, latest, answered)
        if event.content is None or not event.content.parts:
            continue
        if event.author not in ("user", name):
            contents.append(_as_context(event))
        else:
            contents.append(_strip_client_ids(event.content))
    return contents
