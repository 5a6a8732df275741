"""Code execution in the ADK's shape: an agent's ``code_executor=`` runs the Python its model
writes, and :class:`CodeExecutionTool` offers the same as a tool. The only executor runs code
in a sandbox (:mod:`runtime.code_executors.sandbox`); there is no unsandboxed one."""

from runtime.code_executors.base_code_executor import BaseCodeExecutor
from runtime.code_executors.code_execution_tool import CodeExecutionTool
from runtime.code_executors.code_execution_utils import (
    CodeExecutionInput,
    CodeExecutionResult,
    CodeExecutionUtils,
    File,
)
from runtime.code_executors.sandbox import (
    SandboxLimits,
    SandboxOutcome,
    SandboxUnavailableError,
    sandbox_check,
    sandbox_run,
)
from runtime.code_executors.sandboxed_code_executor import SandboxedCodeExecutor

__all__ = [
    "BaseCodeExecutor",
    "CodeExecutionInput",
    "CodeExecutionResult",
    "CodeExecutionTool",
    "CodeExecutionUtils",
    "File",
    "SandboxLimits",
    "SandboxOutcome",
    "SandboxUnavailableError",
    "SandboxedCodeExecutor",
    "sandbox_check",
    "sandbox_run",
]
