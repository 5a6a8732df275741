"""A google-adk agent tree under AgentDash's controls: what it runs, described for
registration, and each of its callbacks wrapped so that a switch turned off in the dashboard
skips it at its next call — as AgentDash's own runtime does for local agents. A step hook of
AgentDash's own runs first before each agent and each model call, and last after each agent:
it applies the operators' pending state edits to the session's state
(``callback_context.state``, which ADK records in the step's event) and keeps the state to
report — so an edit is seen by the agent's next instruction, and the page shows the state a
turn ended with.

Pauses (``agentdash.client.pauses``): a hook of AgentDash's own runs first before each tool
call and before each model call (after the step hook). At a breakpoint set in the
dashboard it waits for a person's answer — Resume (with the arguments as edited: what the
tool receives), Step (and pause before the next step), Deny (the model is told the call was
refused), Cancel run (the invocation ends) — and a call of a tool that requires ADK's tool
confirmation waits for Approve or Deny there, which the tool's confirmation gate then obeys
(``tool_context.tool_confirmation``). A tool that asks for confirmation itself
(``tool_context.request_confirmation``) is asked about after its call, and called again with
the answer (a hook first among the ``after_tool`` callbacks). Each callback's outcome —
``raised``, or ``overridden`` (it returned a value) — is kept for the breakpoints that pause
on it.

A skipped callback returns ``None``: ADK goes on as if it had done nothing (a ``before_*``
callback that would have answered or blocked does not). The wrapper reads the session from
the callback's context (``callback_context`` or ``tool_context``: ``.session.id``, ADK's own
session id, which ADK's spans carry as ``gen_ai.conversation.id``). It imports nothing of ADK:
it reads the agents' public attributes.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from agentdash.client.control import Controls
from agentdash.client.pauses import Pause, pause_id

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
_STEP = "__agentdash_step__"  # a hook of AgentDash's own: not the app's, never registered
MODEL_STEP = "agentdash_model_call"
"""The tool name a model call's pause shows (as a local run's model breakpoint does)."""


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

    def ended(session: str | None, outcome: str) -> None:
        if session:
            controls.pauses.outcome(session=session, callback=name, outcome=outcome)

    async def awaited(result: Any, session: str | None) -> Any:
        try:
            found = await result
        except Exception:
            ended(session, "raised")
            raise
        if found is not None:
            ended(session, "overridden")
        return found

    @functools.wraps(callback)
    def call(*args: Any, **kwargs: Any) -> Any:
        session = _session_of(args, kwargs)
        if not controls.enabled(agent=agent, callback=name, session=session):
            return None  # switched off: skipped, as if it had done nothing
        try:
            result = callback(*args, **kwargs)
        except Exception:
            ended(session, "raised")
            raise
        if inspect.isawaitable(result):
            return awaited(result, session)  # ADK awaits it
        if result is not None:
            ended(session, "overridden")
        return result

    setattr(call, _WRAPPED, True)
    return call


def _hook(function: Any) -> Any:
    setattr(function, _STEP, True)
    setattr(function, _WRAPPED, True)
    return function


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

    return _hook(agentdash_step)


def _end_invocation(context: Any) -> None:
    invocation = getattr(context, "_invocation_context", None)
    if invocation is not None:
        invocation.end_invocation = True


def _refusal(answer: dict[str, Any], context: Any) -> dict[str, Any] | None:
    """A tool breakpoint's answer as the call's response: ``None`` to go on."""
    why = f": {answer['reason']}" if answer.get("reason") else ""
    if answer["decision"] == "cancel":
        _end_invocation(context)
        return {"error": f"An operator cancelled the run at a breakpoint{why}"}
    if answer["decision"] == "deny":
        return {"error": f"An operator refused this call at a breakpoint{why}"}
    return None


async def _requires_confirmation(tool: Any, args: dict[str, Any], context: Any) -> bool:
    """Whether ADK's confirmation gate holds this call (``check_require_confirmation`` of
    ADK 2, the ``require_confirmation`` flag or predicate of ADK 1's ``FunctionTool``)."""
    check = getattr(tool, "check_require_confirmation", None)
    if callable(check):
        found = check(args, context)
    else:
        found = getattr(tool, "_require_confirmation", False)
        if callable(found):
            found = found(**args)
    if inspect.isawaitable(found):
        found = await found
    return found is True


def _confirmation(answer: dict[str, Any], hint: str = "") -> Any:
    from google.adk.tools.tool_confirmation import ToolConfirmation  # type: ignore[import-untyped]

    confirmed = answer["decision"] in ("approve", "step")
    return ToolConfirmation(hint=hint, confirmed=confirmed, payload=answer.get("payload"))


def _tool_pause(controls: Controls) -> Any:
    async def agentdash_tool_pause(tool: Any, args: dict[str, Any], tool_context: Any) -> Any:
        session = _session_of((), {"tool_context": tool_context})
        if session is None:
            return None
        agent = str(getattr(tool_context, "agent_name", "") or "")
        name = str(getattr(tool, "name", "") or "")
        call_id = str(getattr(tool_context, "function_call_id", "") or "")
        reason = controls.pause_reason(session=session, agent=agent, tool=name)
        if reason:
            asked = Pause(
                id=pause_id("breakpoint", call_id), session=session, kind="breakpoint",
                agent=agent, tool=name, call_id=call_id, args=dict(args), hint=reason,
                payload={"breakpoint": reason, "args": dict(args)},
            )  # fmt: skip
            answer = await controls.pauses.wait(asked)
            refused = _refusal(answer, tool_context)
            if refused is not None:
                return refused
            edited = (answer.get("payload") or {}).get("args")
            if isinstance(edited, dict):  # what the tool receives: ADK passes this dict on
                args.clear()
                args.update(edited)
            if answer["decision"] == "step":
                controls.pauses.step_next(session)
        if (
            controls.confirmations
            and getattr(tool_context, "tool_confirmation", None) is None
            and await _requires_confirmation(tool, args, tool_context)
        ):
            asked = Pause(
                id=pause_id("confirmation", call_id), session=session, kind="confirmation",
                agent=agent, tool=name, call_id=call_id, args=dict(args),
                hint=f"Approve or deny the call of {name}.",
            )  # fmt: skip
            tool_context.tool_confirmation = _confirmation(await controls.pauses.wait(asked))
        return None

    return _hook(agentdash_tool_pause)


def _asked_after(controls: Controls) -> Any:
    async def agentdash_confirm(
        tool: Any, args: dict[str, Any], tool_context: Any, tool_response: Any
    ) -> Any:
        call_id = getattr(tool_context, "function_call_id", None)
        actions = getattr(tool_context, "actions", None)
        requested = getattr(actions, "requested_tool_confirmations", None)
        asked = requested.get(call_id) if isinstance(requested, dict) and call_id else None
        session = _session_of((), {"tool_context": tool_context})
        if asked is None or session is None or not controls.confirmations:
            return None
        hint = str(getattr(asked, "hint", "") or "")
        pause = Pause(
            id=pause_id("confirmation", str(call_id)), session=session, kind="confirmation",
            agent=str(getattr(tool_context, "agent_name", "") or ""),
            tool=str(getattr(tool, "name", "") or ""), call_id=str(call_id), args=dict(args),
            hint=hint, payload=getattr(asked, "payload", None),
        )  # fmt: skip
        answer = await controls.pauses.wait(pause)
        assert isinstance(requested, dict)
        requested.pop(call_id, None)  # answered here: ADK asks nobody else
        tool_context.tool_confirmation = _confirmation(answer, hint)
        found = tool.run_async(args=args, tool_context=tool_context)
        found = await found if inspect.isawaitable(found) else found
        return {"result": None} if found is None else found

    return _hook(agentdash_confirm)


def _model_pause(controls: Controls) -> Any:
    async def agentdash_model_pause(callback_context: Any, llm_request: Any) -> Any:
        session = _session_of((), {"callback_context": callback_context})
        if session is None:
            return None
        agent = str(getattr(callback_context, "agent_name", "") or "")
        reason = controls.pause_reason(session=session, agent=agent, tool=None)
        if not reason:
            return None
        asked = Pause(
            id=pause_id("breakpoint", None), session=session, kind="breakpoint", agent=agent,
            tool=MODEL_STEP, hint=reason, payload={"breakpoint": reason},
        )  # fmt: skip
        answer = await controls.pauses.wait(asked)
        if answer["decision"] == "step":
            controls.pauses.step_next(session)
        if answer["decision"] in ("approve", "step"):
            return None
        _end_invocation(callback_context)  # a model call refused: the invocation ends
        from google.adk.models.llm_response import LlmResponse  # type: ignore[import-untyped]
        from google.genai import types

        text = f"Stopped by an operator at a breakpoint ({answer['decision']})."
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=text)]))

    return _hook(agentdash_model_pause)


def instrument(agent: Any, controls: Controls) -> None:
    """Wrap every callback of the tree and put AgentDash's hooks in place: the step hook
    first before each agent and model call and last after each agent (the app's callbacks
    see the edits; the state an agent ends with is reported), the pause hooks first before
    each tool call and after the step hook before each model call, the confirmation hook
    first after each tool call. In place; a second call changes nothing."""
    step = _step_hook(controls)
    end = -1
    hooks: dict[str, list[tuple[int, Any]]] = {
        "before_agent_callback": [(0, step)],
        "after_agent_callback": [(end, step)],
        "before_model_callback": [(0, step), (1, _model_pause(controls))],
        "before_tool_callback": [(0, _tool_pause(controls))],
        "after_tool_callback": [(0, _asked_after(controls))],
    }
    for node in walk(agent):
        for attribute, _ in SLOTS:
            if not hasattr(node, attribute):
                continue  # an agent with no model calls has no before_model_callback
            value = getattr(node, attribute)
            ours = hooks.get(attribute, [])
            if value is None and not ours:
                continue
            found = [
                _controlled(c, str(node.name), controls)
                for c in _callables(value)
                if not getattr(c, _STEP, False)  # placed afresh below
            ]
            for position, hook in ours:
                found.insert(len(found) if position == end else position, hook)
            if isinstance(value, (list, tuple)) or len(found) != 1:
                setattr(node, attribute, found)
            else:
                setattr(node, attribute, found[0])
