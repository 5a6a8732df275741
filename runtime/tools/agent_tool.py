"""An agent used as a tool by another agent."""

from __future__ import annotations

from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from google.genai import types

from runtime.events.event import Event
from runtime.sessions.in_memory_session_service import InMemorySessionService
from runtime.sessions.state import State
from runtime.tools.base_tool import BaseTool
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION, ToolConfirmation

if TYPE_CHECKING:
    from runtime.agents.base_agent import BaseAgent
    from runtime.tools.tool_context import ToolContext


class AgentTool(BaseTool):
    """Calls ``agent`` with the model's ``request`` text and returns the agent's final text.

    The agent runs in a fresh, private session that starts with a copy of the caller's state
    (``temp:`` keys excluded); state it writes flows back into the caller's state. It runs
    for the same user and with the same service identity, run by the invocation's runner
    (``InvocationContext.nested_run``; ``RuntimeError`` when no runner runs the call). Its
    spans nest under the tool's span. ``skip_summarization=True`` makes its answer the
    caller's final response.

    When a tool of the agent asks for a confirmation, the call asks for it in turn (the
    hint says which agent and tool asked) and the caller's run pauses; the person's answer
    resumes the agent where it stopped, in whichever process picks the run up.
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
        parent = tool_context._invocation_context
        if parent.nested_run is None:
            raise RuntimeError(
                f"AgentTool {self.name!r} runs inside a Runner's invocation (none runs it here)"
            )
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True
        answer = tool_context.tool_confirmation
        paused = answer._paused_agent if answer is not None else None
        if answer is not None and paused is not None:
            try:
                earlier, message = _resumption(paused, answer)
            except (ValueError, TypeError) as exc:
                return {"error": f"agent {self.agent.name!r} could not be resumed: {exc}"}
        else:
            request = args.get("request")
            if not isinstance(request, str) or not request:
                return {"error": f"Tool {self.name} needs a non-empty 'request' string."}
            earlier = []
            message = types.Content(role="user", parts=[types.Part(text=request)])
        sessions = InMemorySessionService()
        state = {
            k: v
            for k, v in tool_context.state.to_dict().items()
            if not k.startswith(State.TEMP_PREFIX)
        }
        session = sessions.create_session(
            app_name=self.agent.name, user_id=parent.user_id, state=state
        )
        for event in earlier:
            # The caller's state already holds what these events wrote, and maybe newer values.
            quiet = event.actions.model_copy(update={"state_delta": {}})
            sessions.append_event(session, event.model_copy(update={"actions": quiet}))
        text = ""
        asked: list[types.FunctionCall] = []
        async with aclosing(
            parent.nested_run(
                agent=self.agent,
                app_name=self.agent.name,
                session_service=sessions,
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
                asked.extend(_confirmation_requests(event))
        if asked:
            stored = sessions.get_session(
                app_name=self.agent.name, user_id=parent.user_id, session_id=session.id
            )
            assert stored is not None  # created above, never deleted
            return self._ask(tool_context, asked, stored.events)
        return text

    def _ask(
        self, tool_context: ToolContext, asked: list[types.FunctionCall], events: list[Event]
    ) -> dict[str, Any]:
        """Pass the agent's confirmation requests on as this call's own: the first request's
        hint and payload are what a person sees and edits, and their answer goes to every
        request the agent made (the others keep their own payloads). The agent's session is
        kept with the request, so the answer resumes the agent where it stopped."""
        requests = [_asked_of(call) for call in asked]
        first = requests[0]
        where = f"asked by agent {self.agent.name} before {first['tool']}"
        hint = f"{first['hint']} ({where})" if first["hint"] else f"Confirm: {where}."
        if len(requests) > 1:
            hint += f" The answer also goes to {len(requests) - 1} more request(s) of the agent."
        tool_context.request_confirmation(hint=hint, payload=first["payload"])
        assert tool_context.function_call_id is not None  # request_confirmation checked it
        confirmation = tool_context.actions.requested_tool_confirmations[
            tool_context.function_call_id
        ]
        confirmation._paused_agent = {
            "agent": self.agent.name,
            "requests": [{"id": r["id"], "payload": r["payload"]} for r in requests],
            "events": [e.model_dump(mode="json", exclude_none=True) for e in events],
        }
        return {"status": f"waiting for a person to confirm ({where})"}


def _confirmation_requests(event: Event) -> list[types.FunctionCall]:
    """The ``adk_request_confirmation`` calls the runtime made in ``event``."""
    waiting = event.long_running_tool_ids or set()
    return [
        call
        for call in event.get_function_calls()
        if call.name == REQUEST_CONFIRMATION_FUNCTION and call.id in waiting
    ]


def _asked_of(call: types.FunctionCall) -> dict[str, Any]:
    args = call.args or {}
    original = args.get("originalFunctionCall")
    asked = args.get("toolConfirmation")
    original = original if isinstance(original, dict) else {}
    asked = asked if isinstance(asked, dict) else {}
    return {
        "id": call.id,
        "tool": str(original.get("name") or "a tool"),
        "hint": str(asked.get("hint") or ""),
        "payload": asked.get("payload"),
    }


def _resumption(
    paused: dict[str, Any], answer: ToolConfirmation
) -> tuple[list[Event], types.Content]:
    """The paused agent's events, and the message that answers its requests with
    ``answer`` (the first request gets the person's payload, the others their own)."""
    events = [Event.model_validate(data) for data in paused["events"]]
    parts = []
    for index, request in enumerate(paused["requests"]):
        payload = answer.payload if index == 0 else request.get("payload")
        reply = types.FunctionResponse(
            id=str(request["id"]),
            name=REQUEST_CONFIRMATION_FUNCTION,
            response={"confirmed": answer.confirmed, "payload": payload},
        )
        parts.append(types.Part(function_response=reply))
    if not parts:
        raise ValueError("no request to answer")
    return events, types.Content(role="user", parts=parts)
