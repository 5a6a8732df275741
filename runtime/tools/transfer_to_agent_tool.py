"""The tool an LLM agent uses to hand the conversation to another agent."""

from __future__ import annotations

from typing import Any

from runtime.tools.function_tool import FunctionTool
from runtime.tools.tool_context import ToolContext


def transfer_to_agent(agent_name: str, tool_context: ToolContext) -> dict[str, Any] | None:
    """Transfer the question to another agent that is better suited to answer it.

    Args:
      agent_name: the name of the agent to transfer to.
    """
    agent = tool_context._invocation_context.agent
    targets = getattr(agent, "transfer_targets", None)
    allowed = [a.name for a in targets()] if callable(targets) else None
    if allowed is not None and agent_name not in allowed:
        return {
            "error": f"there is no agent {agent_name!r} to transfer to; "
            f"choose one of: {', '.join(sorted(allowed)) or '(none)'}"
        }
    tool_context.actions.transfer_to_agent = agent_name
    return None


class TransferToAgentTool(FunctionTool):
    def __init__(self) -> None:
        super().__init__(transfer_to_agent)
