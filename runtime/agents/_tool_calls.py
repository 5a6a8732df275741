"""One round of tool calls: each call with its callbacks and span, responses merged."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from google.genai import types
from pydantic import BaseModel

from runtime.agents._callbacks import run_adk_callbacks, run_any_agent_hook
from runtime.agents._contents import CLIENT_ID_PREFIX
from runtime.agents._llm_flow import base_attributes, capture_content
from runtime.debug import breakpoints
from runtime.errors import CallbackError
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from runtime.models.genai_values import function_response_part
from runtime.telemetry.attributes import AgentDash, GenAI, Operation, StepKind
from runtime.telemetry.payloads import to_json
from runtime.telemetry.tracing import LiveSpan, mark_error, start_span
from runtime.tools.auth import REQUEST_CREDENTIAL_FUNCTION
from runtime.tools.base_tool import BaseTool
from runtime.tools.identity import AGENT, Identity
from runtime.tools.tool_confirmation import (
    PAUSED_AGENT_TOOLS,
    REQUEST_CONFIRMATION_FUNCTION,
    ToolConfirmation,
)
from runtime.tools.tool_context import ToolContext

if TYPE_CHECKING:
    from runtime.agents.llm_agent import LlmAgent
    from runtime.contexts.invocation_context import InvocationContext


async def _call_tool(
    agent: LlmAgent,
    ctx: InvocationContext,
    call: types.FunctionCall,
    tools: dict[str, Any],
    confirmation: ToolConfirmation | None = None,
) -> tuple[types.Part | None, EventActions]:
    actions = EventActions()
    name = call.name or ""
    tool = tools.get(name)
    args: dict[str, Any] = dict(call.args or {})
    stopped: dict[str, Any] | None = None  # a breakpoint's answer that runs nothing
    if breakpoints.is_breakpoint(confirmation):
        assert confirmation is not None
        args, stopped = _breakpoint_answered(ctx, confirmation, name, args)
        confirmation = None  # the tool's own confirmation, if any, is still to be asked
    # Whom the call acts as, for the tool and its callbacks; no such tool: the agent.
    identity: Identity = AGENT if tool is None else tool.identity
    tool_ctx = ToolContext(
        ctx,
        function_call_id=call.id,
        event_actions=actions,
        identity=identity,
        tool_confirmation=confirmation,
    )
    capture = capture_content(ctx)
    with start_span(f"execute_tool {name}", _tool_attributes(ctx, call, tool, tool_ctx)) as span:
        if capture:
            span.set_attribute(GenAI.TOOL_ARGS, to_json(args))
        # A call run again with its own confirmation's answer ran before (that is how it
        # asked): it does not pause before itself a second time.
        paused = None
        if stopped is None and confirmation is None:
            paused = await breakpoints.pause_reason(ctx, tool=name)
        result: Any
        if stopped is not None:
            result = stopped
        elif paused is not None:
            result = _pause(tool_ctx, span, paused, args)
        elif tool is None:
            known = ", ".join(sorted(tools)) or "(none)"
            result = {"error": f"there is no tool named {name!r}; available tools: {known}"}
            span.set_attribute(AgentDash.ERROR_MESSAGE, result["error"])
        else:
            try:
                result = await _run_tool(agent, ctx, tool, args, tool_ctx, span)
            except CallbackError as exc:
                if "raised" not in (await breakpoints.current(ctx)).outcomes:
                    raise
                why = f"Breakpoint: callback {exc.callback_name} raised; paused before {name}"
                result = _pause(tool_ctx, span, why, args)
        result = _recorded(span, tool, result, actions, capture)
    if result is None:
        return None, actions
    return function_response_part(id=call.id, name=name, response=result), actions


def _recorded(
    span: LiveSpan, tool: Any, result: Any, actions: EventActions, capture: bool
) -> dict[str, Any] | None:
    """The call's result as a dict (a bare value as ``{"result": …}``), recorded on its span
    with what the call asked for (a hand-over, an escalation)."""
    if tool is not None and tool.is_long_running:
        span.set_attribute(AgentDash.LONG_RUNNING, True)
    if result is not None and not isinstance(result, dict):
        result = {"result": result}
    if capture and result is not None:
        span.set_attribute(GenAI.TOOL_OUTPUT, to_json(result))
    if actions.transfer_to_agent:
        span.set_attribute(AgentDash.TRANSFER_TO, actions.transfer_to_agent)
    if actions.escalate:
        span.set_attribute(AgentDash.ESCALATE, True)
    return result


def _breakpoint_answered(
    ctx: InvocationContext, confirmation: ToolConfirmation, name: str, args: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A call answered at a breakpoint before it: its arguments (the operator may have edited
    them) and, when refused or cancelled, the result that stands in for running it."""
    assert confirmation._paused_agent is None  # an agent tool's pause is never a breakpoint
    verdict = breakpoints.answered(ctx, confirmation, tool=name)
    edited = confirmation.payload.get("args")
    if isinstance(edited, dict):
        args = edited  # the operator changed the call's arguments
    if verdict == "cancel":
        ctx.end_invocation = True
        return args, {"error": f"cancelled at a breakpoint before {name}"}
    if verdict == "deny":
        return args, {"error": f"refused at a breakpoint before {name}"}
    return args, None


def _tool_attributes(
    ctx: InvocationContext, call: types.FunctionCall, tool: Any, tool_ctx: ToolContext
) -> dict[str, Any]:
    """A tool call's span attributes when it starts."""
    attributes = {
        **base_attributes(ctx),
        GenAI.OPERATION_NAME: Operation.EXECUTE_TOOL,
        GenAI.TOOL_NAME: call.name or "",
        GenAI.TOOL_CALL_ID: call.id or "",
        GenAI.TOOL_TYPE: getattr(tool, "tool_type", "function"),
        AgentDash.SPAN_KIND: StepKind.TOOL,
        AgentDash.TOOL_IDENTITY: tool_ctx.identity,
        AgentDash.TOOL_PRINCIPAL: tool_ctx.principal.id,
    }
    if tool is not None and tool.description:
        attributes[GenAI.TOOL_DESCRIPTION] = tool.description[:512]
    return attributes


def _pause(tool_ctx: ToolContext, span: LiveSpan, why: str, args: dict[str, Any]) -> Any:
    """Ask a person before the call runs (a breakpoint): the run waits like a confirmation."""
    tool_ctx.request_confirmation(hint=why, payload=breakpoints.breakpoint_payload("tool", args))
    span.set_attribute(AgentDash.BREAKPOINT, why)
    return {"status": f"paused: {why}"}


async def _run_tool(
    agent: LlmAgent,
    ctx: InvocationContext,
    tool: BaseTool,
    args: dict[str, Any],
    tool_ctx: ToolContext,
    span: LiveSpan,
) -> Any:
    common: dict[str, Any] = {"tool": tool, "args": args, "tool_context": tool_ctx}
    result = await run_adk_callbacks(
        ctx, "before_tool", agent._before_tool, dict, step_span=span, **common
    )
    if result is None:
        await run_any_agent_hook(
            ctx, "before_tool_execution", agent.callbacks, span, tool=tool, args=args
        )
        try:
            result = await tool.run_async(args=args, tool_context=tool_ctx)
        except Exception as exc:
            mark_error(span, exc)
            result = await run_adk_callbacks(
                ctx,
                "on_tool_error",
                agent._on_tool_error,
                dict,
                step_span=span,
                mark=AgentDash.REPLACED_BY,
                error=exc,
                **common,
            )
            if result is None:
                raise
        await run_any_agent_hook(
            ctx,
            "after_tool_execution",
            agent.callbacks,
            span,
            tool=tool,
            args=args,
            tool_response=result,
        )
    # As in ADK, after_tool callbacks see the tool's own return value, before any wrapping.
    replaced = await run_adk_callbacks(
        ctx,
        "after_tool",
        agent._after_tool,
        dict,
        step_span=span,
        mark=AgentDash.REPLACED_BY,
        tool_response=result,
        **common,
    )
    if replaced is not None:
        return replaced
    if result is None and tool.is_long_running:
        return None
    # Only a long-running tool may answer nothing; otherwise ``None`` is {"result": None}.
    return result if isinstance(result, dict) else {"result": result}


async def call_tools(
    agent: LlmAgent,
    ctx: InvocationContext,
    model_event: Event,
    tools: dict[str, Any],
    confirmations: dict[str, ToolConfirmation] | None = None,
) -> Event | None:
    """Run every function call of ``model_event`` (concurrently when there are several) and
    return one event with all their responses and merged actions, or ``None`` when no call
    produced a response (long-running tools that returned nothing). ``confirmations`` (call id
    → a person's answer) is given when calls are run again after a confirmation."""
    calls = model_event.get_function_calls()
    answers = confirmations or {}
    if len(calls) == 1:
        results = [await _call_tool(agent, ctx, calls[0], tools, answers.get(calls[0].id or ""))]
    else:
        # A TaskGroup cancels the other calls as soon as one fails.
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(_call_tool(agent, ctx, c, tools, answers.get(c.id or "")))
                for c in calls
            ]
        results = [t.result() for t in tasks]
    actions = EventActions()
    parts: list[types.Part] = []
    for part, call_actions in results:
        actions.merge(call_actions)
        if part is not None:
            parts.append(part)
    if not parts and actions.is_empty():
        return None
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="user", parts=parts) if parts else None,
        actions=actions,
    )


def auth_request_event(
    agent: LlmAgent, ctx: InvocationContext, response_event: Event
) -> Event | None:
    """The ``adk_request_credential`` calls for the credentials the tools of
    ``response_event`` asked for (``ToolContext.request_credential``), or ``None``.

    Each call's args name the tool call (``function_call_id``) and its ``auth_config``; the
    calls are long-running, so the client answers them with function responses of the same id.
    """
    requested = response_event.actions.requested_auth_configs
    if not requested:
        return None
    calls = []
    for function_call_id, config in requested.items():
        dumped = config.model_dump() if isinstance(config, BaseModel) else config
        args = {"function_call_id": function_call_id, "auth_config": dumped}
        calls.append((REQUEST_CREDENTIAL_FUNCTION, args))
    return _client_calls_event(agent, ctx, calls)


def _client_calls_event(
    agent: LlmAgent, ctx: InvocationContext, calls: list[tuple[str, dict[str, Any]]]
) -> Event | None:
    """One event of long-running calls the runtime makes to the client (``(name, args)``
    each, given fresh ids), or ``None`` for none."""
    if not calls:
        return None
    parts: list[types.Part] = []
    ids: set[str] = set()
    for name, args in calls:
        call_id = CLIENT_ID_PREFIX + uuid.uuid4().hex[:16]
        ids.add(call_id)
        parts.append(types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args)))
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=parts),
        long_running_tool_ids=ids,
    )


def confirmation_request_event(
    agent: LlmAgent, ctx: InvocationContext, model_event: Event, response_event: Event
) -> Event | None:
    """The ``adk_request_confirmation`` calls for the confirmations the tools of
    ``response_event`` asked for, or ``None``. Each call's args carry the
    ``originalFunctionCall`` and the ``toolConfirmation`` (ADK's names and camelCase); the
    calls are long-running: the client answers them with function responses of the same id."""
    requested = response_event.actions.requested_tool_confirmations
    if not requested:
        return None
    originals = {call.id: call for call in model_event.get_function_calls()}
    calls = []
    paused_agents: dict[str, Any] = {}
    for function_call_id, confirmation in requested.items():
        original = originals.get(function_call_id)
        if original is None:
            continue
        asked = ToolConfirmation.model_validate(confirmation)
        args = {
            "originalFunctionCall": original.model_dump(exclude_none=True, by_alias=True),
            "toolConfirmation": asked.model_dump(by_alias=True, exclude_none=True),
        }
        calls.append((REQUEST_CONFIRMATION_FUNCTION, args))
        if asked._paused_agent is not None:
            paused_agents[function_call_id] = asked._paused_agent
    event = _client_calls_event(agent, ctx, calls)
    if event is not None and paused_agents:
        # Kept in the runtime's own event, where a client cannot write: what the answer resumes.
        event = event.model_copy(update={"custom_metadata": {PAUSED_AGENT_TOOLS: paused_agents}})
    return event


def model_pause_event(agent: LlmAgent, ctx: InvocationContext, why: str) -> Event:
    """The request a breakpoint before a model call stores: an ``adk_request_confirmation``
    about a stand-in call (``breakpoints.MODEL_STEP``), answered like any confirmation."""
    asked = ToolConfirmation(hint=why, payload=breakpoints.breakpoint_payload("model"))
    args = {
        "originalFunctionCall": breakpoints.model_request_call(),
        "toolConfirmation": asked.model_dump(by_alias=True, exclude_none=True),
    }
    event = _client_calls_event(agent, ctx, [(REQUEST_CONFIRMATION_FUNCTION, args)])
    assert event is not None  # one call asked
    return event
