"""An agent's ``code_executor=``: the code in a model's answer is run, its result added, and
the model asked again (ADK's code-execution processors, for executors that run code here)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from google.genai import types

from runtime.agents._llm_flow import base_attributes, capture_content
from runtime.code_executors.base_code_executor import BaseCodeExecutor, execute_recorded
from runtime.code_executors.code_execution_utils import CodeExecutionResult, CodeExecutionUtils
from runtime.events.event import Event
from runtime.models.llm_request import LlmRequest
from runtime.telemetry.attributes import AgentDash, GenAI, Operation, StepKind
from runtime.telemetry.tracing import start_span
from runtime.tools.identity import AGENT

if TYPE_CHECKING:
    from runtime.agents.llm_agent import LlmAgent
    from runtime.contexts.invocation_context import InvocationContext

SPAN_TOOL_NAME = "code_execution"
INSTRUCTION = (
    "You can run Python 3 (the standard library only; no network, no files but your own, "
    "each block starting afresh). To run code, write one block fenced like this:\n"
    "{start}print(2 + 2){end}\n"
    "What it prints comes back to you; then answer from it. Print every result you need."
)


def prepare_request(executor: BaseCodeExecutor, request: LlmRequest) -> None:
    """Tell the model how to run code, and give it earlier code and results as text."""
    start = executor.code_block_delimiters[0] if executor.code_block_delimiters else ("", "")
    request.append_instructions([INSTRUCTION.format(start=start[0], end=start[1])])
    contents = []
    for content in request.contents:
        parts = content.parts or []
        if any(p.executable_code or p.code_execution_result for p in parts):
            content = copy.deepcopy(content)  # the session's events stay as they were
            CodeExecutionUtils.convert_code_execution_parts(
                content, start, executor.execution_result_delimiters
            )
        contents.append(content)
    request.contents = contents


def code_of(executor: BaseCodeExecutor, model_event: Event) -> tuple[Event, str] | None:
    """The model's event cut after its first code block, and that code; None without code."""
    if model_event.content is None or model_event.partial:
        return None
    content = copy.deepcopy(model_event.content)
    code = CodeExecutionUtils.extract_code_and_truncate_content(
        content, executor.code_block_delimiters
    )
    if not code:
        return None
    return model_event.model_copy(update={"content": content}), code


async def run_code(
    agent: LlmAgent, ctx: InvocationContext, executor: BaseCodeExecutor, code: str
) -> tuple[Event, CodeExecutionResult]:
    """Run ``code`` in a span of its own; the event with its result (the model reads it)."""
    attributes = {
        **base_attributes(ctx),
        GenAI.OPERATION_NAME: Operation.EXECUTE_TOOL,
        GenAI.TOOL_NAME: SPAN_TOOL_NAME,
        GenAI.TOOL_TYPE: "code_executor",
        AgentDash.SPAN_KIND: StepKind.TOOL,
        AgentDash.TOOL_IDENTITY: AGENT,  # the model's code runs as the agent, never the user
        AgentDash.TOOL_PRINCIPAL: ctx.service_identity,
    }
    with start_span(f"execute_code {agent.name}", attributes) as span:
        capture = capture_content(ctx)
        result = await execute_recorded(executor, ctx, code, span, capture=capture)
    part = CodeExecutionUtils.build_code_execution_result_part(result)
    event = Event(
        invocation_id=ctx.invocation_id,
        author=agent.name,
        branch=ctx.branch,
        content=types.Content(role="model", parts=[part]),
    )
    return event, result
