"""The conversation an LLM agent sends to its model, built from session events."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from google.genai import types

from runtime.events.event import Event
from runtime.tools.auth import REQUEST_CREDENTIAL_FUNCTION

if TYPE_CHECKING:
    from runtime.agents.invocation_context import InvocationContext

CLIENT_ID_PREFIX = "adk-"
"""Function-call ids the runtime made up (models that gave none never see them)."""


def _in_branch(ctx: InvocationContext, event: Event) -> bool:
    if not ctx.branch or not event.branch:
        return True
    return ctx.branch == event.branch or ctx.branch.startswith(event.branch + ".")


def _is_auth(event: Event) -> bool:
    return any(fc.name == REQUEST_CREDENTIAL_FUNCTION for fc in event.get_function_calls()) or any(
        fr.name == REQUEST_CREDENTIAL_FUNCTION for fr in event.get_function_responses()
    )


def _as_context(event: Event) -> types.Content:
    """Another agent's turn, retold to this agent as user-side context."""
    parts = [types.Part(text="For context:")]
    for part in event.content.parts or [] if event.content else []:
        if part.text and not part.thought:
            parts.append(types.Part(text=f"[{event.author}] said: {part.text}"))
        elif part.function_call:
            fc = part.function_call
            args = json.dumps(fc.args or {}, default=str, ensure_ascii=False)
            parts.append(
                types.Part(text=f"[{event.author}] called tool `{fc.name}` with parameters: {args}")
            )
        elif part.function_response:
            fr = part.function_response
            result = json.dumps(fr.response or {}, default=str, ensure_ascii=False)
            parts.append(
                types.Part(text=f"[{event.author}] `{fr.name}` tool returned result: {result}")
            )
    return types.Content(role="user", parts=parts)


def _strip_client_ids(content: types.Content) -> types.Content:
    parts = content.parts or []
    if not any(
        (p.function_call and (p.function_call.id or "").startswith(CLIENT_ID_PREFIX))
        or (p.function_response and (p.function_response.id or "").startswith(CLIENT_ID_PREFIX))
        for p in parts
    ):
        return content
    content = content.model_copy(deep=True)
    for p in content.parts or []:
        if p.function_call and (p.function_call.id or "").startswith(CLIENT_ID_PREFIX):
            p.function_call.id = None
        if p.function_response and (p.function_response.id or "").startswith(CLIENT_ID_PREFIX):
            p.function_response.id = None
    return content


def build_contents(ctx: InvocationContext, *, include_contents: str) -> list[types.Content]:
    """Session events visible to ``ctx.agent`` as model contents.

    Events of other branches, partial chunks, content-less events and credential requests are
    left out; other agents' turns become "For context" user messages. With
    ``include_contents="none"`` only the current turn (from the last user message) is sent.
    """
    events = ctx.session.events
    if include_contents == "none":
        for i in range(len(events) - 1, -1, -1):
            if events[i].author == "user":
                events = events[i:]
                break
    name = ctx.agent.name
    contents: list[types.Content] = []
    for event in events:
        if not event.content or not event.content.parts or event.partial:
            continue
        if not _in_branch(ctx, event) or _is_auth(event):
            continue
        if event.author not in ("user", name):
            contents.append(_as_context(event))
        else:
            contents.append(_strip_client_ids(event.content))
    return contents
