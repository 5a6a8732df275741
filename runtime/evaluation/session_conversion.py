"""A session's events as an eval case: each user message becomes an :class:`Invocation`
with the tool calls and results that followed it and the agent's last text before the next
user message (ADK's ``convert_session_to_eval_invocations``, with the runtime's own events).

What is left out: partial (streamed) events; events of the operator (state edits) and
errors the platform reported; the runtime's own tool-confirmation call
(``adk_request_confirmation``) and a person's answer to it, which is not a new user message.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from google.genai import types

from runtime.evaluation.eval_case import EvalCase, IntermediateData, Invocation, SessionInput
from runtime.events.event import Event

USER = "user"
OPERATOR = "operator"
CONFIRMATION_CALL = "adk_request_confirmation"


def _user_message(event: Event) -> bool:
    """A user event with text: the start of a turn (a function response from the user —
    an answer to a confirmation — continues the turn it answers)."""
    parts = event.content.parts if event.content and event.content.parts else []
    return event.author == USER and any(p.text and p.text.strip() for p in parts)


def _text_parts(event: Event) -> list[types.Part]:
    parts = event.content.parts if event.content and event.content.parts else []
    return [types.Part(text=p.text) for p in parts if p.text and not p.thought]


def events_to_invocations(events: Iterable[Event]) -> list[Invocation]:
    """One invocation per user message, in order."""
    invocations: list[Invocation] = []
    turn: dict[str, Any] | None = None

    def close() -> None:
        if turn is None:
            return
        said: list[tuple[str, list[types.Part]]] = turn["said"]
        final = said.pop() if said else None
        invocations.append(
            Invocation(
                invocation_id=turn["invocation_id"],
                user_content=turn["user_content"],
                final_response=types.Content(role="model", parts=final[1]) if final else None,
                intermediate_data=IntermediateData(
                    tool_uses=turn["calls"],
                    tool_responses=turn["responses"],
                    intermediate_responses=said,
                ),
                creation_timestamp=turn["timestamp"],
            )
        )

    for event in events:
        if event.partial:
            continue
        if _user_message(event):
            close()
            assert event.content is not None
            turn = {
                "invocation_id": event.invocation_id,
                "user_content": types.Content(
                    role=USER, parts=[p for p in event.content.parts or [] if p.text]
                ),
                "calls": [],
                "responses": [],
                "said": [],
                "timestamp": event.timestamp,
            }
            continue
        if turn is None or event.author in (USER, OPERATOR) or event.error_code:
            continue
        for call in event.get_function_calls():
            if call.name != CONFIRMATION_CALL:
                turn["calls"].append(call)
        for response in event.get_function_responses():
            if response.name != CONFIRMATION_CALL:
                turn["responses"].append(response)
        parts = _text_parts(event)
        if parts:
            turn["said"].append((event.author, parts))
    close()
    return invocations


def eval_case_from_events(
    *,
    eval_id: str,
    events: Iterable[Event],
    app_name: str,
    user_id: str,
    state: dict[str, Any] | None = None,
) -> EvalCase:
    """An eval case of the conversation in ``events``, starting from ``state`` (the
    session's state before its first message: usually empty)."""
    return EvalCase(
        eval_id=eval_id,
        conversation=events_to_invocations(events),
        session_input=SessionInput(app_name=app_name, user_id=user_id, state=state or {}),
        creation_timestamp=time.time(),
    )
