"""A turn that answers a paused run: the tool calls that asked for a credential or a
confirmation run again (ADK's auth and confirmation preprocessing), before any model call.

A message that answers ``adk_request_credential`` runs again the calls that asked (the
credential is in state now); one that answers ``adk_request_confirmation`` runs again the calls
it confirms, each with its answer (only requests this agent made, only their first answer). A
call run again may ask anew: the request is yielded and the turn ends there.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from google.genai import types

from runtime.agents._tool_calls import (
    auth_request_event,
    call_tools,
    confirmation_request_event,
)
from runtime.contexts.invocation_context import InvocationContext
from runtime.debug import breakpoints
from runtime.events.event import Event
from runtime.tools.auth import REQUEST_CREDENTIAL_FUNCTION
from runtime.tools.tool_confirmation import (
    REQUEST_CONFIRMATION_FUNCTION,
    ToolConfirmation,
    confirmation_from_response,
    with_paused_agent,
)

if TYPE_CHECKING:
    from runtime.agents.llm_agent import LlmAgent, _Turn


async def resumed(
    agent: LlmAgent, ctx: InvocationContext, turn: _Turn
) -> AsyncGenerator[Event, None]:
    """The calls run again and their response, for each kind of answer this message
    carries; ``turn.done`` when one of them asked anew (the run pauses again)."""
    for rerun in (_after_auth, _after_confirmation):
        replayed = await rerun(agent, ctx)
        if replayed is None:
            continue
        replay_calls, replay_response = replayed
        # The tools run again may ask anew (a credential, their own confirmation once a
        # breakpoint before them was passed): asked like any other, the run pauses.
        requests_made = [
            request
            for request in (
                auth_request_event(agent, ctx, replay_response),
                confirmation_request_event(agent, ctx, replay_calls, replay_response),
            )
            if request is not None
        ]
        for made in requests_made:
            yield made
        yield replay_response
        if requests_made:
            turn.done = True
            return


async def _after_auth(agent: LlmAgent, ctx: InvocationContext) -> tuple[Event, Event] | None:
    """When this message answers ``adk_request_credential`` calls, run again the tool calls
    that asked for the credentials (now in state): the calls' event and their response
    event."""
    message = ctx.user_content
    answered = {
        p.function_response.id
        for p in (message.parts or [] if message else [])
        if p.function_response and p.function_response.name == REQUEST_CREDENTIAL_FUNCTION
    }
    if not answered:
        return None
    wanted: set[str] = set()
    for event in ctx.session.events:
        for call in event.get_function_calls():
            if call.id in answered and call.name == REQUEST_CREDENTIAL_FUNCTION:
                wanted.add(str((call.args or {}).get("function_call_id", "")))
    calls = [
        types.Part(function_call=call)
        for event in ctx.session.events
        if event.author == agent.name
        for call in event.get_function_calls()
        if call.id in wanted
    ]
    return await _replay_calls(agent, ctx, calls)


async def _after_confirmation(
    agent: LlmAgent, ctx: InvocationContext
) -> tuple[Event, Event] | None:
    """When this message answers ``adk_request_confirmation`` calls, run again the tool
    calls they asked about, each with its answer: the calls' event and their response
    event.

    Only a request this agent itself made counts (a call in one of its own events, never
    in one a client wrote), and only its first answer: a second answer, or one to a
    request that does not exist, runs nothing."""
    message = ctx.user_content
    answers = {
        p.function_response.id: confirmation_from_response(p.function_response.response)
        for p in (message.parts or [] if message else [])
        if p.function_response
        and p.function_response.name == REQUEST_CONFIRMATION_FUNCTION
        and p.function_response.id
    }
    if not answers:
        return None
    answered_before = {
        fr.id
        for event in ctx.session.events[:-1]  # the last one is this message
        if event.author == "user"
        for fr in event.get_function_responses()
        if fr.name == REQUEST_CONFIRMATION_FUNCTION
    }
    calls: list[types.Part] = []
    confirmations: dict[str, ToolConfirmation] = {}
    for event in ctx.session.events:
        if event.author != agent.name:
            continue
        for asked in event.get_function_calls():
            if asked.name != REQUEST_CONFIRMATION_FUNCTION or asked.id not in answers:
                continue
            if asked.id in answered_before:
                continue
            original = (asked.args or {}).get("originalFunctionCall")
            if not isinstance(original, dict):
                continue
            call = types.FunctionCall.model_validate(original)
            if not call.id:
                continue
            if call.name == breakpoints.MODEL_STEP:  # a paused model call: go on or stop
                verdict = breakpoints.answered(ctx, answers[asked.id], tool=None)
                ctx.end_invocation = ctx.end_invocation or verdict != "go"
                continue
            answer = with_paused_agent(answers[asked.id], event.custom_metadata, call.id)
            confirmations[call.id] = answer
            calls.append(types.Part(function_call=call))
    return await _replay_calls(agent, ctx, calls, confirmations)


async def _replay_calls(
    agent: LlmAgent,
    ctx: InvocationContext,
    calls: list[types.Part],
    confirmations: dict[str, ToolConfirmation] | None = None,
) -> tuple[Event, Event] | None:
    """Run ``calls`` (earlier function calls of this agent) again: the event of the calls
    (never stored: they are) and their response event; ``None`` for none."""
    if not calls:
        return None
    request = await agent._build_request(ctx)
    replay = Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        content=types.Content(role="model", parts=calls),
    )
    response = await call_tools(agent, ctx, replay, request.tools_dict, confirmations)
    return None if response is None else (replay, response)
