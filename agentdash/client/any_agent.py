"""An any-agent app under AgentDash's controls: its ``AgentConfig.callbacks`` (any-agent's
``Callback`` objects, its default ones included) described for registration, each replaced by
one that skips its hooks while switched off in the dashboard — as AgentDash's runtime does for
its own any-agent-style callbacks.

A skipped hook hands the ``Context`` on unchanged. any-agent has no session of its own: a run
is a trace, which ingest makes a session of (``trace:<trace id>``), so a per-session switch
is one run's; a global switch is every run's. ``any_agent`` is imported only when a config is
connected (the app has it).

**Breakpoints**: a callback of AgentDash's own, last in the list (so the step's span is open
and shows on the timeline while it waits), pauses before a tool call or a model call where
the dashboard's breakpoints say, and waits for the answer holding the agent's thread (most of
any-agent's frameworks call callbacks synchronously). **Resume** goes on — with the arguments
as edited where the framework hands the call's arguments to callbacks as a mutable request
(``tinyagent``: ``{"name", "arguments"}``; elsewhere the edit cannot reach the tool and the
call goes on as asked); **Step** pauses again before the next step. any-agent cannot refuse
one tool call: **Deny** and **Cancel run** end the run with :class:`OperatorStopped`, an
``AgentCancel`` the app's caller catches.
"""

from __future__ import annotations

import json
from typing import Any

from agentdash.client.control import Controls
from agentdash.client.pauses import Pause, pause_id

MODEL_STEP = "agentdash_model_call"
_OURS = "__agentdash_pauses__"

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
        if not getattr(c, _OURS, False)
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
        c if getattr(c, "inner", None) is not None or getattr(c, _OURS, False) else Controlled(c)
        for c in config.callbacks
        if not getattr(c, _OURS, False)
    ] + [_pauses_callback(Callback, agent, controls)]


def _span_attributes(context: Any) -> dict[str, Any]:
    span = getattr(context, "current_span", None)
    found = getattr(span, "attributes", None)
    return dict(found) if found else {}


def _pauses_callback(base: type, agent: str, controls: Controls) -> Any:
    """The callback that pauses the run at the dashboard's breakpoints (module docstring)."""

    class AgentDashPauses(base):
        def _pause(self, context: Any, tool: str | None, args: dict[str, Any]) -> dict[str, Any]:
            session = _session_of(context)
            if session is None:
                return {}
            reason = controls.pause_reason(session=session, agent=agent, tool=tool)
            if not reason:
                return {}
            call_id = str(_span_attributes(context).get("gen_ai.tool.call.id") or "")
            payload: dict[str, Any] = {"breakpoint": reason}
            if tool is not None:
                payload["args"] = args
            asked = Pause(
                id=pause_id("breakpoint", call_id or None), session=session, kind="breakpoint",
                agent=agent, tool=tool or MODEL_STEP, call_id=call_id, args=args, hint=reason,
                payload=payload,
            )  # fmt: skip
            answer = controls.pauses.wait_here(asked)
            if answer["decision"] in ("deny", "cancel"):
                raise _stopped()(answer)
            if answer["decision"] == "step":
                controls.pauses.step_next(session)
            return answer

        def before_tool_execution(self, context: Any, *args: Any, **kwargs: Any) -> Any:
            request = args[0] if args and isinstance(args[0], dict) else None
            attributes = _span_attributes(context)
            tool = str(attributes.get("gen_ai.tool.name") or (request or {}).get("name") or "")
            asked = (request or {}).get("arguments")
            if not isinstance(asked, dict):
                asked = _json_object(attributes.get("gen_ai.tool.args"))
            answer = self._pause(context, tool, dict(asked))
            edited = (answer.get("payload") or {}).get("args") if answer else None
            if request is not None and isinstance(edited, dict):
                request["arguments"] = edited  # what the tool receives (tinyagent)
            return context

        def before_llm_call(self, context: Any, *args: Any, **kwargs: Any) -> Any:
            self._pause(context, None, {})
            return context

    setattr(AgentDashPauses, _OURS, True)
    return AgentDashPauses()


def _json_object(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


_STOPPED: list[type] = []


def _stopped() -> type:
    """:class:`OperatorStopped`, made once any-agent is importable."""
    if not _STOPPED:
        from any_agent import AgentCancel  # type: ignore[import-not-found]

        class OperatorStopped(AgentCancel):
            """An operator denied or cancelled a paused step: the run ends here."""

            def __init__(self, answer: dict[str, Any]) -> None:
                why = f": {answer['reason']}" if answer.get("reason") else ""
                super().__init__(f"an operator stopped the run at a breakpoint{why}")
                self.answer = answer

        _STOPPED.append(OperatorStopped)
    return _STOPPED[0]
