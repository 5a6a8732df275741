"""The code executor an agent takes as ``code_executor=``, in ADK's shape."""

from __future__ import annotations

import abc
import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Status, StatusCode
from pydantic import BaseModel, ConfigDict, Field

from runtime.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult
from runtime.telemetry.attributes import AgentDash

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext

__all__ = ["BaseCodeExecutor", "execute_recorded"]


class BaseCodeExecutor(BaseModel, abc.ABC):
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

    @abc.abstractmethod
    async def execute_code_async(
        self, invocation_context: InvocationContext | None, code_execution_input: CodeExecutionInput
    ) -> CodeExecutionResult:
        """Run the code without blocking the event loop; what it printed and how it ended."""

    def span_attributes(self) -> dict[str, Any]:
        """What a span of this executor's runs says about it (beyond the run's outcome)."""
        return {}


async def execute_recorded(
    executor: BaseCodeExecutor,
    ctx: InvocationContext | None,
    code: str,
    span: Any,
    *,
    capture: bool,
) -> CodeExecutionResult:
    """Run ``code`` and say on ``span`` how it went: the executor's own attributes, the exit
    status, what stopped it, what it used and how long it took always; the code and what it
    printed only when message content is recorded. A run that failed or was stopped is an
    error."""
    for key, value in executor.span_attributes().items():
        span.set_attribute(key, value)
    started = time.monotonic()
    result = await executor.execute_code_async(ctx, CodeExecutionInput(code=code))
    found: dict[str, Any] = {
        AgentDash.CODE_LANGUAGE: "python",
        AgentDash.CODE_EXIT_CODE: result.exit_code,
        AgentDash.CODE_DURATION_MS: round((time.monotonic() - started) * 1000, 1),
    }
    if result.stopped_by:
        found[AgentDash.CODE_STOPPED_BY] = result.stopped_by
    if result.usage:
        found[AgentDash.CODE_USAGE] = json.dumps(result.usage, sort_keys=True)
    if capture:
        found[AgentDash.CODE_INPUT] = code
        found[AgentDash.CODE_STDOUT] = result.stdout
        found[AgentDash.CODE_STDERR] = result.stderr
    for key, value in found.items():
        span.set_attribute(key, value)
    if result.stopped_by or result.exit_code:
        if result.stopped_by:
            message = f"the sandbox stopped the code ({result.stopped_by})"
        else:
            message = f"the code exited with status {result.exit_code}"
        span.set_attribute(AgentDash.ERROR_MESSAGE, message)
        span.set_status(Status(StatusCode.ERROR, message))
    return result
