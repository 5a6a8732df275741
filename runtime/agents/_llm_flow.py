"""One model call, with its callbacks and span; shared helpers of the agent's steps."""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from google.genai import types
from opentelemetry.trace import SpanKind, Status, StatusCode

from runtime.agents._callbacks import holds_stream, run_adk_callbacks, run_any_agent_hook
from runtime.agents._contents import CLIENT_ID_PREFIX
from runtime.contexts.callback_context import CallbackContext
from runtime.contexts.run_config import StreamingMode
from runtime.events.event import Event
from runtime.events.event_actions import EventActions
from runtime.models.base_llm import BaseLlm
from runtime.models.genai_values import call_id, replaced
from runtime.models.llm_request import LlmRequest, system_instruction_text
from runtime.models.llm_response import LlmResponse
from runtime.telemetry.attributes import AgentDash, Decision, GenAI, Operation, StepKind
from runtime.telemetry.decisions import decision_write
from runtime.telemetry.payloads import contents_to_messages, to_json, tool_definitions
from runtime.telemetry.tracing import (
    LiveSpan,
    iterate_in_span,
    mark_error,
    open_span,
)
from runtime.telemetry.usage import usage_attributes
from runtime.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from runtime.agents.llm_agent import LlmAgent
    from runtime.contexts.invocation_context import InvocationContext


def capture_content(ctx: InvocationContext) -> bool:
    """Whether message content goes on spans: the run's setting and the switchboard agree."""
    return ctx.captures_content()


def base_attributes(ctx: InvocationContext) -> dict[str, Any]:
    return {
        GenAI.AGENT_NAME: ctx.agent.name,
        GenAI.CONVERSATION_ID: ctx.session.id,
        AgentDash.INVOCATION_ID: ctx.invocation_id,
    }


MODEL_SAFETY = "model-safety"
"""Guardrail name on a model span whose answer the provider's safety filters withheld."""


def _record_response(span: LiveSpan, response: LlmResponse, capture: bool) -> None:
    for key, count in usage_attributes(response.usage_metadata).items():
        span.set_attribute(key, count)
    if response.finish_reason is not None:
        span.set_attribute(GenAI.RESPONSE_FINISH_REASONS, [response.finish_reason.value.lower()])
    if response.model_version:
        span.set_attribute(GenAI.RESPONSE_MODEL, response.model_version)
    if response.safety_blocked:
        # The provider's filters as a guardrail: a blocked step, with the categories why.
        reason = response.error_message or "the model's safety filters blocked the answer"
        decision_write(span, Decision.BLOCKED, reason, guardrail=MODEL_SAFETY)
    if response.error_code:
        span.set_attribute(
            AgentDash.ERROR_MESSAGE, f"{response.error_code}: {response.error_message}"
        )
        span.span.set_status(
            Status(StatusCode.ERROR, f"{response.error_code}: {response.error_message}")
        )
    if capture and response.content is not None:
        span.set_attribute(GenAI.OUTPUT_MESSAGES, to_json(contents_to_messages([response.content])))


async def call_model(
    agent: LlmAgent, ctx: InvocationContext, llm: BaseLlm, request: LlmRequest
) -> AsyncGenerator[Event, None]:
    """Call the model once: yields partial events while streaming, then the response event."""
    cb_ctx = CallbackContext(ctx)
    attributes = {
        **base_attributes(ctx),
        GenAI.OPERATION_NAME: Operation.GENERATE_CONTENT,
        GenAI.REQUEST_MODEL: request.model or llm.model,
        GenAI.PROVIDER_NAME: llm.provider,
        AgentDash.SPAN_KIND: StepKind.MODEL,
    }
    if llm.provider == "offline":
        attributes[AgentDash.MODEL_OFFLINE] = True
    span = open_span(
        f"generate_content {attributes[GenAI.REQUEST_MODEL]}", attributes, SpanKind.CLIENT
    )
    done: list[Event] = []
    steps = _model_steps(agent, ctx, llm, request, span, cb_ctx, done)
    async with aclosing(iterate_in_span(span, steps)) as partials:
        async for partial in partials:
            yield partial
    # The final event is yielded after the span has ended: the consumer's work on it (storing,
    # publishing) is not the model's time.
    yield done[0]


async def _model_steps(
    agent: LlmAgent,
    ctx: InvocationContext,
    llm: BaseLlm,
    request: LlmRequest,
    span: LiveSpan,
    cb_ctx: CallbackContext,
    done: list[Event],
) -> AsyncGenerator[Event, None]:
    capture = capture_content(ctx)
    _record_request(span, request, capture)
    final = await run_adk_callbacks(
        ctx,
        "before_model",
        agent._before_model,
        LlmResponse,
        step_span=span,
        callback_context=cb_ctx,
        llm_request=request,
    )
    if final is None:
        answer: list[LlmResponse] = []
        steps = _generate(agent, ctx, llm, request, span, cb_ctx, answer)
        async with aclosing(steps) as partials:
            async for partial in partials:
                yield partial
        final = answer[0]
    event = _event(agent, ctx, final, cb_ctx.actions, tools=request.tools_dict)
    span.set_attribute(AgentDash.EVENT_ID, event.id)
    _record_response(span, final, capture)
    done.append(event)


def _record_request(span: LiveSpan, request: LlmRequest, capture: bool) -> None:
    """What the model is asked, on its span: the conversation, the system instruction and the
    tools when content is captured; the safety settings always."""
    if capture:
        span.set_attribute(GenAI.INPUT_MESSAGES, to_json(contents_to_messages(request.contents)))
        system = system_instruction_text(request)
        if system:
            span.set_attribute(
                GenAI.SYSTEM_INSTRUCTIONS, to_json([{"type": "text", "content": system}])
            )
        tools = tool_definitions(request.config.tools)
        if tools:
            span.set_attribute(GenAI.TOOL_DEFINITIONS, to_json(tools))
    if request.instruction_version:
        span.set_attribute(AgentDash.INSTRUCTION_VERSION, request.instruction_version)
    if request.config.safety_settings:
        settings = [
            s.model_dump(mode="json", exclude_none=True) for s in request.config.safety_settings
        ]
        span.set_attribute(AgentDash.MODEL_SAFETY_SETTINGS, to_json(settings))


async def _generate(
    agent: LlmAgent,
    ctx: InvocationContext,
    llm: BaseLlm,
    request: LlmRequest,
    span: LiveSpan,
    cb_ctx: CallbackContext,
    answer: list[LlmResponse],
) -> AsyncGenerator[Event, None]:
    """The model called (no ``before_model`` callback answered instead): partial events while
    it streams; its response — or ``on_model_error``'s, when it failed — after ``after_model``
    and the any-agent hooks, appended to ``answer``."""
    ctx.count_llm_call()
    await run_any_agent_hook(ctx, "before_llm_call", agent.callbacks, span, llm_request=request)
    stream = ctx.run_config.streaming_mode == StreamingMode.SSE
    # A redacting after_model callback must see the answer before anyone does: its
    # partials are not passed on, the (redacted) final response arrives whole.
    pass_partials = not holds_stream(ctx, agent._after_model)
    final: LlmResponse | None = None
    asked, first = time.monotonic(), stream  # a streamed call's first chunk is timed
    try:
        async with aclosing(llm.generate_content_async(request, stream=stream)) as chunks:
            async for response in chunks:
                if first:
                    first = False
                    waited = round(time.monotonic() - asked, 6)
                    span.set_attribute(GenAI.RESPONSE_TIME_TO_FIRST_TOKEN, waited)
                if response.partial:
                    if pass_partials:
                        yield _event(agent, ctx, response, EventActions(), partial=True)
                else:
                    final = response
        if final is None:
            raise RuntimeError(f"model {llm.model!r} returned no final response")
    except Exception as exc:
        mark_error(span, exc)
        final = await run_adk_callbacks(
            ctx,
            "on_model_error",
            agent._on_model_error,
            LlmResponse,
            step_span=span,
            mark=AgentDash.REPLACED_BY,
            callback_context=cb_ctx,
            llm_request=request,
            error=exc,
        )
        if final is None:
            raise
    answer.append(await _after_model(agent, ctx, span, cb_ctx, final))


async def _after_model(
    agent: LlmAgent,
    ctx: InvocationContext,
    span: LiveSpan,
    cb_ctx: CallbackContext,
    final: LlmResponse,
) -> LlmResponse:
    """The answer the agent goes on with: ``after_model``'s replacement, if any; then the
    any-agent hooks see it (a redacted one, never what a redactor hid)."""
    replaced = await run_adk_callbacks(
        ctx,
        "after_model",
        agent._after_model,
        LlmResponse,
        step_span=span,
        mark=AgentDash.REPLACED_BY,
        callback_context=cb_ctx,
        llm_response=final,
    )
    if replaced is not None:
        final = replaced
    await run_any_agent_hook(ctx, "after_llm_call", agent.callbacks, span, llm_response=final)
    return final


def _event(
    agent: LlmAgent,
    ctx: InvocationContext,
    response: LlmResponse,
    actions: EventActions,
    *,
    partial: bool = False,
    tools: dict[str, Any] | None = None,
) -> Event:
    content = response.content
    long_running: set[str] | None = None
    if content is not None and not partial:
        content = _with_call_ids(content)
        for fc in (p.function_call for p in content.parts or [] if p.function_call):
            tool = (tools or {}).get(fc.name or "")
            if isinstance(tool, BaseTool) and tool.is_long_running and fc.id:
                long_running = (long_running or set()) | {fc.id}
    return Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=content,
        actions=actions,
        partial=partial or response.partial,
        turn_complete=response.turn_complete,
        finish_reason=response.finish_reason,
        error_code=response.error_code,
        error_message=response.error_message,
        usage_metadata=response.usage_metadata,
        grounding_metadata=response.grounding_metadata,
        custom_metadata=response.custom_metadata,
        long_running_tool_ids=long_running,
    )


def _with_call_ids(content: types.Content) -> types.Content:
    """``content`` with an id on every function call (copied, never edited in place: the
    model's response object may be reused, e.g. by a scripted model)."""
    parts = content.parts or []
    if all(p.function_call is None or p.function_call.id for p in parts):
        return content
    fresh = [
        replaced(p, function_call=replaced(p.function_call, id=call_id(CLIENT_ID_PREFIX)))
        if p.function_call is not None and not p.function_call.id
        else p
        for p in parts
    ]
    return replaced(content, parts=fresh)
