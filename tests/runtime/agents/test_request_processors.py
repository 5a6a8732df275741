"""The model request is built by ``LlmAgent.request_processors``, in order, as ADK's flows
build theirs: what each adds, the order of instructions and tools, and a subclass's own step
reaching the model (and the ``before_model`` callbacks) on every call."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime import Agent, InMemorySessionService, Runner, ScriptedLlm
from runtime.agents import request_processors
from runtime.agents.llm_agent import LlmAgent
from runtime.contexts.invocation_context import InvocationContext
from runtime.models.llm_request import LlmRequest


def user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def run(agent: Agent, text: str = "hello") -> None:
    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id="u")
    runner = Runner(agent=agent, app_name="app", session_service=service)
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message=user(text)):
        pass


def lookup(key: str) -> str:
    """Look a key up."""
    return key


def declared(request: LlmRequest) -> list[str]:
    return [
        d.name or ""
        for tool in request.config.tools or []
        for d in (getattr(tool, "function_declarations", None) or [])
    ]


async def test_the_default_processors_build_instruction_identity_transfer_tools_and_contents() -> (
    None
):
    assert [p.__name__ for p in LlmAgent.request_processors] == [
        "basic", "instructions", "identity", "tools", "agent_transfer", "contents",
        "code_execution",
    ]  # fmt: skip
    llm = ScriptedLlm(responses=["done"])
    helper = Agent(name="helper", model=ScriptedLlm(responses=[]), description="helps")
    agent = Agent(
        name="root",
        model=llm,
        instruction="Be brief.",
        description="the front desk",
        tools=[lookup],
        sub_agents=[helper],
        generate_content_config=types.GenerateContentConfig(temperature=0.25),
    )
    await run(agent)
    request = llm.requests[0]
    paragraphs = str(request.config.system_instruction).split("\n\n")
    assert paragraphs[0] == "Be brief."
    assert paragraphs[1] == (
        'You are an agent. Your internal name is "root". '
        'The description about you is "the front desk".'
    )
    assert "- helper: helps" in paragraphs[2]
    assert declared(request) == ["lookup", "transfer_to_agent"]  # its own first
    assert request.config.temperature == 0.25
    assert agent.generate_content_config is not None
    assert agent.generate_content_config.system_instruction is None  # a copy was edited
    assert [c.role for c in request.contents] == ["user"]


async def test_a_subclass_adds_its_own_step_seen_on_every_model_call() -> None:
    seen_by_callback: list[str] = []

    async def house_rules(agent: LlmAgent, ctx: InvocationContext, request: LlmRequest) -> None:
        request.append_instructions([f"House rules for {agent.name}: cite sources."])

    class CitingAgent(LlmAgent):
        request_processors = (*LlmAgent.request_processors, house_rules)

    def before_model(callback_context: object, llm_request: LlmRequest) -> None:
        seen_by_callback.append(str(llm_request.config.system_instruction))

    llm = ScriptedLlm(responses=[types.FunctionCall(name="lookup", args={"key": "k"}), "done"])
    agent = CitingAgent(name="citer", model=llm, tools=[lookup], before_model_callback=before_model)
    await run(agent)
    assert len(llm.requests) == 2
    for request in llm.requests:
        text = str(request.config.system_instruction)
        assert text.endswith("House rules for citer: cite sources.")
    assert all("House rules for citer" in s for s in seen_by_callback) and seen_by_callback
    # The plain agent is untouched by the subclass.
    assert house_rules not in LlmAgent.request_processors
    assert LlmAgent.request_processors == request_processors.REQUEST_PROCESSORS


def test_the_processors_are_the_classs_not_an_argument() -> None:
    with pytest.raises(TypeError, match="request_processors"):
        Agent(name="a", model=ScriptedLlm(responses=[]), request_processors=())
