from runtime.tools.agent_tool import AgentTool
from runtime.tools.auth import AuthConfig
from runtime.tools.base_tool import BaseTool
from runtime.tools.function_tool import FunctionTool, LongRunningFunctionTool
from runtime.tools.tool_context import ToolContext
from runtime.tools.transfer_to_agent_tool import transfer_to_agent

__all__ = [
    "AgentTool",
    "AuthConfig",
    "BaseTool",
    "FunctionTool",
    "LongRunningFunctionTool",
    "ToolContext",
    "transfer_to_agent",
]
