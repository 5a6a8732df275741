"""The code executor an agent takes as ``code_executor=``, in ADK's shape."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from runtime.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult

if TYPE_CHECKING:
    from runtime.agents.invocation_context import InvocationContext

__all__ = ["BaseCodeExecutor"]


class BaseCodeExecutor(BaseModel):
    """Runs the code a model writes. The agent's flow finds the first block delimited by one
    of ``code_block_delimiters`` in the model's answer, runs it, adds the result (between
    ``execution_result_delimiters`` when sent back as text) and asks the model again; after
    ``error_retry_attempts`` failed runs in a row within one invocation it stops running."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    optimize_data_file: bool = False
    stateful: bool = False
    error_retry_attempts: int = Field(default=2, ge=0)
    code_block_delimiters: list[tuple[str, str]] = Field(
        default_factory=lambda: [("```tool_code\n", "\n```"), ("```python\n", "\n```")]
    )
    execution_result_delimiters: tuple[str, str] = ("```tool_output\n", "\n```")

    def execute_code(
        self, invocation_context: InvocationContext | None, code_execution_input: CodeExecutionInput
    ) -> CodeExecutionResult:
        """Run the code (blocking). ADK's method; in an event loop use
        :meth:`execute_code_async`."""
        return asyncio.run(self.execute_code_async(invocation_context, code_execution_input))

    async def execute_code_async(
        self, invocation_context: InvocationContext | None, code_execution_input: CodeExecutionInput
    ) -> CodeExecutionResult:
        raise NotImplementedError

    def span_attributes(self) -> dict[str, Any]:
        """What a span of this executor's runs says about it (beyond the run's outcome)."""
        return {}
