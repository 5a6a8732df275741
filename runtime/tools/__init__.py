from runtime.tools.agent_tool import AgentTool
from runtime.tools.auth import AuthConfig
from runtime.tools.base_tool import BaseTool
from runtime.tools.function_tool import FunctionTool, LongRunningFunctionTool
from runtime.tools.identity import AGENT, USER, Principal, acts_as
from runtime.tools.tool_confirmation import REQUEST_CONFIRMATION_FUNCTION, ToolConfirmation
from runtime.tools.tool_context import ToolContext
from runtime.tools.transfer_to_agent_tool import transfer_to_agent

__all__ = [
    "AGENT",
    "REQUEST_CONFIRMATION_FUNCTION",
    "USER",
    "AgentTool",
    "AuthConfig",
    "BaseTool",
    "FunctionTool",
    "LongRunningFunctionTool",
    "Principal",
    "ToolConfirmation",
    "ToolContext",
    "acts_as",
    "transfer_to_agent",
]
