"""Whom a tool acts as (ADK's safety guide, "Identity"): ``@acts_as``, ``identity=`` on tools,
the principals a ``ToolContext`` names, and the identity and principal on every tool span,
in real runs with a scripted model."""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from runtime import (
    Agent,
    AgentTool,
    BaseTool,
    Event,
    FunctionTool,
    InMemoryRunner,
    LongRunningFunctionTool,
    ParallelAgent,
    Principal,
    Runner,
    ScriptedLlm,
    ToolContext,
    acts_as,
)
from runtime.code_executors import BaseCodeExecutor
from runtime.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult
from runtime.telemetry.attributes import AgentDash
from runtime.tools import AGENT, USER

SERVICE = "svc-reporting"
OWNER = "42"


def whoami(tool_context: ToolContext) -> dict[str, Any]:
    """Says whom it acts as."""
    return _seen(tool_context)


@acts_as("user")
def my_orders(tool_context: ToolContext) -> dict[str, Any]:
    """Lists the user's orders."""
    return _seen(tool_context)


def _seen(tool_context: ToolContext) -> dict[str, Any]:
    return {
        "identity": tool_context.identity,
        "principal": [tool_context.principal.kind, tool_context.principal.id],
        "user": [tool_context.user_principal.kind, tool_context.user_principal.id],
        "agent": [tool_context.agent_principal.kind, tool_context.agent_principal.id],
    }


def call(name: str, **args: Any) -> types.FunctionCall:
    return types.FunctionCall(id=f"call-{name}", name=name, args=args)


def run(agent: Any, text: str = "go", **runner_kwargs: Any) -> list[Event]:
    runner = InMemoryRunner(agent, app_name="app", **runner_kwargs)
    session = runner.session_service.create_session(app_name="app", user_id=OWNER)
    message = types.Content(role="user", parts=[types.Part(text=text)])
    return list(runner.run(user_id=OWNER, session_id=session.id, new_message=message))


def results(events: list[Event]) -> dict[str, dict[str, Any]]:
    return {
        p.function_response.name or "": dict(p.function_response.response or {})
        for e in events
        for p in (e.content.parts if e.content else None) or []
        if p.function_response
    }


def tool_spans(spans: InMemorySpanExporter) -> dict[str, dict[str, Any]]:
    return {
        s.name: dict(s.attributes or {})
        for s in spans.get_finished_spans()
        if (s.attributes or {}).get(AgentDash.SPAN_KIND) == "tool"
    }


# ── Declaring it ─────────────────────────────────────────────────────────────────────────


def test_a_plain_function_acts_as_the_agent_and_acts_as_user_makes_it_a_user_tool() -> None:
    assert FunctionTool(whoami).identity == AGENT == "agent"
    assert FunctionTool(my_orders).identity == USER == "user"
    assert my_orders.__name__ == "my_orders" and my_orders.__doc__ == "Lists the user's orders."


def test_identity_given_to_the_tool_wins_over_the_decorator() -> None:
    assert FunctionTool(my_orders, identity="agent").identity == "agent"
    assert FunctionTool(whoami, identity="user").identity == "user"
    assert LongRunningFunctionTool(my_orders).identity == "user"


def test_acts_as_agent_is_the_explicit_default() -> None:
    @acts_as("agent")
    def ping() -> str:
        return "pong"

    assert FunctionTool(ping).identity == "agent"


@pytest.mark.parametrize("kind", ["admin", "User", "", 1])
def test_a_bad_identity_is_refused_at_once(kind: Any) -> None:
    with pytest.raises(ValueError, match=rf"acts as 'agent' .* or 'user' .*, not {kind!r}"):
        acts_as(kind)
    with pytest.raises(ValueError, match=rf"not {kind!r}"):
        FunctionTool(whoami, identity=kind)
    with pytest.raises(ValueError, match=rf"not {kind!r}"):
        Principal(kind, "x")


def test_none_is_no_identity() -> None:
    with pytest.raises(ValueError, match="not None"):
        acts_as(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not None"):
        Principal(None, "x")  # type: ignore[arg-type]
    assert FunctionTool(my_orders, identity=None).identity == "user"  # None: the declared one


def test_acts_as_without_its_argument_says_how_to_write_it() -> None:
    with pytest.raises(ValueError, match=r'write @acts_as\("user"\)'):

        @acts_as  # type: ignore[arg-type]
        def lookup() -> None:
            pass


def test_base_tool_takes_and_checks_identity() -> None:
    class Lookup(BaseTool):
        async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
            return {}

    assert Lookup(name="lookup").identity == "agent"
    assert Lookup(name="lookup", identity="user").identity == "user"
    with pytest.raises(ValueError, match="not 'service'"):
        Lookup(name="lookup", identity="service")  # type: ignore[arg-type]


def test_principal_is_a_frozen_value() -> None:
    principal = Principal("user", "42")
    assert principal == Principal(USER, "42") and hash(principal) == hash(Principal("user", "42"))
    with pytest.raises(AttributeError):
        principal.id = "43"  # type: ignore[misc]


def test_the_runner_refuses_an_empty_service_identity() -> None:
    agent = Agent(name="a", model=ScriptedLlm(responses=["hi"]))
    with pytest.raises(ValueError, match="service_identity must be a non-empty string"):
        InMemoryRunner(agent, service_identity=" ")
    assert InMemoryRunner(agent).service_identity == "agentdash-agent"


# ── In a run ─────────────────────────────────────────────────────────────────────────────


def test_tools_see_their_principal_and_their_spans_record_it(
    spans: InMemorySpanExporter,
) -> None:
    model = ScriptedLlm(
        responses=[types.Content(role="model", parts=[
            types.Part(function_call=call("whoami")),
            types.Part(function_call=call("my_orders")),
        ]), "done"]
    )  # fmt: skip
    events = run(Agent(name="a", model=model, tools=[whoami, my_orders]), service_identity=SERVICE)

    found = results(events)
    assert found["whoami"] == {
        "identity": "agent",
        "principal": ["agent", SERVICE],
        "user": ["user", OWNER],
        "agent": ["agent", SERVICE],
    }
    assert found["my_orders"] == {
        "identity": "user",
        "principal": ["user", OWNER],
        "user": ["user", OWNER],
        "agent": ["agent", SERVICE],
    }
    attributes = tool_spans(spans)
    assert attributes["execute_tool whoami"][AgentDash.TOOL_IDENTITY] == "agent"
    assert attributes["execute_tool whoami"][AgentDash.TOOL_PRINCIPAL] == SERVICE
    assert attributes["execute_tool my_orders"][AgentDash.TOOL_IDENTITY] == "user"
    assert attributes["execute_tool my_orders"][AgentDash.TOOL_PRINCIPAL] == OWNER
    assert AgentDash.TOOL_IDENTITY == "agentdash.tool.identity"
    assert AgentDash.TOOL_PRINCIPAL == "agentdash.tool.principal"


def test_without_a_service_identity_the_agent_is_agentdash_agent(
    spans: InMemorySpanExporter,
) -> None:
    model = ScriptedLlm(responses=[call("whoami"), "done"])
    events = run(Agent(name="a", model=model, tools=[whoami]))
    assert results(events)["whoami"]["principal"] == ["agent", "agentdash-agent"]
    span = tool_spans(spans)["execute_tool whoami"]
    assert span[AgentDash.TOOL_PRINCIPAL] == "agentdash-agent"


def test_tool_callbacks_get_the_same_principal_as_the_tool() -> None:
    seen: list[tuple[str, Principal]] = []

    def before_tool(*, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext) -> None:
        seen.append(("before", tool_context.principal))

    def after_tool(
        *, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext, tool_response: Any
    ) -> None:
        seen.append(("after", tool_context.principal))

    model = ScriptedLlm(responses=[call("my_orders"), "done"])
    agent = Agent(
        name="a",
        model=model,
        tools=[my_orders],
        before_tool_callback=before_tool,
        after_tool_callback=after_tool,
    )
    run(agent, service_identity=SERVICE)
    assert seen == [("before", Principal("user", OWNER)), ("after", Principal("user", OWNER))]


def test_a_call_to_no_such_tool_is_recorded_as_the_agent(spans: InMemorySpanExporter) -> None:
    model = ScriptedLlm(responses=[call("nope"), "done"])
    run(Agent(name="a", model=model, tools=[my_orders]), service_identity=SERVICE)
    span = tool_spans(spans)["execute_tool nope"]
    assert span[AgentDash.TOOL_IDENTITY] == "agent"
    assert span[AgentDash.TOOL_PRINCIPAL] == SERVICE
    assert "no tool named 'nope'" in span[AgentDash.ERROR_MESSAGE]


def test_a_context_built_without_a_tool_names_the_agent() -> None:
    class Probe(BaseTool):
        async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
            bare = ToolContext(tool_context._invocation_context)
            return {"bare": [bare.identity, bare.principal.kind, bare.principal.id]}

    model = ScriptedLlm(responses=[call("probe"), "done"])
    events = run(
        Agent(name="a", model=model, tools=[Probe(name="probe", identity="user")]),
        service_identity=SERVICE,
    )
    assert results(events)["probe"] == {"bare": ["agent", "agent", SERVICE]}


def test_the_service_identity_carries_into_parallel_branches_and_agent_tools(
    spans: InMemorySpanExporter,
) -> None:
    inner = Agent(
        name="inner",
        model=ScriptedLlm(responses=[call("whoami"), "inner done"]),
        tools=[whoami],
    )
    branch = Agent(
        name="branch",
        model=ScriptedLlm(responses=[call("my_orders"), "branch done"]),
        tools=[my_orders],
    )
    outer = Agent(
        name="outer",
        model=ScriptedLlm(responses=[call("inner", request="who?"), "outer done"]),
        tools=[AgentTool(inner)],
    )
    run(ParallelAgent(name="fan", sub_agents=[outer, branch]), service_identity=SERVICE)

    attributes = tool_spans(spans)
    assert attributes["execute_tool inner"][AgentDash.TOOL_PRINCIPAL] == SERVICE  # agent tool
    assert attributes["execute_tool whoami"][AgentDash.TOOL_PRINCIPAL] == SERVICE  # inside it
    assert attributes["execute_tool my_orders"][AgentDash.TOOL_PRINCIPAL] == OWNER


class _Prints(BaseCodeExecutor):
    async def execute_code_async(
        self, invocation_context: Any, code_execution_input: CodeExecutionInput
    ) -> CodeExecutionResult:
        return CodeExecutionResult(stdout="4\n")


def test_the_code_execution_span_acts_as_the_agent(spans: InMemorySpanExporter) -> None:
    model = ScriptedLlm(responses=["```python\nprint(2 + 2)\n```", "It is 4."])
    run(Agent(name="calc", model=model, code_executor=_Prints()), service_identity=SERVICE)
    span = tool_spans(spans)["execute_code calc"]
    assert span[AgentDash.TOOL_IDENTITY] == "agent"
    assert span[AgentDash.TOOL_PRINCIPAL] == SERVICE


def test_a_runner_built_directly_passes_its_identity_too() -> None:
    from runtime import InMemorySessionService

    service = InMemorySessionService()
    session = service.create_session(app_name="app", user_id=OWNER)
    model = ScriptedLlm(responses=[call("whoami"), "done"])
    runner = Runner(
        agent=Agent(name="a", model=model, tools=[whoami]),
        app_name="app",
        session_service=service,
        service_identity=SERVICE,
    )
    message = types.Content(role="user", parts=[types.Part(text="go")])
    events = list(runner.run(user_id=OWNER, session_id=session.id, new_message=message))
    assert results(events)["whoami"]["principal"] == ["agent", SERVICE]
