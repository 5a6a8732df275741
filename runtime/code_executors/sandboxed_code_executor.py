"""The code executor: each run in a new sandbox (:mod:`runtime.code_executors.sandbox`)."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from pydantic import Field, model_validator

from runtime.code_executors.base_code_executor import BaseCodeExecutor
from runtime.code_executors.code_execution_utils import CodeExecutionInput, CodeExecutionResult
from runtime.code_executors.sandbox import (
    SandboxLimits,
    sandbox_check,
    sandbox_containment,
    sandbox_run,
)
from runtime.telemetry.attributes import AgentDash

if TYPE_CHECKING:
    from runtime.contexts.invocation_context import InvocationContext

__all__ = ["SandboxedCodeExecutor"]


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
            usage=outcome.usage,
        )

    def span_attributes(self) -> dict[str, Any]:
        return {
            AgentDash.CODE_SANDBOX: sandbox_check(),
            AgentDash.CODE_CONTAINMENT: sandbox_containment(),
            AgentDash.CODE_LIMITS: json.dumps(dataclasses.asdict(self.limits)),
        }
