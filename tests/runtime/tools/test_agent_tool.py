"""AgentTool runs its agent with the invocation's runner (InvocationContext.nested_run)."""

from __future__ import annotations

import pytest
from google.genai import types

from runtime import Agent, AgentTool, InMemoryRunner, ScriptedLlm, ToolContext
from tests.runtime.safety.conftest import invocation


async def test_outside_a_runner_it_says_so() -> None:
    tool = AgentTool(Agent(name="helper", model=ScriptedLlm(responses=["hi"])))
    context = ToolContext(invocation(), function_call_id="call-1")
    assert context._invocation_context.nested_run is None
    with pytest.raises(RuntimeError, match="AgentTool 'helper' runs inside a Runner"):
        await tool.run_async(args={"request": "hello"}, tool_context=context)


def test_the_runner_runs_it_with_its_own_service_identity() -> None:
    seen: list[str] = []

    def whoami(tool_context: ToolContext) -> dict[str, str]:
        """Who the tool acts as."""
        seen.append(tool_context.agent_principal.id)
        return {"id": tool_context.agent_principal.id}

    helper = Agent(
        name="helper",
        model=ScriptedLlm(responses=[types.FunctionCall(name="whoami", args={}), "done"]),
        tools=[whoami],
    )
    root = Agent(
        name="root",
        model=ScriptedLlm(
            responses=[types.FunctionCall(name="helper", args={"request": "go"}), "ok"]
        ),
        tools=[AgentTool(helper)],
    )
    runner = InMemoryRunner(root, service_identity="svc-7")
    session = runner.session_service.create_session(app_name="InMemoryRunner", user_id="u")
    message = types.Content(role="user", parts=[types.Part(text="start")])
    events = list(runner.run(user_id="u", session_id=session.id, new_message=message))
    assert seen == ["svc-7"]
    assert events[-1].text == "ok"
