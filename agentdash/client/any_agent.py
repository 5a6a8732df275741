"""An any-agent app under AgentDash's controls: its ``AgentConfig.callbacks`` (any-agent's
``Callback`` objects, its default ones included) described for registration, each replaced by
one that skips its hooks while switched off in the dashboard — as AgentDash's runtime does for
its own any-agent-style callbacks.

A skipped hook hands the ``Context`` on unchanged. any-agent has no session of its own: a run
is a trace, which ingest makes a session of (``trace:<trace id>``), so a per-session switch
is one run's; a global switch is every run's. ``any_agent`` is imported only when a config is
connected (the app has it).
"""

from __future__ import annotations

from typing import Any

from agentdash.client.control import Controls

HOOKS = (
    "before_agent_invocation",
    "before_llm_call",
    "before_tool_execution",
    "after_agent_invocation",
    "after_llm_call",
    "after_tool_execution",
)


def is_config(value: Any) -> bool:
    """Whether ``value`` looks like an any-agent ``AgentConfig`` (a model id, callbacks)."""
    return hasattr(value, "model_id") and isinstance(getattr(value, "callbacks", None), list)


def agent_name(config: Any) -> str:
    return str(getattr(config, "name", None) or "any_agent")


def describe(config: Any) -> list[dict[str, Any]]:
    """The config as the process registers it: one agent, its callbacks (slot
    ``callbacks``, by class name) and its tools."""
    callbacks = [
        {"slot": "callbacks", "name": type(getattr(c, "inner", c)).__name__}
        for c in config.callbacks
    ]
    tools = [
        str(getattr(tool, "__name__", None) or getattr(tool, "name", None) or tool)
        for tool in getattr(config, "tools", None) or []
    ]
    return [{"name": agent_name(config), "callbacks": callbacks, "tools": tools}]


def _session_of(context: Any) -> str | None:
    span = getattr(context, "current_span", None)
    get_context = getattr(span, "get_span_context", None)
    if get_context is None:
        return None
    trace_id = getattr(get_context(), "trace_id", 0)
    return f"trace:{trace_id:032x}" if trace_id else None


def instrument(config: Any, controls: Controls) -> None:
    """Replace each callback of ``config`` by one under the switches (a second call changes
    nothing)."""
    from any_agent.callbacks.base import Callback  # type: ignore[import-not-found]

    agent = agent_name(config)

    class Controlled(Callback):
        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.name = type(inner).__name__

        def _hook(self, hook: str, context: Any, *args: Any, **kwargs: Any) -> Any:
            session = _session_of(context)
            if not controls.enabled(agent=agent, callback=self.name, session=session):
                return context  # switched off: skipped, the context handed on unchanged
            return getattr(self.inner, hook)(context, *args, **kwargs)

    for hook in HOOKS:

        def make(name: str) -> Any:
            def call(self: Any, context: Any, *args: Any, **kwargs: Any) -> Any:
                return self._hook(name, context, *args, **kwargs)

            call.__name__ = name
            return call

        setattr(Controlled, hook, make(hook))
    config.callbacks = [
        c if getattr(c, "inner", None) is not None else Controlled(c) for c in config.callbacks
    ]
