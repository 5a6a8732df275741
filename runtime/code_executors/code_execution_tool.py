"""Code execution as a tool the model calls (``run_python(code)``), for models that call
functions rather than write fenced code; each call runs in a new sandbox, as the agent's
``code_executor=`` does, and its span carries the same attributes."""

from __future__ import annotations

from typing import Any

from google.genai import types
from opentelemetry import trace

from runtime.code_executors.base_code_executor import BaseCodeExecutor, execute_recorded
from runtime.code_executors.sandboxed_code_executor import SandboxedCodeExecutor
from runtime.tools.base_tool import BaseTool
from runtime.tools.tool_context import ToolContext

__all__ = ["CodeExecutionTool"]

DESCRIPTION = (
    "Runs Python 3 code and returns what it printed. The standard library only; no network, "
    "no files but its own, nothing kept between calls. Print every result you need."
)
MAX_CODE = 100_000


class CodeExecutionTool(BaseTool):
    """``CodeExecutionTool()`` in an agent's ``tools=``; ``executor`` sets the sandbox's
    limits (``SandboxedCodeExecutor(limits=SandboxLimits(...))``)."""

    tool_type = "code_executor"

    def __init__(
        self,
        executor: BaseCodeExecutor | None = None,
        *,
        name: str = "run_python",
        description: str = DESCRIPTION,
    ) -> None:
        super().__init__(name=name, description=description)
        self.executor = executor or SandboxedCodeExecutor()

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {
                    "code": {"type": "string", "description": "Python 3 source code to run."}
                },
                "required": ["code"],
            },
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return {"error": "the argument 'code' must be Python source code (a non-empty string)"}
        if len(code) > MAX_CODE:
            return {"error": f"the code is over {MAX_CODE:,} characters"}
        result = await execute_recorded(
            self.executor,
            tool_context._invocation_context,
            code,
            trace.get_current_span(),
            capture=tool_context._invocation_context.captures_content(),
        )
        found: dict[str, Any] = {
            "stdout": result.stdout,
            "stderr": result.stderr,
            "exit_code": result.exit_code,
        }
        if result.stopped_by:
            found["stopped_by"] = result.stopped_by
        return found
