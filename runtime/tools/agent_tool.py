"""An agent used as a tool by another agent."""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from google.genai import types

from runtime.sessions.in_memory_session_service import InMemorySessionService
from runtime.sessions.state import State
from runtime.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from runtime.agents.base_agent import BaseAgent
    from runtime.tools.tool_context import ToolContext


class AgentTool(BaseTool):
    """Calls ``agent`` with the model's ``request`` text and returns the agent's final text.

    The agent runs in a fresh, private session that starts with a copy of the caller's state
    (``temp:`` keys excluded); state it writes flows back into the caller's state. It runs
    for the same user and with the same service identity. Its spans nest under the tool's
    span. ``skip_summarization=True`` makes its answer the caller's
    final response.
    """

    tool_type = "agent"

    def __init__(self, agent: BaseAgent, *, skip_summarization: bool = False) -> None:
        if agent.parent_agent is not None:
            raise ValueError(
                f"agent {agent.name!r} already has a parent; an AgentTool needs a free agent"
            )
        super().__init__(name=agent.name, description=agent.description)
        self.agent = agent
        self.skip_summarization = skip_summarization

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters=types.Schema(
                type=types.Type.OBJECT,
                properties={"request": types.Schema(type=types.Type.STRING)},
                required=["request"],
            ),
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        from runtime.runners import Runner

        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        request = args.get("request")
        if not isinstance(request, str) or not request:
            return {"error": f"Tool {self.name} needs a non-empty 'request' string."}
        parent = tool_context._invocation_context
        sessions = InMemorySessionService()
        state = {
            k: v
            for k, v in tool_context.state.to_dict().items()
            if not k.startswith(State.TEMP_PREFIX)
        }
        session = sessions.create_session(
            app_name=self.agent.name, user_id=parent.user_id, state=state
        )
        runner = Runner(
            agent=self.agent,
            app_name=self.agent.name,
            session_service=sessions,
            artifact_service=parent.artifact_service,
            memory_service=parent.memory_service,
            switchboard=parent.switchboard,
            service_identity=parent.service_identity,
        )
        text = ""
        message = types.Content(role="user", parts=[types.Part(text=request)])
        async with aclosing(
            runner.run_async(
                user_id=parent.user_id,
                session_id=session.id,
                new_message=message,
                run_config=parent.run_config,
            )
        ) as events:
            async for event in events:
                if event.actions.state_delta:
                    tool_context.state.update(event.actions.state_delta)
                if event.content is not None and not event.partial and event.text:
                    text = event.text
        return text
