"""The code executor: each run in a new sandbox (:mod:`runtime.code_executors.sandbox`)."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from opentelemetry.trace import Status, StatusCode
from pydantic import Field, model_validator

from runtime.code_executors.base_code_executor import BaseCodeExecutor
from runtime.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult
from runtime.code_executors.sandbox import SandboxLimits, sandbox_check, sandbox_run
from runtime.telemetry.attributes import AgentDash

if TYPE_CHECKING:
    from runtime.agents.invocation_context import InvocationContext

__all__ = ["SandboxedCodeExecutor", "code_span_attributes", "mark_code_failure"]


class SandboxedCodeExecutor(BaseCodeExecutor):
    """Runs Python in a hermetic sandbox: no network, no project files or secrets, a fresh
    working directory, the :class:`SandboxLimits` given. Where the sandbox cannot be had it
    refuses to run (``SandboxUnavailableError``), never running the code some other way.

    Each run starts from nothing: ``stateful`` and ``optimize_data_file`` are refused, and
    files are neither passed in nor brought back (as ADK's local executor)."""

    limits: SandboxLimits = Field(default_factory=SandboxLimits)

    @model_validator(mode="after")
    def _stateless(self) -> SandboxedCodeExecutor:
        if self.stateful or self.optimize_data_file:
            raise ValueError("SandboxedCodeExecutor runs each block anew: not stateful, no data")
        return self

    def check(self) -> str:
        """The sandbox's version, after a probe run; raises when it cannot be had."""
        return sandbox_check()

    async def execute_code_async(
        self, invocation_context: InvocationContext | None, code_execution_input: CodeExecutionInput
    ) -> CodeExecutionResult:
        outcome = await sandbox_run(code_execution_input.code, self.limits)
        return CodeExecutionResult(
            stdout=outcome.stdout,
            stderr=outcome.stderr,
            exit_code=outcome.exit_code,
            stopped_by=outcome.stopped_by,
        )

    def span_attributes(self) -> dict[str, Any]:
        return {
            AgentDash.CODE_SANDBOX: sandbox_check(),
            AgentDash.CODE_LIMITS: json.dumps(dataclasses.asdict(self.limits)),
        }


def code_span_attributes(
    code: str, result: CodeExecutionResult, *, capture: bool, duration_ms: float
) -> dict[str, Any]:
    """A run's outcome on its span: always the exit status and what stopped it; the code and
    what it printed only when message content is recorded."""
    found: dict[str, Any] = {
        AgentDash.CODE_LANGUAGE: "python",
        AgentDash.CODE_EXIT_CODE: result.exit_code,
        AgentDash.CODE_DURATION_MS: round(duration_ms, 1),
    }
    if result.stopped_by:
        found[AgentDash.CODE_STOPPED_BY] = result.stopped_by
    if capture:
        found[AgentDash.CODE_INPUT] = code
        found[AgentDash.CODE_STDOUT] = result.stdout
        found[AgentDash.CODE_STDERR] = result.stderr
    return found


def mark_code_failure(span: Any, result: CodeExecutionResult) -> None:
    """A run that failed or was stopped is an error on its span, saying which."""
    if not (result.stopped_by or result.exit_code):
        return
    how = f"was stopped by the sandbox ({result.stopped_by})" if result.stopped_by else "failed"
    message = f"the code {how}, exit status {result.exit_code}"
    span.set_attribute(AgentDash.ERROR_MESSAGE, message)
    span.set_status(Status(StatusCode.ERROR, message))
