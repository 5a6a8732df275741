"""any-agent's callback style: ``Callback`` classes sharing one ``Context`` per run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runtime.telemetry.tracing import LiveSpan


@dataclass
class Context:
    """Handed to every any-agent hook of one invocation.

    ``shared`` is one dict for the whole invocation, across callbacks and agents.
    ``current_span`` is the step's live span (the agent, model call or tool call the hook is
    about): read its ``attributes``, rewrite them with ``set_attribute``.
    """

    shared: dict[str, Any] = field(default_factory=dict)
    current_span: LiveSpan | None = None
    agent_name: str = ""
    invocation_id: str = ""
    trace_id: str = ""


class Callback:
    """Base of any-agent style callbacks: override any of the six hooks.

    Each hook gets the run's :class:`Context` and keyword arguments describing the step
    (``llm_request``, ``llm_response``, ``tool``, ``args``, ``tool_response``) and returns the
    context (returning ``None`` keeps it). Raising stops the run with a
    :class:`~runtime.errors.CallbackError`. Hooks may be ``async``.

    Hooks fire around the real step: ``before_llm_call``/``after_llm_call`` around the model
    call itself, ``before_tool_execution``/``after_tool_execution`` around the tool itself, so
    a step skipped by an ADK-style callback does not reach them.
    """

    def before_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context

    def before_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context

    def after_llm_call(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context

    def before_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context

    def after_tool_execution(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context

    def after_agent_invocation(self, context: Context, *args: Any, **kwargs: Any) -> Context:
        return context


HOOKS = (
    "before_agent_invocation",
    "before_llm_call",
    "after_llm_call",
    "before_tool_execution",
    "after_tool_execution",
    "after_agent_invocation",
)


def overrides(callback: Callback, hook: str) -> bool:
    """True when ``callback`` implements ``hook`` itself (base no-ops are not run or traced)."""
    return getattr(type(callback), hook, None) is not getattr(Callback, hook)
