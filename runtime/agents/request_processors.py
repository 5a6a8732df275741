"""The model request, built by a list of processors, as ADK's flows build it.

Each processor adds one thing to the :class:`LlmRequest` an :class:`LlmAgent` is about to
send: the model and its config, the instruction, the agent's identity, its tools, the agents it
may hand over to, the conversation, what its code executor needs. An agent runs
``LlmAgent.request_processors`` in order before every model call (and before its
``before_model`` callbacks, which see the finished request). A subclass adds a step by
extending the tuple::

    class CitingAgent(LlmAgent):
        request_processors = (*LlmAgent.request_processors, cite_sources)

The order is part of the contract: instructions are paragraphs in the order added, tools are
declared in the order added (the agent's own, then ``transfer_to_agent``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from google.genai import types

from runtime.agents import _code_execution
from runtime.agents._contents import build_contents
from runtime.contexts.invocation_context import InvocationContext
from runtime.models.llm_request import LlmRequest
from runtime.tools.transfer_to_agent_tool import TransferToAgentTool

if TYPE_CHECKING:
    from runtime.agents.llm_agent import LlmAgent

RequestProcessor = Callable[["LlmAgent", InvocationContext, LlmRequest], Awaitable[None]]
"""``async (agent, ctx, request) -> None``: edits ``request`` in place."""


async def basic(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """The model's name, a copy of the agent's generation config, the output schema."""
    request.model = agent.canonical_model.model
    if agent.generate_content_config is not None:
        request.config = agent.generate_content_config.model_copy(deep=True)
    else:
        request.config = types.GenerateContentConfig()
    if agent.output_schema is not None:
        request.config.response_schema = agent.output_schema
        request.config.response_mime_type = "application/json"


async def instructions(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """The agent's instruction: templated from state, or its provider's text; the version
    its provider named, if any, kept on the request for the model call's span."""
    text, version = await agent.instruction_and_version(ctx)
    request.append_instructions([text])
    request.instruction_version = version


async def identity(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """Who the agent is: its name and description, as ADK words it."""
    text = f'You are an agent. Your internal name is "{agent.name}".'
    if agent.description:
        text += f' The description about you is "{agent.description}".'
    request.append_instructions([text])


async def tools(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """The agent's tools, declared to the model and kept by name."""
    request.append_tools(list(agent.tools))


async def agent_transfer(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """The agents it may hand over to, listed, and the ``transfer_to_agent`` tool."""
    targets = agent.transfer_targets()
    if not targets:
        return
    lines = [f"- {a.name}: {a.description or '(no description)'}" for a in targets]
    request.append_instructions(
        [
            "You can hand the conversation to another agent when it is better suited, by "
            "calling transfer_to_agent with its name. Agents you can transfer to:\n"
            + "\n".join(lines)
        ]
    )
    request.append_tools([TransferToAgentTool()])


async def contents(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """The conversation the model sees (``include_contents``: all of it, or this turn)."""
    request.contents = build_contents(ctx, include_contents=agent.include_contents)


async def code_execution(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
    """What the agent's code executor needs (its instructions; the built-in tool)."""
    if agent.code_executor is not None:
        _code_execution.prepare_request(agent.code_executor, request)


REQUEST_PROCESSORS: tuple[RequestProcessor, ...] = (
    basic,
    instructions,
    identity,
    tools,
    agent_transfer,
    contents,
    code_execution,
)
"""What every :class:`LlmAgent` runs, in order, unless a subclass says otherwise."""
