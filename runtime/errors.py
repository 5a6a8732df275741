"""Exceptions the runtime raises on purpose, each with a message that says what to fix."""

from __future__ import annotations


class RuntimeFrameworkError(Exception):
    """Base of the runtime's own errors."""


class ScriptExhaustedError(RuntimeFrameworkError):
    """A :class:`ScriptedLlm` was called more often than its script has responses."""


class MissingStateKeyError(RuntimeFrameworkError, KeyError):
    """An instruction template names a state key the session does not have."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class AgentNotFoundError(RuntimeFrameworkError, LookupError):
    """A transfer or lookup named an agent that is not in the tree."""


class ModelNotFoundError(RuntimeFrameworkError, ValueError):
    """A model string matched no known model class."""


class CallbackError(RuntimeFrameworkError):
    """A callback raised; the run stopped.

    ``callback_name`` and ``hook`` say which one, ``trace_id`` (hex) finds the run's spans, and
    the original exception is ``__cause__``.
    """

    def __init__(
        self, message: str, *, callback_name: str, hook: str, agent_name: str, trace_id: str
    ) -> None:
        super().__init__(message)
        self.callback_name = callback_name
        self.hook = hook
        self.agent_name = agent_name
        self.trace_id = trace_id


class ModelCallError(RuntimeFrameworkError):
    """A model call failed after every retry; ``status`` is the HTTP status when known."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class LlmCallsLimitExceededError(RuntimeFrameworkError):
    """An invocation made more model calls than ``RunConfig.max_llm_calls`` allows."""
