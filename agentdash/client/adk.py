"""A google-adk agent tree under AgentDash's controls: what it runs, described for
registration, and each of its callbacks wrapped so that a switch turned off in the dashboard
skips it at its next call — as AgentDash's own runtime does for local agents. A step hook of
AgentDash's own runs first before each agent and each model call, and last after each agent:
it applies the operators' pending state edits to the session's state
(``callback_context.state``, which ADK records in the step's event) and keeps the state to
report — so an edit is seen by the agent's next instruction, and the page shows the state a
turn ended with.

A skipped callback returns ``None``: ADK goes on as if it had done nothing (a ``before_*``
callback that would have answered or blocked does not). The wrapper reads the session from
the callback's context (``callback_context`` or ``tool_context``: ``.session.id``, ADK's own
session id, which ADK's spans carry as ``gen_ai.conversation.id``). It imports nothing of ADK:
it reads the agents' public attributes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

from agentdash.client.control import Controls

SLOTS = (
    ("before_agent_callback", "before_agent"),
    ("after_agent_callback", "after_agent"),
    ("before_model_callback", "before_model"),
    ("after_model_callback", "after_model"),
    ("before_tool_callback", "before_tool"),
    ("after_tool_callback", "after_tool"),
    ("on_model_error_callback", "on_model_error"),
    ("on_tool_error_callback", "on_tool_error"),
)
_WRAPPED = "__agentdash_controlled__"
_STEP = "__agentdash_step__"
STEP_SLOTS = ("before_agent_callback", "before_model_callback", "after_agent_callback")


def walk(agent: Any) -> Iterator[Any]:
    """``agent`` and every agent under it, depth first."""
    yield agent
    for sub in getattr(agent, "sub_agents", None) or []:
        yield from walk(sub)


def _callables(value: Any) -> list[Callable[..., Any]]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def callback_name(callback: Any) -> str:
    original = getattr(callback, "__wrapped__", callback)
    return str(getattr(original, "__name__", None) or type(original).__name__)


def describe(agent: Any) -> list[dict[str, Any]]:
    """The tree as the process registers it: ``[{name, callbacks: [{slot, name}], tools}]``."""
    found = []
    for node in walk(agent):
        callbacks = [
            {"slot": slot, "name": callback_name(callback)}
            for attribute, slot in SLOTS
            for callback in _callables(getattr(node, attribute, None))
            if not getattr(callback, _STEP, False)
        ]
        tools = [
            str(getattr(tool, "name", None) or getattr(tool, "__name__", None) or tool)
            for tool in getattr(node, "tools", None) or []
        ]
        found.append({"name": str(node.name), "callbacks": callbacks, "tools": tools})
    return found


def _session_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    for context in (kwargs.get("callback_context"), kwargs.get("tool_context"), *args):
        session = getattr(context, "session", None)
        found = getattr(session, "id", None)
        if isinstance(found, str) and found:
            return found
    return None


def _controlled(callback: Any, agent: str, controls: Controls) -> Any:
    if getattr(callback, _WRAPPED, False):
        return callback
    name = callback_name(callback)

    @functools.wraps(callback)
    def call(*args: Any, **kwargs: Any) -> Any:
        session = _session_of(args, kwargs)
        if not controls.enabled(agent=agent, callback=name, session=session):
            return None  # switched off: skipped, as if it had done nothing
        return callback(*args, **kwargs)  # a coroutine for an async callback: ADK awaits it

    setattr(call, _WRAPPED, True)
    return call


def _step_hook(controls: Controls) -> Any:
    def agentdash_step(*args: Any, **kwargs: Any) -> None:
        context = kwargs.get("callback_context") or (args[0] if args else None)
        session = _session_of(args, kwargs)
        state = getattr(context, "state", None)
        if session is None or state is None:
            return None
        current = state.to_dict() if callable(getattr(state, "to_dict", None)) else dict(state)
        controls.step(session=session, state=current, apply=state.__setitem__)
        return None  # never answers for the step: the agent goes on

    setattr(agentdash_step, _STEP, True)
    setattr(agentdash_step, _WRAPPED, True)
    return agentdash_step


def instrument(agent: Any, controls: Controls) -> None:
    """Wrap every callback of the tree and put the step hook first before each agent and
    model call (in place; a second call changes nothing)."""
    step = _step_hook(controls)
    for node in walk(agent):
        for attribute, _ in SLOTS:
            value = getattr(node, attribute, None)
            if value is None and attribute not in STEP_SLOTS:
                continue
            if not hasattr(node, attribute):
                continue  # an agent with no model calls has no before_model_callback
            found = [_controlled(c, str(node.name), controls) for c in _callables(value)]
            if attribute in STEP_SLOTS and not any(getattr(c, _STEP, False) for c in found):
                # before a step: first (the app's callbacks see the edits); after the agent:
                # last (the state it ends with is reported).
                found.insert(len(found) if attribute.startswith("after") else 0, step)
            if isinstance(value, (list, tuple)) or len(found) != 1:
                setattr(node, attribute, found)
            else:
                setattr(node, attribute, found[0])
